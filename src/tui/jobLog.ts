// A job's transcript for the watch's log view, rendered as `overseer logs -f` renders it (the
// same header and footer per attempt, the same event lines, the hub's verdict at the end),
// read from the state read-only (SQLite's file or the PostgreSQL database, src/store/sql/readOnly.ts)
// and the transcript files as they grow.
import type { AttemptRow } from '../store/jobs.js';
import { openStateReadOnly, stateWhere } from '../store/sql/readOnly.js';
import { attemptsOf, getJob, lastAttempt } from '../store/sql/jobs.js';
import { renderLine } from '../launch/claude/transcript.js';
import { isSettled } from '../domain/job.js';
import { hubHosts } from '../store/sql/workers.js';
import { hostOf } from '../services/summary.js';
import { attemptFooter, attemptHeader, LineCursor, verdictLine } from '../floor/logLines.js';

export interface LogSource {
  /** Lines written since the last call (the first call: the tail of the current attempt). One call at a time. */
  poll(): Promise<string[]>;
  /** True once the job has ended and its last lines and verdict were returned. */
  readonly ended: boolean;
  close(): Promise<void>;
}

/** Where the watch reads the state: the state directory and, on PostgreSQL, the database (config databaseUrl). */
export interface StateAt { home: string; databaseUrl?: string | undefined }

/** Most lines the first poll returns (older ones are not read into the view). */
const FIRST_TAIL = 500;

/** Follows job `jobId` of the state `at`. Throws when there is no database or no such job. */
export async function followJobLog(at: StateAt, jobId: string): Promise<LogSource> {
  const where = stateWhere(at);
  const s = await openStateReadOnly(at);
  if (!s) throw new Error(`no state database at ${where}: nothing to show`);
  const q = s.sql.db;
  const found = await getJob(q, jobId).catch(async (err: unknown) => { await s.close(); throw err; });
  if (!found) {
    await s.close();
    throw new Error(`job ${jobId} is not in ${where}`);
  }
  let cur: AttemptRow | undefined;
  let cursor: LineCursor | undefined;
  let first = true;
  let ended = false;
  let settledPolls = 0;
  const render = (raw: string[]): string[] => raw.flatMap((l) => {
    const t = renderLine(l, { timestamps: true, maxFieldChars: 4000 });
    return t ? t.split('\n') : [];
  });
  const footerOf = async (n: number): Promise<string[]> => {
    const a = (await attemptsOf(q, jobId)).find((x) => x.n === n);
    return a ? [attemptFooter(a)] : [];
  };

  return {
    get ended() { return ended; },
    async poll() {
      if (ended) return [];
      const out: string[] = [];
      const latest = await lastAttempt(q, jobId);
      if (latest && latest.n !== cur?.n) {
        if (cur && cursor) out.push(...render(cursor.next()), ...(await footerOf(cur.n)));
        cur = latest;
        cursor = new LineCursor(latest.transcript);
        out.push(attemptHeader(latest));
      }
      if (cursor) {
        const lines = cursor.next();
        out.push(...render(first ? lines.slice(-FIRST_TAIL) : lines));
      } else if (first) {
        out.push(`(job ${jobId} has not started yet: ${(await getJob(q, jobId))!.status})`);
      }
      const job = (await getJob(q, jobId))!;
      // Where it runs, always (the list shows it on rows only when the crew has workers or several hosts).
      if (first) out.unshift(`── ${jobId} ${isSettled(job.status) ? 'ran' : 'runs'} on ${hostOf(job, await hubHosts(q, [job.hub_id]))}${job.worker ? ' (a worker)' : ''}`);
      first = false;
      if (isSettled(job.status)) {
        // The row can land a moment before the last transcript bytes: end after a quiet poll.
        if (out.length === 0 && ++settledPolls >= 2) {
          ended = true;
          if (cur) out.push(...(await footerOf(cur.n)));
          out.push(verdictLine(job, await attemptsOf(q, jobId)));
        }
      }
      return out;
    },
    close: () => s.close(),
  };
}
