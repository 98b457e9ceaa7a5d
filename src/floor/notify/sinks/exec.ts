// Runs a program for a sink: argv only (never a shell), an optional stdin, and a hard time limit
// after which the program and everything it started are killed (SIGKILL to its process group: a
// notifier must not wait on a wedged program).
//
// Settled on the program's exit, not on its pipes closing: a program that leaves a background
// process holding its stderr (`notify-daemon &`) must not keep a notice — and so the hub's
// stop, which drains the notices under way — waiting.
import { spawn } from 'node:child_process';

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs: number;
  input?: string;
}

const STDERR_KEEP = 4096;

const tail = (s: string): string => {
  const t = s.trim().replace(/\s+/g, ' ');
  return t.length > 200 ? `…${t.slice(-200)}` : t;
};

/** Resolves when `bin` exits 0; rejects saying how it failed (not found, exit code + stderr, timed out). */
export function runProgram(bin: string, args: readonly string[], o: RunOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    let stderr = '';
    let timedOut = false;
    const child = spawn(bin, args, { env: o.env, cwd: o.cwd, stdio: ['pipe', 'ignore', 'pipe'], detached: process.platform !== 'win32', windowsHide: true });
    const killAll = (): void => {
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const timer = setTimeout(() => { timedOut = true; killAll(); }, o.timeoutMs);
    child.stderr?.setEncoding('utf8').on('data', (d: string) => { stderr = (stderr + d).slice(-STDERR_KEEP); });
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new Error(err.code === 'ENOENT' ? `${bin}: not found` : `${bin}: ${err.message}`));
    });
    const stderrDone = new Promise<void>((r) => {
      if (!child.stderr) return r();
      child.stderr.once('close', r);
      child.stderr.once('error', () => r());
    });
    child.on('exit', async (code, signal) => {
      clearTimeout(timer);
      // What it wrote just before exiting may still be in the pipe: read it, a moment at most.
      const grace = new Promise<void>((r) => setTimeout(r, 200).unref());
      await Promise.race([stderrDone, grace]);
      child.stderr?.destroy();
      const said = tail(stderr);
      if (timedOut) return reject(new Error(`${bin} took longer than ${o.timeoutMs / 1000} s and was killed`));
      if (code === 0) return resolve();
      if (code !== null) return reject(new Error(`${bin} exited with code ${code}${said ? `: ${said}` : ''}`));
      reject(new Error(`${bin} ended by ${signal ?? 'a signal'}${said ? `: ${said}` : ''}`));
    });
    // A program that does not read its stdin closes the pipe: EPIPE is not a failure of the sink.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(o.input ?? '');
  });
}
