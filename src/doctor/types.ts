// Shapes shared by the `overseer doctor` checks. Every check is a plain function of DoctorDeps,
// so tests drive it with an injected environment, exec and fetch instead of the real machine.

import type { HubInfo } from '../hubfiles/hubLock.js';
import type { HealthInfo } from '../http/api.js';
import type { Config } from '../config.js';
import type { CommandOutcome } from '../launch/codex/commands.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface Check {
  name: string;
  status: CheckStatus;
  /** What was found, in plain words. Never contains a secret. */
  detail: string;
  /** Exactly what to do about a warn/fail. */
  fix?: string;
}

/** The outcome of running a command: it ran and exited, could not start, or ran out of time. */
export type ExecResult =
  | { kind: 'exited'; code: number | null; signal: string | null; stdout: string; stderr: string }
  | { kind: 'spawn_error'; code?: string; message: string }
  | { kind: 'timeout'; stdout: string; stderr: string };

/** Runs `bin args` with stdin ignored; must never throw. */
export type ExecFn = (bin: string, args: readonly string[], opts: { timeoutMs: number; env: NodeJS.ProcessEnv; cwd: string }) => Promise<ExecResult>;

/** The subset of the global `fetch` the endpoint checks use (so `globalThis.fetch` fits). */
export type FetchFn = (
  url: string,
  init: { method: string; signal: AbortSignal; redirect: 'manual' },
) => Promise<{ status: number; body?: { cancel(): Promise<void> } | null }>;

export interface DoctorDeps {
  env: NodeJS.ProcessEnv;
  cwd: string;
  exec: ExecFn;
  fetch: FetchFn;
  /** The user's home directory (for ~/.claude and ~/.codex). */
  homedir: string;
  platform: NodeJS.Platform;
  /** `process.versions.node`, e.g. "20.19.0". */
  nodeVersion: string;
  /** overseer-mcp's package root (for the bundled node_modules/.bin/claude|codex), if known. */
  packageRoot: string | undefined;
  pidAlive: (pid: number) => boolean;
  /** Limit for each `--version` / `gh auth status` run. */
  execTimeoutMs: number;
  /** Limit for each endpoint request. */
  fetchTimeoutMs: number;
  /** Can children be confined here (default: a real bubblewrap probe)? */
  probeConfine?: () => { ok: true; bwrap: string } | { ok: false; reason: string };
  /** Find a program on PATH (default: the real lookup). */
  which?: (name: string) => string | undefined;
  /** Run one shell command in a Codex child (default: the real run, src/doctor/codexShellRun.ts). */
  runCodexShell?: (i: CodexShellInputs, deps: Pick<DoctorDeps, 'env' | 'cwd' | 'packageRoot' | 'probeConfine'>) => Promise<CodexShellFacts>;
  /** Ask a running hub for its session counts (default: GET /health with the lead token). */
  hubHealth?: (info: HubInfo, token: string | undefined, timeoutMs: number) => Promise<HealthInfo | undefined>;
}

// The `codex shell` check (codexShell.ts judges the facts codexShellRun.ts gathers).

export type CodexSandbox = 'read-only' | 'workspace-write' | 'danger-full-access';

export interface CodexShellFacts {
  bin: string;
  sandbox: CodexSandbox;
  /** Ran inside Overseer's jail (bubblewrap), as the hub's children do; else why not. */
  confined: boolean;
  codexHome: string;
  /** CODEX_HOME is under the temporary directory ($TMPDIR, else /tmp): Codex makes no helper links there. */
  codexHomeInTemp: boolean;
  /** Overseer made the helper links (<CODEX_HOME>/bin); `native` is what they point at. */
  helperLinks: boolean;
  native?: string;
  /** What happened: the command ran, it did not start, Codex ran no command, no result in time, codex did not start. */
  outcome: 'ran' | 'not_started' | 'no_command' | 'timeout' | 'spawn_error';
  command?: CommandOutcome;
  /** The command's result text as the model got it (first lines). */
  output?: string;
  /** The probe's file is in the work tree with the text it wrote. */
  fileWritten: boolean;
  /** Codex's own words when it ran no command (turn.failed, stderr) or did not start. */
  error?: string;
  timeoutMs: number;
}

/** What the `codex shell` probe runs: which codex, the hub's configuration and state directory. */
export interface CodexShellInputs {
  bin: string;
  config: Config | undefined;
  /** The hub's state directory. */
  home: string;
  timeoutMs?: number;
}
