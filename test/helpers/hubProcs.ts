// Real hub processes for the many-hubs tests (test/helpers/hubProc.ts is the child): send
// commands and wait for their answers, or for what a child tells on its own, with deadlines.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const CHILD = join(import.meta.dirname, 'hubProc.ts');

export type Said = Record<string, unknown>;

export interface HubProc {
  pid: number;
  /** Every event line it has told so far, in order. */
  events: Said[];
  send(cmd: Said, deadlineMs?: number): Promise<Said>;
  /** The first event (already told, or told later) that `pred` accepts; rejects after `deadlineMs`. */
  event(pred: (e: Said) => boolean, deadlineMs: number, what: string): Promise<Said>;
  signal(sig: NodeJS.Signals): void;
  /** Resolves once the process has exited. */
  exited: Promise<void>;
}

/** `script`: the child to run (default hubProc.ts; crewHub.ts is a whole hub) — any that speaks the same lines. */
export async function startHubProc(deadlineMs = 30_000, script = CHILD): Promise<HubProc> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const replies = new Map<number, (s: Said) => void>();
  const events: Said[] = [];
  const watchers = new Set<(e: Said) => void>();
  let gone = '';
  const exited = new Promise<void>((res) => child.once('exit', (code, sig) => {
    gone = `hub process ${child.pid} exited (${code ?? sig})`;
    res();
  }));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const said = JSON.parse(line) as Said;
    if (typeof said.n === 'number') {
      replies.get(said.n)?.(said);
      replies.delete(said.n);
      return;
    }
    events.push(said);
    watchers.forEach((w) => w(said));
  });
  let n = 0;
  const event = (pred: (e: Said) => boolean, ms: number, what: string): Promise<Said> => new Promise((resolve, reject) => {
    const seen = events.find(pred);
    if (seen) return resolve(seen);
    const w = (e: Said): void => {
      if (!pred(e)) return;
      clearTimeout(t);
      watchers.delete(w);
      resolve(e);
    };
    const t = setTimeout(() => {
      watchers.delete(w);
      reject(new Error(`hub process ${child.pid}: no ${what} within ${ms} ms${gone ? ` (${gone})` : ''}; told: ${JSON.stringify(events)}`));
    }, ms);
    watchers.add(w);
  });
  await event((e) => e.event === 'ready', deadlineMs, 'start');
  return {
    pid: child.pid!,
    events,
    exited,
    event,
    send(cmd, ms = deadlineMs) {
      const id = ++n;
      return new Promise((resolve, reject) => {
        if (gone) return reject(new Error(gone));
        const t = setTimeout(() => reject(new Error(`hub process ${child.pid}: no answer to ${JSON.stringify(cmd)} within ${ms} ms`)), ms);
        replies.set(id, (s) => {
          clearTimeout(t);
          if (typeof s.error === 'string') reject(new Error(`hub process ${child.pid}: ${s.error}`));
          else resolve(s);
        });
        child.stdin!.write(JSON.stringify({ ...cmd, n: id }) + '\n');
      });
    },
    signal: (sig) => void child.kill(sig),
  };
}
