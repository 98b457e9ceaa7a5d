// A CLI command kept running (`overseer status --watch`, …) with its output collected as it comes:
// tests wait on what it prints, with a deadline, then interrupt it as a person does (Ctrl-C).
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { MAIN, cliEnv } from './cli.js';

export interface Watch {
  /** Everything printed so far, and when each chunk came. */
  out(): string;
  chunks: { at: number; text: string }[];
  /** Resolves with the output from `from` on once `pred` holds on it. */
  until(pred: (text: string) => boolean, what: string, ms?: number, from?: number): Promise<{ at: number; text: string }>;
  /** Ctrl-C: the exit code and stderr. */
  interrupt(): Promise<{ code: number | null; stderr: string }>;
}

/** `overseer <args>` kept running, its output collected as it comes. */
export function watch(home: string, args: string[], env: NodeJS.ProcessEnv = {}): Watch {
  const child = spawn(process.execPath, [MAIN, ...args], { env: cliEnv({ OVERSEER_HOME: home, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: { at: number; text: string }[] = [];
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stdout.setEncoding('utf8').on('data', (d: string) => { chunks.push({ at: performance.now(), text: d }); for (const w of waiters.splice(0)) w(); });
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  void exited.then(() => clearTimeout(killer));
  const out = (): string => chunks.map((c) => c.text).join('');
  return {
    out, chunks,
    async until(pred, what, ms = 15_000, from = 0) {
      const deadline = performance.now() + ms;
      for (;;) {
        const text = out().slice(from);
        if (pred(text)) return { at: chunks.at(-1)?.at ?? performance.now(), text };
        const left = deadline - performance.now();
        if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}; output so far:\n${out().slice(-3000)}\nstderr: ${stderr}`);
        await new Promise<void>((r) => { waiters.push(r); setTimeout(r, left).unref(); });
      }
    },
    async interrupt() {
      child.kill('SIGINT');
      return exited;
    },
  };
}
