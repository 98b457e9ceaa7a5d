// `overseer logs --all [-f] [--json]`: every live job's transcript interleaved, each line
// prefixed by the job's title (like `stern`): jobs that start later join, each job's attempts
// follow one another, and a job's verdict is printed once it has ended. Without -f: what the
// live jobs have written so far. With -f: until no job is live any more (or Ctrl-C).
import { renderLine } from '../launch/claude/transcript.js';
import { isSettled, type JobStatus } from '../domain/job.js';
import type { JobRow } from '../store/jobs.js';
import { openState } from './state.js';
import { attemptsOf, lastAttempt, listJobs } from '../store/sql/jobs.js';
import { attemptHeader, LineCursor, verdictLine } from '../floor/logLines.js';

const LIVE: readonly JobStatus[] = ['queued', 'waiting', 'running', 'frozen', 'needs_input'];

interface Followed { attempt: number; cursor: LineCursor; settledPolls: number; done: boolean }

export async function runLogsAll(opts: { follow?: boolean; json?: boolean; pollMs?: number }): Promise<void> {
  const s = await openState();
  const followed = new Map<string, Followed>();
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const emit = (j: JobRow, line: string, raw?: string): void => {
    if (opts.json) out(JSON.stringify({ job_id: j.id, title: j.title, ...(raw !== undefined ? { event: safeJson(raw) } : { overseer: line }) }));
    else out(`[${j.title.slice(0, 30)} ${j.id}] ${line}`);
  };
  /** One look at every job; true while any job is live or still being flushed. */
  const pass = async (): Promise<boolean> => {
    const q = s.sql.db;
    let busy = false;
    for (const j of (await listJobs(q, { limit: 10_000 })).reverse()) {
      const live = LIVE.includes(j.status);
      let f = followed.get(j.id);
      if (!live && !f) continue; // ended before we looked: not ours to show
      if (live) busy = true;
      const a = await lastAttempt(q, j.id);
      if (a && (!f || f.attempt !== a.n)) {
        if (f) for (const l of f.cursor.next()) line(j, l); // the rest of the previous attempt
        f = { attempt: a.n, cursor: new LineCursor(a.transcript), settledPolls: 0, done: false };
        followed.set(j.id, f);
        emit(j, attemptHeader(a));
      }
      if (!f || f.done) continue;
      const lines = f.cursor.next();
      for (const l of lines) line(j, l);
      if (isSettled(j.status)) {
        // The row can be written a moment before the last transcript bytes: flush for two quiet polls.
        if (lines.length === 0 && ++f.settledPolls >= 2) {
          f.done = true;
          emit(j, verdictLine(j, await attemptsOf(q, j.id)));
        } else busy = true;
      }
    }
    return busy;
  };
  const line = (j: JobRow, raw: string): void => {
    if (opts.json) return emit(j, '', raw);
    const t = renderLine(raw, { timestamps: true, maxFieldChars: 2000 });
    if (t) for (const part of t.split('\n')) emit(j, part);
  };
  let interrupted = false;
  const onInt = (): void => { interrupted = true; };
  process.once('SIGINT', onInt);
  try {
    if (!(await pass()) && followed.size === 0) {
      out(opts.json ? JSON.stringify({ overseer: 'no live jobs' }) : 'overseer: no job is running, queued or waiting');
      return;
    }
    while (opts.follow && !interrupted) {
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 200));
      if (!(await pass())) break;
    }
  } finally {
    process.off('SIGINT', onInt);
    await s.close();
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
