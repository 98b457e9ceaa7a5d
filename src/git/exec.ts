// The one way src/ runs git: `git(args, {cwd, env, input, allowFail, timeout})` resolves with
// stdout, stderr and the exit code, or rejects with a GitError that names the command, the
// directory and git's stderr. `gitSync` is the same for the few synchronous callers (config,
// init, the confinement plan). Every git child gets `gitEnv()`: never prompts, never opens an
// editor, English messages, and no GIT_DIR-style variable pointing it at another repository.
//
// On node:child_process, not execa or simple-git: every hub runs a few git commands at start and
// one per edit (the conflict guard), and execa is 130 modules and ~6 MB resident
// (docs/performance-hub-memory.md); simple-git, used only through `.raw`, waited 50 ms after any
// command that printed nothing and needed its safety guards switched off (docs/decisions.md).
// Also here: real-path, output-line and error-text helpers, and the per-repository mutex.
// Nothing here knows about jobs.
import { spawn, spawnSync } from 'node:child_process';
import { realpath } from 'node:fs/promises';

/** Variables that would point git at some other repository than the directory we pass. */
const REPO_OVERRIDES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_COMMON_DIR',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_PREFIX',
];

/** Environment for every git (and gh) child: the caller's environment minus repository
 * overrides (set when running inside a git hook), with prompts and editors disabled and
 * untranslated messages so error texts can be recognised. */
export function gitEnv(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined && !REPO_OVERRIDES.includes(k)) env[k] = v;
  }
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_EDITOR = 'true';
  env.GIT_SEQUENCE_EDITOR = 'true';
  env.GIT_MERGE_AUTOEDIT = 'no';
  env.GCM_INTERACTIVE = 'never';
  env.GH_PROMPT_DISABLED = '1';
  env.LC_ALL = 'C';
  return env;
}

export interface GitOptions {
  /** The directory git runs in. */
  cwd: string;
  /** The environment before `gitEnv()` is applied (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Written to git's stdin (else stdin is closed). */
  input?: string;
  /** Resolve with the exit code instead of rejecting when git exits non-zero. */
  allowFail?: boolean;
  /** Kill git after this many ms (default 120 s). */
  timeout?: number;
}

export interface GitResult {
  /** As git printed it (with its final newline). */
  stdout: string;
  stderr: string;
  /** Exit code; -1 when git was killed by a signal. */
  code: number;
}

/** Default longest run of one git command. */
export const GIT_TIMEOUT_MS = 120_000;

/** A git command that failed: which one, where, its exit code (or signal) and what it printed. */
export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly cwd: string,
    readonly code: number,
    readonly signal: string | null,
    readonly stderr: string,
    readonly stdout: string,
    timeoutMs: number,
  ) {
    const why = signal
      ? `was killed by ${signal}${signal === 'SIGTERM' ? ` (timed out after ${Math.round(timeoutMs / 1000)} s?)` : ''}`
      : `failed with exit code ${code}`;
    const detail = [stderr.trim(), stdout.trim()].filter(Boolean).join('\n\n');
    super(`Command ${why}: git ${args.join(' ')} (in ${cwd})${detail ? `\n\n${detail}` : ''}`);
    this.name = 'GitError';
  }
}

/** Run one git command. Rejects with a GitError when git exits non-zero (unless `allowFail`),
 * is killed, or cannot start (git missing, cwd gone: the spawn error, with the command named). */
export function git(args: readonly string[], o: GitOptions): Promise<GitResult> {
  const timeout = o.timeout ?? GIT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: o.cwd, env: gitEnv(o.env), stdio: [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => err.push(c));
    if (o.input !== undefined) {
      child.stdin!.on('error', () => undefined); // git may exit before reading it all
      child.stdin!.end(o.input);
    }
    child.once('error', (e: NodeJS.ErrnoException) => {
      reject(new GitError(args, o.cwd, -1, null, `${e.code === 'ENOENT' ? 'git (or the directory) was not found: ' : ''}${e.message}`, '', timeout));
    });
    child.once('close', (code, signal) => {
      const r = { stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), code: code ?? -1 };
      if (code === 0 || (o.allowFail && signal === null)) return resolve(r);
      reject(new GitError(args, o.cwd, r.code, signal, r.stderr, r.stdout, timeout));
    });
  });
}

/** stdout of one git command without its final newline; rejects like `git`. */
export async function gitOut(args: readonly string[], o: GitOptions): Promise<string> {
  return (await git(args, { ...o, allowFail: false })).stdout.replace(/\r?\n$/, '');
}

/** `git`, synchronously, for callers that cannot wait (configuration, `overseer init`). */
export function gitSync(args: readonly string[], o: GitOptions): GitResult {
  const timeout = o.timeout ?? GIT_TIMEOUT_MS;
  const r = spawnSync('git', args, { cwd: o.cwd, env: gitEnv(o.env), encoding: 'utf8', input: o.input, stdio: [o.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], timeout });
  if (r.error) {
    const e = r.error as NodeJS.ErrnoException;
    if (e.code !== 'ETIMEDOUT') throw new GitError(args, o.cwd, -1, null, `${e.code === 'ENOENT' ? 'git (or the directory) was not found: ' : ''}${e.message}`, '', timeout);
  }
  const res = { stdout: r.stdout ?? '', stderr: r.stderr ?? '', code: r.status ?? -1 };
  if (r.status === 0 || (o.allowFail && r.signal === null && r.status !== null)) return res;
  throw new GitError(args, o.cwd, res.code, r.signal, res.stderr, res.stdout, timeout);
}

/** Real path of `p`, or undefined when it does not exist (or cannot be read). */
export async function realPathOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await realpath(p);
  } catch {
    return undefined;
  }
}

/** Message text of any thrown value (a GitError's holds git's stderr). */
export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** First meaningful line of git/gh error output, without the "fatal: "/"error: " prefix. */
export function firstLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !/^(hint|Preparing worktree|To |remote: *$)/i.test(l));
  const pick = lines.find((l) => /^(fatal|error):/i.test(l)) ?? lines[0] ?? text.trim();
  return pick.replace(/^(fatal|error):\s*/i, '');
}

/** Lines of command output, trimmed, empty ones dropped. */
export function outLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

/** Tail of the queue of work per key, for `withLock`. */
const lockTails = new Map<string, Promise<unknown>>();

/** Run fn after every earlier fn with the same key has settled (an in-process mutex). Used to
 * serialise worktree bookkeeping per repository: concurrent `git worktree add/remove` in one
 * repository race inside git ("failed to read .git/worktrees/<x>/commondir"). */
export async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = lockTails.get(key) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.then(() => undefined, () => undefined);
  lockTails.set(key, tail);
  void tail.then(() => {
    if (lockTails.get(key) === tail) lockTails.delete(key);
  });
  return run;
}

/** git errors that come from another git process touching the same repository at that moment;
 * the same command usually succeeds when tried again. */
export const TRANSIENT_GIT_ERROR = /failed to read .*worktrees|could not lock|Unable to create '.*\.lock'|unable to (create|write) .*lock|cannot lock ref/i;

