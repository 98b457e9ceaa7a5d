// Worktree bootstrap (docs/worktrees.md): a new worktree has the tracked files only, so before
// its agent starts the hub copies the untracked files the person names (`worktree.copy`, e.g.
// `.env*`) from the main checkout and runs the setup commands (`worktree.setup`, or, when none
// are configured, the install command its lockfile implies), each with a timeout. The report
// goes on the job (get_agent `setup`, `overseer status`); a failed command fails the job with
// failure_class setup_failed and the command's output.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { gitOut, outLines } from './exec.js';
import { matchGlobs } from './glob.js';
import { which } from '../launch/which.js';
import type { BootstrapReport, SetupCommandReport } from '../store/setup.js';
import type { SetupView } from '../contract/agentSummary.js';

export interface BootstrapConfig {
  /** Globs (relative to the repository root) of untracked or ignored files copied into each new worktree. */
  copy: string[];
  /** Shell commands run in each new worktree, in order, before its agent starts. */
  setup: string[];
  /** Longest one setup command may run. */
  setupTimeoutS: number;
  /** With no `setup` configured: run the install command the worktree's lockfile implies. */
  detect: boolean;
}

// The report of a run is what the store keeps (src/store/setup.ts).
export type { BootstrapReport, SetupCommandReport };

/** Lockfile → install command, first match wins (a repo with several package managers' files uses the most specific). */
const DETECT: readonly { file: string; bin: string; command: string }[] = [
  { file: 'pnpm-lock.yaml', bin: 'pnpm', command: 'pnpm install --frozen-lockfile' },
  { file: 'yarn.lock', bin: 'yarn', command: 'yarn install --immutable' },
  { file: 'package-lock.json', bin: 'npm', command: 'npm ci' },
  { file: 'uv.lock', bin: 'uv', command: 'uv sync' },
  { file: 'requirements.txt', bin: 'pip', command: 'pip install -r requirements.txt' },
  { file: 'Cargo.lock', bin: 'cargo', command: 'cargo fetch' },
  { file: 'go.sum', bin: 'go', command: 'go mod download' },
];

/** The install command a worktree's lockfile implies, or why there is none to run. Pure but for the PATH lookup `has`. */
export function detectSetup(files: ReadonlySet<string>, has: (bin: string) => boolean): { command?: string; note?: string } {
  const hit = DETECT.find((d) => files.has(d.file));
  if (!hit) return {};
  if (!has(hit.bin)) return { note: `found ${hit.file} but ${hit.bin} is not on PATH: \`${hit.command}\` was not run` };
  return { command: hit.command };
}

/** Overseer's own folders are never copied (state, tokens, other worktrees). */
const NEVER = /^(?:\.overseer|\.overseer-worktrees)(?:\/|$)/;

/** Untracked and ignored paths of the main checkout that match `patterns` (ignored folders whole, as git lists them). */
async function copyCandidates(repoRoot: string, patterns: readonly string[]): Promise<string[]> {
  if (patterns.length === 0) return [];
  const g = (args: string[]): Promise<string> => gitOut(args, { cwd: repoRoot });
  const untracked = outLines(await g(['ls-files', '--others', '--exclude-standard']));
  const ignored = outLines(await g(['ls-files', '--others', '--ignored', '--exclude-standard', '--directory']));
  const all = [...new Set([...untracked, ...ignored])].filter((p) => !NEVER.test(p));
  return matchGlobs(all, patterns).map((p) => p.replace(/\/$/, ''));
}

