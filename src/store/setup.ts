// What worktree preparation records per job (src/git/bootstrap.ts, src/branches/stack.ts): whether
// spawn_agent skipped the bootstrap, the report of its last run, the base it asked for and what
// its branch was made from. A table of its own, beside the job row. Statements are prepared
// once per store (get_agent and status read a row per worktree job). The asynchronous layer has
// it too (src/store/sql/setup.ts: the worktree's preparation, the runner's start and prompt and
// get_agent read there); what is left here (mixed period: until steps 7 and 8 of
// docs/store-plan.md) is spawn's skip and base inside JobService.create's and createSync's
// transactions, the bootstrap report beside the job's update (src/branches/jobWorktrees.ts) and
// `overseer status`.
import type Database from 'better-sqlite3';
import type { Db } from './db.js';

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

type Column = 'skip' | 'report_json' | 'base' | 'stack_json';

export class SetupStore {
  private readonly stmts = new Map<string, Database.Statement>();

  constructor(private readonly db: Db) {}

  private stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) { s = this.db.prepare(sql); this.stmts.set(sql, s); }
    return s;
  }

  /** Set one column of the job's row, creating the row. */
  private put(jobId: string, column: Column, value: string | number, now: number): void {
    this.stmt(`INSERT INTO job_setup (job_id, ${column}, updated_at) VALUES (?, ?, ?) ON CONFLICT(job_id) DO UPDATE SET ${column} = excluded.${column}, updated_at = excluded.updated_at`).run(jobId, value, now);
  }

  private read(jobId: string, column: Column): string | number | null {
    return (this.stmt(`SELECT ${column} AS v FROM job_setup WHERE job_id = ?`).get(jobId) as { v: string | number | null } | undefined)?.v ?? null;
  }

  /** Record at spawn that the job's worktree is not bootstrapped. */
  skip(jobId: string, now: number): void {
    this.put(jobId, 'skip', 1, now);
  }

  record(jobId: string, report: BootstrapReport, now: number): void {
    this.put(jobId, 'report_json', JSON.stringify(report), now);
  }

  report(jobId: string): BootstrapReport | undefined {
    const r = this.read(jobId, 'report_json');
    return typeof r === 'string' ? JSON.parse(r) as BootstrapReport : undefined;
  }

  /** Record at spawn what the job's worktree starts from (`job:<id>` or `branch:<name>`). */
  setBase(jobId: string, base: string, now: number): void {
    this.put(jobId, 'base', base, now);
  }

  stack(jobId: string): StackRecord | undefined {
    const r = this.read(jobId, 'stack_json');
    return typeof r === 'string' ? JSON.parse(r) as StackRecord : undefined;
  }
}
