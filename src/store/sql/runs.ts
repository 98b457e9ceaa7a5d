// Dispatch runs on the layer (docs/dispatch.md; tables runs and run_tasks of migration 20): a run
// of a dispatch file and, per task, its state in the run and the job(s) it had. The one decision:
// a task is claimed once (`claimTask`, pending → started, in the transaction that creates its job),
// so two passes over one run — of this hub or of two hubs — never give a task two jobs.
import { sql } from 'kysely';
import { batch, isPostgres, transact, type Q } from './tx.js';
import type { JobRow } from '../jobs.js';

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'stopped' | 'timed_out' | 'cancelled';
/** pending: no job yet; started: job_id is its job; skipped: a dependency did not succeed; error: its job could not be created. */
export type TaskState = 'pending' | 'started' | 'skipped' | 'error';

export interface RunRow {
  id: string;
  title: string;
  file: string | null;
  content: string;
  format: string;
  rules_json: string;
  status: RunStatus;
  note: string | null;
  deadline_at: number | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface RunTaskRow {
  run_id: string;
  task_id: string;
  n: number;
  spec_json: string;
  state: TaskState;
  job_id: string | null;
  job_ids_json: string;
  error: string | null;
}

const RUN_COLUMNS = ['id', 'title', 'file', 'content', 'format', 'rules_json', 'status', 'note', 'deadline_at', 'created_at', 'updated_at', 'ended_at'] as const;

/** Newest first; on SQLite ties in the same millisecond by insertion (rowid), on PostgreSQL by id. */
const newestFirst = (q: Q) => (isPostgres(q) ? sql`id` : sql`rowid`);

/** A run with its tasks (each pending), together; `hub_id`: the hub that drives it (docs/store-plan.md §3.4). */
export async function insertRun(q: Q, run: Omit<RunRow, 'updated_at' | 'ended_at' | 'note'> & { hub_id: string }, tasks: readonly { id: string }[]): Promise<void> {
  await batch(q, [
    q.insertInto('runs').values({ ...run, kind: 'dispatch', note: null, updated_at: run.created_at, ended_at: null }),
    ...tasks.map((t, n) => q.insertInto('run_tasks').values({ run_id: run.id, task_id: t.id, n, spec_json: JSON.stringify(t), state: 'pending', job_id: null, job_ids_json: '[]', error: null })),
  ]);
}

export async function getRun(q: Q, id: string): Promise<RunRow | undefined> {
  return await q.selectFrom('runs').select(RUN_COLUMNS).where('id', '=', id).executeTakeFirst() as RunRow | undefined;
}

/** Runs of every kind (dispatch and script), newest first, with their kind. */
export async function listRuns(q: Q, limit: number): Promise<(RunRow & { kind: string })[]> {
  return await q.selectFrom('runs').select([...RUN_COLUMNS, 'kind']).orderBy('created_at', 'desc').orderBy(newestFirst(q), 'desc').limit(limit).execute() as (RunRow & { kind: string })[];
}

/** Dispatch runs still running, with the hub that drives each (null: nobody, adoptable). */
export async function runningRuns(q: Q): Promise<(RunRow & { hub_id: string | null })[]> {
  return await q.selectFrom('runs').select([...RUN_COLUMNS, 'hub_id']).where('status', '=', 'running').where('kind', '=', 'dispatch').orderBy('created_at').execute() as (RunRow & { hub_id: string | null })[];
}

/** Ids of runs that start with `prefix` (for CLI prefixes and "did you mean"), newest first. */
export async function runIds(q: Q, prefix = ''): Promise<string[]> {
  const like = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return (await q.selectFrom('runs').select('id').where(sql<boolean>`id LIKE ${like} ESCAPE '\\'`).orderBy('created_at', 'desc').limit(20).execute()).map((r) => r.id);
}

export async function runTasks(q: Q, runId: string): Promise<RunTaskRow[]> {
  return await q.selectFrom('run_tasks').selectAll().where('run_id', '=', runId).orderBy('n').execute() as RunTaskRow[];
}

/** The running run a job belongs to, if any. */
export async function runOfJob(q: Q, jobId: string): Promise<string | undefined> {
  const r = await q.selectFrom('run_tasks as t').innerJoin('runs as r', 'r.id', 't.run_id').select('t.run_id')
    .where('t.job_id', '=', jobId).where('r.status', '=', 'running').executeTakeFirst();
  return r?.run_id;
}

export async function updateRun(q: Q, id: string, f: Partial<Pick<RunRow, 'status' | 'note' | 'deadline_at' | 'ended_at'>>, now: number): Promise<void> {
  if (!Object.keys(f).length) return;
  await q.updateTable('runs').set({ ...f, updated_at: now }).where('id', '=', id).execute();
}

export async function setTask(q: Q, runId: string, taskId: string, f: Partial<Pick<RunTaskRow, 'state' | 'job_id' | 'job_ids_json' | 'error'>>): Promise<void> {
  if (!Object.keys(f).length) return;
  await q.updateTable('run_tasks').set(f).where('run_id', '=', runId).where('task_id', '=', taskId).execute();
}

/**
 * A pending task gets its job: pending → started with `jobId` appended to its jobs, one
 * conditional statement (run inside the transaction that inserts the job). False when it was no
 * longer pending — another pass claimed it first — and the caller aborts that job's creation.
 */
export async function claimTask(q: Q, runId: string, taskId: string, jobId: string): Promise<boolean> {
  const t = await q.selectFrom('run_tasks').select('job_ids_json').where('run_id', '=', runId).where('task_id', '=', taskId).executeTakeFirst();
  if (!t) return false;
  const ids = JSON.stringify([...(JSON.parse(t.job_ids_json) as string[]), jobId]);
  const r = await q.updateTable('run_tasks').set({ state: 'started', job_id: jobId, job_ids_json: ids, error: null })
    .where('run_id', '=', runId).where('task_id', '=', taskId).where('state', '=', 'pending').where('job_ids_json', '=', t.job_ids_json).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The jobs of `ids` by id (a run's view and pass read them together). */
export async function jobsById(q: Q, ids: readonly string[]): Promise<Map<string, JobRow>> {
  if (!ids.length) return new Map();
  const rows = await q.selectFrom('jobs').selectAll().where('id', 'in', [...ids]).execute() as JobRow[];
  return new Map(rows.map((j) => [j.id, j]));
}

/**
 * resume: the run running again, driven by `hubId`, and the tasks in `taskIds` pending again,
 * together — only from an ended run: of two resumes at once (two leads, two hubs) one gets true,
 * the other false and changes nothing.
 */
export async function reopenRun(q: Q, runId: string, taskIds: readonly string[], deadlineAt: number | null, now: number, hubId: string): Promise<boolean> {
  return transact(q, async (trx) => {
    const r = await trx.updateTable('runs').set({ status: 'running', note: null, ended_at: null, deadline_at: deadlineAt, updated_at: now, hub_id: hubId })
      .where('id', '=', runId).where('status', '<>', 'running').executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) return false;
    for (const id of taskIds) await trx.updateTable('run_tasks').set({ state: 'pending', job_id: null, error: null }).where('run_id', '=', runId).where('task_id', '=', id).execute();
    return true;
  });
}
