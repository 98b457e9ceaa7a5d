// Running a CLI under test (claude, codex) in its own process group: stdout collected and its
// JSON lines parsed as they arrive, stderr collected, the whole group killed once the CLI exits
// or times out (leftovers such as MCP servers or tool processes could hold the pipes open).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface ProcessRun {
  code: number | null;
  signal: string | null;
  /** stdout lines that parsed as JSON, in order */
  events: any[];
  /** the whole stdout, JSON lines included */
  stdout: string;
  stderr: string;
  durationMs: number;
}

export interface RunProcessOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** written to stdin, then stdin is closed; without it stdin is /dev/null ('ignore') */
  stdin?: string;
  /** called with each parsed JSON line as it arrives (e.g. to signal the child mid-run) */
  onEvent?: (ev: any, child: ChildProcess) => void;
  /** called once right after spawn */
  onSpawn?: (child: ChildProcess) => void;
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
 * Runs `bin <args>` in its own process group. Resolves when it has exited and its output is
 * drained; on timeout kills the whole group and rejects with the tails of stderr and stdout.
 */
export async function runProcess(bin: string, args: string[], opts: RunProcessOptions): Promise<ProcessRun> {
  const name = path.basename(bin);
  const started = Date.now();
  const child = spawn(bin, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdin !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  const pid = child.pid;
  let stdout = '';
  let stderr = '';
  let partial = '';
  const events: any[] = [];
  const takeLine = (line: string): void => {
    const t = line.trim();
    if (!t.startsWith('{')) return;
    let ev: any;
    try {
      ev = JSON.parse(t);
    } catch {
      return; /* not JSON: kept in stdout only */
    }
    events.push(ev);
    opts.onEvent?.(ev, child);
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
    return await new Promise<ProcessRun>((resolve, reject) => {
      let code: number | null = null;
      let signal: string | null = null;
      const timer = setTimeout(() => {
        killGroup(pid, 'SIGKILL');
        reject(
          new Error(
            `${name} timed out after ${opts.timeoutMs} ms (args: ${args.join(' ')})\n` +
              `--- stderr ---\n${stderr.slice(-4000)}\n--- stdout (tail) ---\n${stdout.slice(-4000)}`,
          ),
        );
      }, opts.timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`could not run ${bin}: ${e.message}`));
      });
      child.on('exit', (c, s) => {
        exited = true;
        code = c;
        signal = s;
        // Leftovers in the group (a native binary, MCP servers, tools) could hold the pipes open.
        killGroup(pid, 'SIGKILL');
      });
      child.on('close', () => {
        clearTimeout(timer);
        if (partial) takeLine(partial);
        resolve({ code, signal, events, stdout, stderr, durationMs: Date.now() - started });
      });
      opts.onSpawn?.(child);
      if (opts.stdin !== undefined && child.stdin) {
        child.stdin.on('error', () => {
          /* EPIPE if the child exits early: reported through the exit code */
        });
        child.stdin.end(opts.stdin);
      }
    });
  } finally {
    if (!exited) killGroup(pid, 'SIGKILL');
  }
}

/** A spawned process whose stdout and stderr are collected, with its exit as a promise. */
export interface Watched {
  proc: ChildProcess;
  out(): string;
  err(): string;
  /** The exit code, or the signal's name. */
  exited: Promise<number | string | null>;
  gone(): boolean;
}

/** Collect a piped child's output and exit (stdio ['ignore', 'pipe', 'pipe']). */
export function watchProcess(proc: ChildProcess): Watched {
  let out = '';
  let err = '';
  let gone = false;
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => { out += d; });
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const exited = new Promise<number | string | null>((r) => proc.once('exit', (c, s) => r(c ?? s)));
  void exited.then(() => { gone = true; });
  return { proc, out: () => out, err: () => err, exited, gone: () => gone };
}
