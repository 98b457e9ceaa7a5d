// What worktree preparation records per job (src/git/bootstrap.ts, src/branches/stack.ts): whether
// spawn_agent skipped the bootstrap, the report of its last run, the base it asked for and what
// its branch was made from. A table of its own (job_setup), beside the job row. These are its
// shapes; its statements are on the layer (src/store/sql/setup.ts).

/** One setup command's run in a worktree bootstrap (src/git/bootstrap.ts). */
export interface SetupCommandReport {
  command: string;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  duration_ms: number;
  /** The last 4,000 characters of its stdout and stderr together. */
  output: string;
}

export interface BootstrapReport {
  status: 'ok' | 'failed' | 'skipped';
  /** Where the commands came from: the config, a lockfile, or nowhere. */
  source: 'config' | 'detected' | 'none';
  /** Why it was skipped, or what detection found but could not run. */
  note?: string;
  copied: string[];
  commands: SetupCommandReport[];
  duration_ms: number;
}

export interface StackRecord {
  branch: string;
  jobId?: string;
  merged: string[];
}
