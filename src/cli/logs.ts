// `overseer logs <job> [-f] [--json] [--tail N] [--attempt N]`: an attempt's transcript (Claude
// or Codex) with event times, framed by what the hub recorded: a header per attempt (kind,
// start, end, its turns and cost, its failure) and a last line with the job's verdict from the
// database — the status Overseer decided, not the model's own `result` subtype. With -f it
// follows new lines, moves on to a retry's new attempt, and exits once the job has ended.
import type { AttemptRow, JobRow } from '../store/jobs.js';
import { renderLine } from '../launch/claude/transcript.js';
import { isSettled } from '../domain/job.js';
import { summarize } from '../services/summary.js';
import { attemptFooter, attemptHeader, LineCursor, verdictLine } from '../floor/logLines.js';
import { choiceLine, choiceView } from '../models/choice.js';
import { openState, resolveJob, type State } from './state.js';
import { attemptsOf, getJob, lastAttempt } from '../store/sql/jobs.js';
import { intOption } from './args.js';
import { UsageError } from './errors.js';

// The lines the watch's log view shares (src/floor/logLines.ts).
export { attemptFooter, attemptHeader, LineCursor, verdictLine };

export interface LogsOptions {
  follow?: boolean;
  json?: boolean;
  tail?: string;
  attempt?: string;
  /** Poll interval of -f (ms). */
  pollMs?: number;
}

function verdictJson(j: JobRow, attempts: AttemptRow[]): string {
  const s = summarize(j, attempts, 2000);
  return JSON.stringify({ type: 'overseer.verdict', job_id: s.job_id, status: s.status, failure_class: s.failure_class, error: s.error, result: s.result, turns: s.turns, cost_usd: s.cost_usd, attempts: attempts.length, ended_at: s.ended_at });
}

const attemptJson = (a: AttemptRow): string => JSON.stringify({ type: 'overseer.attempt', n: a.n, kind: a.kind, status: a.status, started_at: new Date(a.started_at).toISOString() });

export async function runLogs(ref: string, opts: LogsOptions): Promise<void> {
  const tail = intOption('tail', opts.tail, 1, 1_000_000) ?? 200;
  const wanted = intOption('attempt', opts.attempt, 1, 1_000_000);
  const s = await openState();
  try {
    const q = s.sql.db;
    const job = await resolveJob(s, ref);
    const attempts = await attemptsOf(q, job.id);
    if (wanted !== undefined && !attempts.some((a) => a.n === wanted)) {
      throw new UsageError(`Job ${job.id} has no attempt ${wanted}: it has ${attempts.length ? `attempts 1..${attempts.length}` : 'not started yet'}.`);
    }
    const out = (line: string): void => void process.stdout.write(`${line}\n`);
    const print = (lines: string[]): void => {
      for (const l of lines) {
        if (opts.json) out(l);
        else {
          const t = renderLine(l, { timestamps: true, maxFieldChars: 4000 });
          if (t) out(t);
        }
      }
    };
    const header = (a: AttemptRow): void => out(opts.json ? attemptJson(a) : attemptHeader(a));
    const footer = (a: AttemptRow): void => { if (!opts.json) out(attemptFooter(a)); };

    // A job spawned with model "auto": which model it was given and why (src/models).
    const choice = choiceView(job.model_choice_json);
    if (choice) out(opts.json ? JSON.stringify({ type: 'overseer.model_choice', ...choice }) : `── model ${job.provider}/${job.model ?? '(default)'}: ${choiceLine(job.model_choice_json)}`);
    let cur = wanted !== undefined ? attempts.find((a) => a.n === wanted) : attempts.at(-1);
    const following = !!opts.follow && (wanted === undefined || wanted === attempts.at(-1)?.n);
    let cursor: LineCursor | undefined;
    if (cur) {
      header(cur);
      cursor = new LineCursor(cur.transcript);
      print(cursor.next().slice(-tail));
    } else if (!opts.json) out(`(job ${job.id} has not started yet: ${job.status})`);

    if (following && !isSettled(job.status)) await follow(s, job.id, cur, cursor, { print, header, footer, pollMs: opts.pollMs ?? 200 });
    const endJob = (await getJob(q, job.id))!;
    const endAttempts = await attemptsOf(q, job.id);
    const last = cur ? endAttempts.find((a) => a.n === cur!.n) : undefined;
    if (last && !following) footer(last);
    out(opts.json ? verdictJson(endJob, endAttempts) : verdictLine(endJob, endAttempts));
  } finally {
    await s.close();
  }
}

interface Printers {
  print: (lines: string[]) => void;
  header: (a: AttemptRow) => void;
  footer: (a: AttemptRow) => void;
  pollMs: number;
}

/** Follows the job until it has ended (or SIGINT): new lines, then each new attempt in turn. */
async function follow(s: State, jobId: string, cur: AttemptRow | undefined, cursor: LineCursor | undefined, p: Printers): Promise<void> {
  let interrupted = false;
  const onInt = (): void => { interrupted = true; };
  process.once('SIGINT', onInt);
  try {
    let settledPolls = 0;
    while (!interrupted) {
      if (cursor) p.print(cursor.next());
      const job = (await getJob(s.sql.db, jobId))!;
      const latest = await lastAttempt(s.sql.db, jobId);
      if (latest && latest.n !== cur?.n) {
        if (cur && cursor) {
          p.print(cursor.next());
          p.footer((await attemptsOf(s.sql.db, jobId)).find((a) => a.n === cur!.n)!);
        }
        cur = latest;
        cursor = new LineCursor(latest.transcript);
        p.header(latest);
        continue;
      }
      if (isSettled(job.status)) {
        // The row can be written a moment before the last transcript bytes are flushed: read
        // until a poll finds nothing new (at most a few polls).
        const more = cursor ? cursor.next() : [];
        p.print(more);
        if (more.length === 0 && ++settledPolls >= 2) {
          if (cur) p.footer((await attemptsOf(s.sql.db, jobId)).find((a) => a.n === cur!.n)!);
          return;
        }
      }
      await new Promise((r) => setTimeout(r, p.pollMs));
    }
  } finally {
    process.off('SIGINT', onInt);
  }
}