/** Run one setup command in its own process group; on timeout the whole group is killed. */
export function runSetupCommand(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<SetupCommandReport> {
  const started = Date.now();
  return new Promise((resolve) => {
    let out = '';
    let timedOut = false;
    const keep = (b: Buffer): void => { out = (out + b.toString('utf8')).slice(-4000); };
    const child = spawn('sh', ['-c', command], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const kill = (sig: NodeJS.Signals): void => { try { process.kill(-child.pid!, sig); } catch { /* gone */ } };
    let hard: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      hard = setTimeout(() => kill('SIGKILL'), 2000);
    }, timeoutMs);
    const done = (code: number | null, signal: string | null): void => {
      clearTimeout(timer);
      if (hard) clearTimeout(hard);
      // What it left running in its group does not outlive the setup step.
      kill('SIGKILL');
      resolve({ command, exit_code: code, signal, timed_out: timedOut, duration_ms: Date.now() - started, output: out });
    };
    child.on('error', (err) => { out += String(err.message); done(null, null); });
    child.on('close', (code, signal) => done(code, signal));
  });
}

/**
 * Copy the configured files into the new worktree and run its setup commands. Never throws for
 * a failed command: the report says `failed` and carries its output (the runner fails the job).
 */
export async function bootstrapWorktree(o: {
  repoRoot: string;
  worktree: string;
  config: BootstrapConfig;
  env: NodeJS.ProcessEnv;
  skip?: boolean;
}): Promise<BootstrapReport> {
  const started = Date.now();
  const { config } = o;
  if (o.skip) return { status: 'skipped', source: 'none', note: 'bootstrap: false', copied: [], commands: [], duration_ms: 0 };
  const copied: string[] = [];
  for (const rel of await copyCandidates(o.repoRoot, config.copy)) {
    const from = join(o.repoRoot, rel);
    const to = join(o.worktree, rel);
    if (existsSync(to) || (!existsSync(from) && !isLink(from))) continue;
    mkdirSync(dirname(to), { recursive: true });
    cpSync(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
    copied.push(rel);
  }
  let source: BootstrapReport['source'] = 'none';
  let note: string | undefined;
  let commands = config.setup;
  if (commands.length > 0) source = 'config';
  else if (config.detect) {
    const files = new Set(outLines(await gitOut(['ls-files', '--', ...DETECT.map((d) => d.file)], { cwd: o.worktree })));
    const d = detectSetup(files, (bin) => which(bin, o.env.PATH ?? '') !== undefined);
    note = d.note;
    if (d.command) { commands = [d.command]; source = 'detected'; }
  }
  const reports: SetupCommandReport[] = [];
  for (const c of commands) {
    const r = await runSetupCommand(c, o.worktree, o.env, config.setupTimeoutS * 1000);
    reports.push(r);
    if (r.exit_code !== 0) {
      return { status: 'failed', source, ...(note ? { note } : {}), copied, commands: reports, duration_ms: Date.now() - started };
    }
  }
  return { status: 'ok', source, ...(note ? { note } : {}), copied, commands: reports, duration_ms: Date.now() - started };
}

function isLink(p: string): boolean {
  try { return lstatSync(p).isSymbolicLink(); } catch { return false; }
}

/** The job's error for a failed bootstrap: which command, how it ended, its output. */
export function setupFailure(r: BootstrapReport): string {
  const bad = r.commands[r.commands.length - 1];
  if (!bad) return 'worktree setup failed';
  const how = bad.timed_out ? `timed out after ${Math.round(bad.duration_ms / 1000)} s` : bad.exit_code === null ? `ended by ${bad.signal ?? 'an error'}` : `exited ${bad.exit_code}`;
  return `worktree setup command \`${bad.command}\` ${how}${bad.output.trim() ? `:\n${bad.output.trim().slice(-2000)}` : ''}`;
}

/** The bootstrap as get_agent shows it: what ran, how long, without the commands' output unless one failed. */
export function setupView(r: BootstrapReport | undefined): SetupView {
  if (!r) return { status: 'pending' };
  return {
    status: r.status, source: r.source, ...(r.note ? { note: r.note } : {}), copied: r.copied,
    commands: r.commands.map((c) => ({ command: c.command, exit_code: c.exit_code, timed_out: c.timed_out, duration_ms: c.duration_ms, ...(c.exit_code !== 0 ? { output: c.output.slice(-1000) } : {}) })),
    duration_ms: r.duration_ms,
  };
}
