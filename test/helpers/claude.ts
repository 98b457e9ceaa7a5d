// Harness for running the real `claude` CLI (devDependency) in tests, against the fake
// Anthropic API: a clean environment, a fresh HOME, its own process group, killed at the end.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Absolute path to node_modules/.bin/claude in the repo. */
export function claudeBin(): string {
  return path.join(REPO_ROOT, 'node_modules', '.bin', 'claude');
}

/** Variables that an outer Claude Code session (or the developer's shell) could leak into the child. */
function leaks(key: string): boolean {
  return key.startsWith('ANTHROPIC_') || key.startsWith('CLAUDE_') || key === 'CLAUDECODE' || key === 'AI_AGENT';
}

/** Environment for a claude run against a fake API: outer ANTHROPIC_*, CLAUDE_* and CLAUDECODE
 * removed, a fresh HOME, no retries to speak of, no telemetry, full MCP tool schemas. */
export function claudeEnv(opts: { home: string; baseUrl: string; extra?: Record<string, string> }): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !leaks(k)) env[k] = v;
  }
  Object.assign(env, {
    HOME: opts.home,
    ANTHROPIC_BASE_URL: opts.baseUrl,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
    ENABLE_TOOL_SEARCH: 'false',
    DISABLE_AUTOUPDATER: '1',
  });
  if (opts.extra) Object.assign(env, opts.extra);
  return env;
}

/** A fresh directory under os.tmpdir(); the caller removes it. */
export async function makeTempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), prefix.endsWith('-') ? prefix : `${prefix}-`));
}

export interface ClaudeRun {
  code: number | null;
  signal: string | null;
  /** stdout lines that parsed as JSON, in order */
  events: any[];
  /** the whole stdout, JSON lines included */
  stdout: string;
  stderr: string;
  durationMs: number;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    /* ESRCH: the group is already gone */
  }
}

/**
 * Runs claude with `args` in its own process group. stdin is /dev/null unless `stdin` lines are
 * given (written, then closed). Resolves when claude has exited and its output is drained; on
 * timeout kills the whole group and rejects with the stderr and the tail of stdout.
 */
export async function runClaude(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number; stdin?: string[] },
): Promise<ClaudeRun> {
  const started = Date.now();
  const child = spawn(claudeBin(), args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  let stdout = '';
  let stderr = '';
  let partial = '';
  const events: any[] = [];
  const takeLine = (line: string): void => {
    const t = line.trim();
    if (!t.startsWith('{')) return;
    try {
      events.push(JSON.parse(t));
    } catch {
      /* not JSON: kept in stdout only */
    }
  };
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (d: string) => {
    stdout += d;
    partial += d;
    let nl: number;
    while ((nl = partial.indexOf('\n')) >= 0) {
      takeLine(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
  });
  child.stderr!.on('data', (d: string) => {
    stderr += d;
  });

  let exited = false;
  try {
    return await new Promise<ClaudeRun>((resolve, reject) => {
      let code: number | null = null;
      let signal: string | null = null;
      const timer = setTimeout(() => {
        killGroup(pid, 'SIGKILL');
        reject(
          new Error(
            `claude timed out after ${opts.timeoutMs} ms (args: ${args.join(' ')})\n` +
              `--- stderr ---\n${stderr}\n--- stdout (tail) ---\n${stdout.slice(-4000)}`,
          ),
        );
      }, opts.timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`could not run ${claudeBin()}: ${e.message}`));
      });
      child.on('exit', (c, s) => {
        exited = true;
        code = c;
        signal = s;
        // Leftovers in the group (MCP servers, tool processes) could hold the pipes open.
        killGroup(pid, 'SIGKILL');
      });
      child.on('close', () => {
        clearTimeout(timer);
        if (partial) takeLine(partial);
        resolve({ code, signal, events, stdout, stderr, durationMs: Date.now() - started });
      });
      if (opts.stdin && child.stdin) {
        child.stdin.on('error', () => {
          /* EPIPE if claude exits early: reported through the exit code */
        });
        for (const line of opts.stdin) child.stdin.write(line.endsWith('\n') ? line : `${line}\n`);
        child.stdin.end();
      }
    });
  } finally {
    if (!exited) killGroup(pid, 'SIGKILL');
  }
}
