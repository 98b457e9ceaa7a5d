// Shapes shared by the `overseer doctor` checks. Every check is a plain function of DoctorDeps,
// so tests drive it with an injected environment, exec and fetch instead of the real machine.

import type { HubInfo } from '../hubfiles/hubLock.js';
import type { HealthInfo } from '../http/api.js';
import type { CodexShellFacts } from './codexShell.js';
import type { CodexShellInputs } from './codexShellRun.js';

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
