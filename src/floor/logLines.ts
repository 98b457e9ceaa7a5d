// The lines `overseer logs` and the watch's log view (src/tui/jobLog.ts) both print for a job:
// a header and a footer per attempt, the hub's verdict at the end, and the reader that follows a
// growing transcript file.
import { closeSync, openSync, readSync } from 'node:fs';
import type { AttemptRow, JobRow } from '../store/jobs.js';
import { isSettled } from '../domain/job.js';
import { summarize } from '../services/summary.js';

/** Reads a growing JSONL file from a byte offset: complete lines only, the partial rest kept. */
export class LineCursor {
  private pos = 0;
  private rest = '';

  constructor(private readonly file: string) {}

  next(): string[] {
    let fd: number;
    try {
      fd = openSync(this.file, 'r');
    } catch {
      return []; // not written yet
    }
    try {
      const buf = Buffer.alloc(1 << 16);
      const chunks: Buffer[] = [];
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.pos);
        if (n <= 0) break;
        chunks.push(Buffer.from(buf.subarray(0, n)));
        this.pos += n;
      }
      if (chunks.length === 0) return [];
      const text = this.rest + Buffer.concat(chunks).toString('utf8');
      const parts = text.split('\n');
      this.rest = parts.pop() ?? '';
      return parts.filter((l) => l.trim() !== '');
    } finally {
      closeSync(fd);
    }
  }
}

const hhmmss = (ms: number | null): string => (ms === null ? '?' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));
const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`;
const oneLine = (s: string, n: number): string => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

export function attemptHeader(a: AttemptRow): string {
  return `── attempt ${a.n} (${a.kind}) started ${hhmmss(a.started_at)} UTC`;
}

export function attemptFooter(a: AttemptRow): string {
  if (a.ended_at === null) return `── attempt ${a.n} still running: ${plural(a.turns, 'turn')} so far, $${a.cost_usd.toFixed(4)}`;
  const why = a.failure_class ? ` (${a.failure_class})` : '';
  return `── attempt ${a.n} ended ${hhmmss(a.ended_at)} UTC: ${a.status}${why}, ${plural(a.turns, 'turn')}, $${a.cost_usd.toFixed(4)}${a.error ? ` — ${oneLine(a.error, 300)}` : ''}`;
}

/** The hub's verdict on the job, from its row: the status Overseer decided, turns, cost, error. */
export function verdictLine(j: JobRow, attempts: AttemptRow[]): string {
  const s = summarize(j, attempts);
  const status = `${s.status}${s.failure_class ? ` (${s.failure_class})` : ''}`;
  const cost = s.cost_usd === null ? 'cost unknown' : `$${s.cost_usd.toFixed(4)}`;
  const tail = s.error ? ` — error: ${oneLine(s.error, 500)}` : s.result ? ` — result: ${oneLine(s.result, 300)}` : '';
  if (!isSettled(j.status)) return `overseer: job ${j.id} is ${status} (${plural(attempts.length, 'attempt')} so far), ${plural(s.turns, 'turn')}, ${cost} so far`;
  return `overseer: job ${j.id} ${status} after ${plural(attempts.length, 'attempt')}, ${plural(s.turns, 'turn')}, ${cost}${tail}`;
}
