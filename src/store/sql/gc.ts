// `overseer gc` (src/cli/housekeeping.ts): what a hub that runs for months may forget. A job is
// forgettable when it ended before the cutoff, no live job depends on it, and it has no branch
// still waiting to merge (a worktree job with a branch and no merge on record). Of such a job gc
// removes the log (events), the search index of what it said, its closed side rows (answered
// requests, delivered messages, cleared warnings, done commands, released reservations) — the job
// row itself stays, with its result, totals and costs (budgets and `overseer usage` count them).
// Overlaps are closed items too, once cleared before the cutoff. Both dialects; the decision and
// the deletes are one transaction, and on PostgreSQL the chosen jobs' rows are locked first, so a
// resume that races gc waits for it and then finds the job (its log gone, nothing else).
import { sql, type Kysely } from 'kysely';
import type { Schema } from './schema.js';
import { isPostgres, transact, type Q } from './tx.js';

const ENDED = ['succeeded', 'failed', 'cancelled', 'interrupted'] as const;
/** At most this many ids in one IN list. */
const CHUNK = 500;

/** What gc removes (or would), by table. */
export interface GcCounts {
  jobs: number;
  events: number;
  transcript_rows: number;
  messages: number;
  requests: number;
  request_late_answers: number;
  job_warnings: number;
  job_commands: number;
  budget_reservations: number;
  overlaps: number;
}

export interface GcResult {
  counts: GcCounts;
  /** The forgotten jobs, oldest first: their transcript files are the caller's to remove (they are on this machine or not at all). */
  jobIds: string[];
  /** Their attempts' transcript paths, as recorded. */
  transcripts: string[];
}

/** The jobs gc may forget, oldest first; `lock` takes their rows (PostgreSQL) so a resume waits. */
export async function forgettable(q: Q, cutoff: number, lock = false): Promise<string[]> {
  let s = q.selectFrom('jobs as j').select('j.id')
    .where('j.status', 'in', ENDED).where('j.ended_at', '<', cutoff)
    // Its result feeds a job still to come.
    .where((eb) => eb.not(eb.exists(eb.selectFrom('job_deps as d').innerJoin('jobs as w', 'w.id', 'd.job_id')
      .select('d.job_id').whereRef('d.dep_id', '=', 'j.id').where('w.status', 'not in', ENDED))))
    // A branch not merged yet is work waiting to ship: everything of it stays.
    .where((eb) => eb.or([
      eb('j.worktree', '=', 0),
      eb('j.branch', 'is', null),
      eb.exists(eb.selectFrom('job_merges as m').select('m.job_id').whereRef('m.job_id', '=', 'j.id')),
    ]))
    .orderBy('j.seq');
  if (lock && isPostgres(q)) s = s.forUpdate();
  return (await s.execute()).map((r) => r.id);
}

function chunks<T>(xs: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += CHUNK) out.push(xs.slice(i, i + CHUNK));
  return out;
}

/** The rows gc removes for `ids` (and the overlaps cleared before the cutoff): counted, or deleted when `apply`. */
async function sweep(q: Q, ids: string[], cutoff: number, apply: boolean): Promise<GcCounts> {
  const c: GcCounts = { jobs: ids.length, events: 0, transcript_rows: 0, messages: 0, requests: 0, request_late_answers: 0, job_warnings: 0, job_commands: 0, budget_reservations: 0, overlaps: 0 };
  const n = (r: { numDeletedRows: bigint } | { n: number | string | bigint }[]): number =>
    Array.isArray(r) ? Number(r[0]?.n ?? 0) : Number(r.numDeletedRows);
  for (const part of chunks(ids)) {
    // Each table: the job's rows that are closed. Counting and deleting share the condition.
    const tables: [keyof GcCounts, (d: boolean) => Promise<number>][] = [
      ['events', (d) => run(q, 'events', d, (w) => w.where('job_id', 'in', part))],
      ['transcript_rows', (d) => run(q, 'transcript_rows', d, (w) => w.where('job_id', 'in', part))],
      ['request_late_answers', (d) => run(q, 'request_late_answers', d, (w) => w.where('job_id', 'in', part))],
      ['requests', (d) => run(q, 'requests', d, (w) => w.where('job_id', 'in', part).where('status', '<>', 'pending'))],
      ['job_warnings', (d) => run(q, 'job_warnings', d, (w) => w.where('job_id', 'in', part))],
      ['job_commands', (d) => run(q, 'job_commands', d, (w) => w.where('job_id', 'in', part).where('done_at', 'is not', null))],
      ['budget_reservations', (d) => run(q, 'budget_reservations', d, (w) => w.where('job_id', 'in', part).where('released_at', 'is not', null))],
      // A message between two forgotten jobs, or between one and the lead or the hub, once it reached its reader.
      ['messages', (d) => run(q, 'messages', d, (w) => w.where(sql<boolean>`(from_id IN (${sql.join(part)}) OR to_id IN (${sql.join(part)}))
        AND (delivered_at IS NOT NULL OR read_at IS NOT NULL)
        AND NOT EXISTS (SELECT 1 FROM jobs k WHERE k.id IN (messages.from_id, messages.to_id) AND k.id NOT IN (${sql.join(part)}))`))],
    ];
    for (const [name, f] of tables) c[name] += await f(apply);
  }
  c.overlaps = await run(q, 'overlaps', apply, (w) => w.where('cleared_at', 'is not', null).where('cleared_at', '<', cutoff));
  return c;
  // Kysely types a where per table; the conditions here name only columns the table has.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  function run(db: Q, table: keyof Schema, del: boolean, where: (w: any) => any): Promise<number> {
    if (del) return (where(db.deleteFrom(table)) as { executeTakeFirst(): Promise<{ numDeletedRows: bigint }> }).executeTakeFirst().then(n);
    return (where(db.selectFrom(table).select(sql<number>`COUNT(*)`.as('n'))) as { execute(): Promise<{ n: number }[]> }).execute().then(n);
  }
}

/** What gc would remove, read in one transaction (nothing changes). */
export async function gcPlan(db: Kysely<Schema>, cutoff: number): Promise<GcResult> {
  return transact(db, async (trx) => collect(trx, cutoff, false));
}

/** Remove it: the decision and the deletes in one transaction. */
export async function gcApply(db: Kysely<Schema>, cutoff: number): Promise<GcResult> {
  return transact(db, async (trx) => collect(trx, cutoff, true));
}

async function collect(trx: Q, cutoff: number, apply: boolean): Promise<GcResult> {
  const jobIds = await forgettable(trx, cutoff, apply);
  const transcripts: string[] = [];
  for (const part of chunks(jobIds)) {
    for (const a of await trx.selectFrom('attempts').select('transcript').where('job_id', 'in', part).orderBy('job_id').orderBy('n').execute()) transcripts.push(a.transcript);
  }
  const counts = await sweep(trx, jobIds, cutoff, apply);
  return { counts, jobIds, transcripts };
}
