// Schedules on the layer (docs/schedules.md; the table of migration 18 and the schedule columns of
// jobs: not_before, schedule_id, occurrence). Two decisions, each one conditional statement so it
// holds on PostgreSQL between hubs as it does on SQLite (docs/store-plan.md §2, "Schedules firing"):
// a due job is queued once (`queueDue`: waiting → queued, the `due` event only for the winner), and
// a series moves to its next occurrence once (`advanceSchedule`: current_job moves only from the
// occurrence that settled).
import { sql, type Selectable } from 'kysely';
import type { JobRow } from '../jobs.js';
import type { ScheduleStatus } from '../../contract/schedules.js';
import { isoTime } from '../../clock.js';
import { eventInsert } from './jobs.js';
import { transact, type Q } from './tx.js';
import type { SchedulesTable } from './schema.js';

export type ScheduleRow = Selectable<SchedulesTable>;

/** A schedule with its latest occurrence's state (null when that job is gone). */
export interface ScheduleWithCurrent extends ScheduleRow {
  current_status: string | null;
  current_not_before: number | null;
}

export type NewSchedule = Omit<ScheduleRow, 'seq' | 'status' | 'stop_reason' | 'runs' | 'current_job' | 'created_at' | 'updated_at' | 'ended_at'>;

const withCurrent = (q: Q) => q.selectFrom('schedules as s').leftJoin('jobs as j', 'j.id', 's.current_job')
  .selectAll('s').select(['j.status as current_status', 'j.not_before as current_not_before']);

/** A new series (`seq`: the next number; on PostgreSQL the spawn lock JobService.create holds orders it). */
export async function insertSchedule(q: Q, s: NewSchedule, now: number): Promise<void> {
  const seq = Number((await q.selectFrom('schedules').select(sql<number>`COALESCE(MAX(seq), 0) + 1`.as('s')).executeTakeFirstOrThrow()).s);
  await q.insertInto('schedules').values({ ...s, seq, status: 'active', stop_reason: null, runs: 0, current_job: null, created_at: now, updated_at: now, ended_at: null }).execute();
}

export async function getSchedule(q: Q, id: string): Promise<ScheduleWithCurrent | undefined> {
  return await withCurrent(q).where('s.id', '=', id).executeTakeFirst() as ScheduleWithCurrent | undefined;
}

/** Newest first; `status` filters (without it the active ones come first). */
export async function listSchedules(q: Q, f: { status?: ScheduleStatus; limit: number }): Promise<ScheduleWithCurrent[]> {
  const base = withCurrent(q);
  const rows = f.status
    ? base.where('s.status', '=', f.status).orderBy('s.seq', 'desc')
    : base.orderBy(sql`CASE WHEN s.status = 'active' THEN 0 ELSE 1 END`).orderBy('s.seq', 'desc');
  return await rows.limit(f.limit).execute() as ScheduleWithCurrent[];
}

export async function activeSchedules(q: Q): Promise<ScheduleWithCurrent[]> {
  return await withCurrent(q).where('s.status', '=', 'active').orderBy('s.seq').execute() as ScheduleWithCurrent[];
}

/** The first occurrence of a new series: tag its job and make it current (inside the job's transaction). */
export async function startSeries(q: Q, id: string, jobId: string, now: number): Promise<void> {
  await tagJob(q, jobId, id, 1);
  await q.updateTable('schedules').set({ current_job: jobId, runs: 1, updated_at: now }).where('id', '=', id).execute();
}

/**
 * The series moves on from `previous` (its occurrence that settled) to `jobId`, occurrence `n`:
 * one conditional statement, so two hubs that both saw `previous` settle make one next
 * occurrence — the loser gets false and aborts its job's creation (the transaction rolls back).
 */
export async function advanceSchedule(q: Q, id: string, previous: string, jobId: string, n: number, now: number): Promise<boolean> {
  const r = await q.updateTable('schedules').set({ current_job: jobId, runs: n, updated_at: now })
    .where('id', '=', id).where('status', '=', 'active').where('current_job', '=', previous).executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) return false;
  await tagJob(q, jobId, id, n);
  return true;
}

