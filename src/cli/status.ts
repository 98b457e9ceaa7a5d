// `overseer status [--json]` and `overseer logs <job> [-f] [--json]`: read the state database
// directly (works whether or not a hub runs) and the raw transcripts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig } from '../config.js';
import { JobStore, type JobRow } from '../store/jobs.js';
import { summarize } from '../services/summary.js';
import { readTailLines, followLines } from '../launch/readTail.js';
import { renderTranscript, renderEvent } from '../launch/claude/transcript.js';
import { parseClaudeLine } from '../launch/claude/events.js';
import { isSettled } from '../domain/job.js';

function openStore(): { store: JobStore; close: () => void; home: string } {
  const { home } = loadConfig();
  const file = join(home, 'state.db');
  if (!existsSync(file)) throw new CliError(`No Overseer state at ${home} (no state.db). Run overseer from your project, or set OVERSEER_HOME.`);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return { store: new JobStore(db), close: () => db.close(), home };
}

export class CliError extends Error {}

function age(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/** A plain fixed-width table. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

export function runStatus(opts: { json?: boolean; all?: boolean }): void {
  const { store, close } = openStore();
  try {
    const rows = store.list({ limit: 10_000 });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(rows.map((j) => summarize(j, store.attempts(j.id))), null, 2)}\n`);
      return;
    }
    if (rows.length === 0) {
      process.stdout.write('No jobs yet.\n');
      return;
    }
    const body = rows.map((j: JobRow) => [
      j.id, j.status + (j.failure_class ? ` (${j.failure_class})` : ''), j.parent_id ?? '-', String(j.turns), `$${j.cost_usd.toFixed(4)}`,
      age(j.created_at), j.title.slice(0, 40), (j.status_message ?? j.error ?? '').replace(/\s+/g, ' ').slice(0, 60),
    ]);
    process.stdout.write(`${table([['JOB', 'STATUS', 'PARENT', 'TURNS', 'COST', 'AGE', 'TITLE', 'LAST'], ...body])}\n`);
  } finally {
    close();
  }
}

export async function runLogs(jobId: string, opts: { follow?: boolean; json?: boolean; tail?: string; attempt?: string }): Promise<void> {
  const { store, close } = openStore();
  try {
    const job = store.get(jobId);
    if (!job) throw new CliError(`No job ${jobId}. Known: ${store.nearbyIds(jobId).join(', ') || 'none'}.`);
    const attempts = store.attempts(jobId);
    const a = opts.attempt ? attempts.find((x) => x.n === Number(opts.attempt)) : attempts.at(-1);
    if (!a) {
      process.stdout.write(`Job ${jobId} has not started (${job.status}).\n`);
      return;
    }
    const tail = opts.tail ? Number(opts.tail) : 200;
    const lines = await readTailLines(a.transcript, tail);
    if (opts.json) process.stdout.write(lines.map((l) => `${l}\n`).join(''));
    else process.stdout.write(`${renderTranscript(lines, tail, { maxChars: 1_000_000 })}\n`);
    if (!opts.follow || isSettled(job.status)) return;
    const ac = new AbortController();
    process.once('SIGINT', () => ac.abort());
    for await (const line of followLines(a.transcript, ac.signal)) {
      if (opts.json) process.stdout.write(`${line}\n`);
      else {
        const p = parseClaudeLine(line);
        const text = p.ok ? renderEvent(p.event) : '';
        if (text) process.stdout.write(`${text}\n`);
        if (p.ok && p.event.kind === 'result' && isSettled(store.get(jobId)?.status ?? 'running')) ac.abort();
      }
    }
  } finally {
    close();
  }
}
