// Low-level git plumbing shared by the git layer: a configured simple-git instance per
// directory (never prompts, never opens an editor, English messages), real-path helpers and
// error-text helpers. Nothing here knows about jobs or worktrees.
import { spawn } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import type { SimpleGit } from 'simple-git';
import type * as SimpleGitModule from 'simple-git';
import { lazyRequire } from '../lazy.js';

/** simple-git, loaded by the first git() (an idle hub runs none: src/lazy.ts). */
const simpleGitModule = lazyRequire<typeof SimpleGitModule>('simple-git');

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
export function gitEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
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

/** A simple-git instance rooted at `dir`. `timeoutMs` kills a git process that prints nothing
 * for that long (used for commit and push, which may wait on a signer or the network).
 *
 * simple-git refuses by default to run when the environment holds variables such as EDITOR,
 * PAGER, GIT_SSH_COMMAND or PREFIX, because they can run programs. That guard protects against
 * untrusted values injected into argv/env; here the environment is the user's own and every
 * argv is built by this module from validated values, so the env-borne categories are allowed.
 * Config-via-argv categories (alias, filters, protocol overrides, upload-pack...) stay blocked. */
export function git(dir: string, timeoutMs?: number): SimpleGit {
  return simpleGitModule().simpleGit({
    baseDir: dir,
    binary: 'git',
    maxConcurrentProcesses: 4,
    trimmed: false,
    ...(timeoutMs ? { timeout: { block: timeoutMs } } : {}),
    unsafe: {
      allowUnsafeEditor: true,
      allowUnsafePager: true,
      allowUnsafeAskPass: true,
      allowUnsafeSshCommand: true,
      allowUnsafeGitProxy: true,
      allowUnsafeConfigPaths: true,
      allowUnsafeConfigEnvCount: true,
      allowUnsafeTemplateDir: true,
      allowUnsafeDiffExternal: true,
      allowUnsafeCredentialHelper: true,
      allowUnsafeHooksPath: true,
      allowUnsafeGpgProgram: true,
    },
  }).env(gitEnv());
}

/** Real path of `p`, or undefined when it does not exist (or cannot be read). */
export async function realPathOrUndefined(p: string): Promise<string | undefined> {
  try {
    return await realpath(p);
  } catch {
    return undefined;
  }
}

/** Message text of any thrown value (simple-git puts git's stderr there). */
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

/**
 * Run one git command and return its stdout (without the final newline); rejects with git's
 * stderr in the message when git fails. For hot paths: simple-git waits an extra 50 ms after
 * any command that printed nothing (its completion detection), which made every silent
 * `git add`/`git commit -q` cost ~55 ms instead of ~3 ms. On node:child_process, not execa: every
 * hub runs a few at start, and execa is 130 modules (docs/performance-hub-memory.md).
 */
export function gitQuick(dir: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: dir, env: { ...process.env, ...gitEnv() }, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', reject); // git missing, cwd gone
    child.once('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString('utf8').replace(/\r?\n$/, '');
      if (code === 0) return resolve(stdout);
      const why = signal ? `was killed by ${signal}${signal === 'SIGTERM' ? ' (timed out after 120 s?)' : ''}` : `failed with exit code ${code}`;
      const detail = [Buffer.concat(err).toString('utf8').trim(), stdout.trim()].filter(Boolean).join('\n\n');
      reject(new Error(`Command ${why}: git ${args.join(' ')}${detail ? `\n\n${detail}` : ''}`));
    });
  });
}