async function tagJob(q: Q, jobId: string, scheduleId: string, n: number): Promise<void> {
  await q.updateTable('jobs').set({ schedule_id: scheduleId, occurrence: n }).where('id', '=', jobId).execute();
}

/** End the series: done (cap, until, a one-shot ran), stopped (an occurrence failed) or cancelled. False when it had ended already. */
export async function endSchedule(q: Q, s: { id: string; current_job: string | null }, status: Exclude<ScheduleStatus, 'active'>, reason: string, now: number): Promise<boolean> {
  return transact(q, async (trx) => {
    const r = await trx.updateTable('schedules').set({ status, stop_reason: reason, ended_at: now, updated_at: now }).where('id', '=', s.id).where('status', '=', 'active').executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    if (s.current_job) {
      const job = await trx.selectFrom('jobs').select('id').where('id', '=', s.current_job).executeTakeFirst();
      if (job) await eventInsert(trx, s.current_job, now, 'schedule_ended', { schedule_id: s.id, status, reason }).execute();
    }
    return true;
  });
}

/** A job `hubId` may queue: its own, or one nobody owns (a dead hub's, released: src/store/sql/claims.ts releaseOwned). */
const mayRun = (hubId: string) => sql<boolean>`(hub_id = ${hubId} OR hub_id IS NULL)`;

/** Waiting jobs whose time has come that `hubId` would run (their dependencies may still hold them): another hub's are its to queue (its runner starts them). */
export async function dueWaiting(q: Q, now: number, hubId: string): Promise<JobRow[]> {
  return await q.selectFrom('jobs').selectAll().where('status', '=', 'waiting').where('not_before', 'is not', null).where('not_before', '<=', now)
    .where(mayRun(hubId)).orderBy('not_before').orderBy('seq').execute() as JobRow[];
}

/**
 * Queue a due job: waiting → queued only while it is still waiting and due, with its `due`
 * event, in one transaction. False when another tick (this hub's or another's) queued it first
 * (or it was cancelled meanwhile): no second `due`.
 */
export async function queueDue(q: Q, jobId: string, now: number): Promise<boolean> {
  return transact(q, async (trx) => {
    const won = await trx.updateTable('jobs').set({ status: 'queued', updated_at: now })
      .where('id', '=', jobId).where('status', '=', 'waiting').where('not_before', '<=', now)
      .returning('not_before').executeTakeFirst();
    if (!won) return false;
    await eventInsert(trx, jobId, now, 'due', { run_at: isoTime(won.not_before!), late_ms: now - won.not_before! }).execute();
    return true;
  });
}

/** The earliest time a waiting job `hubId` would run becomes due after `now`, if any. */
export async function nextDue(q: Q, now: number, hubId: string): Promise<number | undefined> {
  const r = await q.selectFrom('jobs').select((e) => e.fn.min('not_before').as('t')).where('status', '=', 'waiting').where('not_before', '>', now).where(mayRun(hubId)).executeTakeFirst();
  return r?.t === null || r?.t === undefined ? undefined : Number(r.t);
}

export type Occurrence = Pick<JobRow, 'id' | 'status' | 'occurrence' | 'not_before' | 'started_at' | 'ended_at' | 'failure_class'>;

/** The occurrences of a schedule, oldest first (the newest `limit`). */
export async function occurrences(q: Q, id: string, limit = 50): Promise<Occurrence[]> {
  const rows = await q.selectFrom('jobs').select(['id', 'status', 'occurrence', 'not_before', 'started_at', 'ended_at', 'failure_class'])
    .where('schedule_id', '=', id).orderBy('occurrence', 'desc').limit(limit).execute();
  return (rows as Occurrence[]).reverse();
}

/** The newest schedule ids, for "did you mean" errors. */
export async function recentScheduleIds(q: Q, max = 5): Promise<string[]> {
  return (await q.selectFrom('schedules').select('id').orderBy('seq', 'desc').limit(max).execute()).map((r) => r.id);
}
