// Health warnings of jobs (table job_warnings) over the layer (issue 29 step 3). The one decision:
// a (job, kind) has at most one open warning, so raising an open one again is a no-op. The check
// and the insert are one statement (INSERT … SELECT … WHERE NOT EXISTS); on SQLite that is atomic
// under the database's write lock; on PostgreSQL, under READ COMMITTED, two raisers could both see
// none open, so each first locks the job's row (SELECT … FOR UPDATE, docs/store-plan.md §2 tool 2)
// in a transaction: the second waits, then sees the first's.
import { sql } from 'kysely';
import { isPostgres, transact, type Q } from './tx.js';
import type { WarningKind, WarningRow } from '../warnings.js';


/** Open warnings, of one job or of all jobs, oldest first. */
export async function openWarnings(q: Q, jobId?: string): Promise<WarningRow[]> {
  let s = q.selectFrom('job_warnings').selectAll().where('cleared_at', 'is', null);
  if (jobId !== undefined) s = s.where('job_id', '=', jobId);
  return (await s.orderBy('id').execute()) as WarningRow[];
}

/** Raise `kind` on a job unless it is open already; returns the new row, or undefined. */
export async function raiseWarning(q: Q, jobId: string, kind: WarningKind, detail: string, now: number): Promise<WarningRow | undefined> {
  // One statement: inserted only when none is open. On SQLite a statement is atomic (no
  // transaction needed); on PostgreSQL the job's row lock makes the NOT EXISTS current.
  const insert = async (x: Q): Promise<WarningRow | undefined> => (await sql<WarningRow>`INSERT INTO job_warnings (job_id, kind, detail, raised_at)
    SELECT CAST(${jobId} AS TEXT), CAST(${kind} AS TEXT), CAST(${detail} AS TEXT), CAST(${now} AS BIGINT)
    WHERE NOT EXISTS (SELECT 1 FROM job_warnings WHERE job_id = ${jobId} AND kind = ${kind} AND cleared_at IS NULL)
    RETURNING *`.execute(x)).rows[0];
  if (!isPostgres(q)) return insert(q);
  return transact(q, async (trx) => {
    await trx.selectFrom('jobs').select('id').where('id', '=', jobId).forUpdate().execute();
    return insert(trx);
  });
}

/** Clear an open warning; true when one was open. */
export async function clearWarning(q: Q, jobId: string, kind: WarningKind, now: number): Promise<boolean> {
  const r = await q.updateTable('job_warnings').set({ cleared_at: now }).where('job_id', '=', jobId).where('kind', '=', kind).where('cleared_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** Clear every open warning of a job (it ended); how many were open. */
export async function clearJobWarnings(q: Q, jobId: string, now: number): Promise<number> {
  const r = await q.updateTable('job_warnings').set({ cleared_at: now }).where('job_id', '=', jobId).where('cleared_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

export async function setWarningReaction(q: Q, id: number, reaction: string): Promise<void> {
  await q.updateTable('job_warnings').set({ reaction }).where('id', '=', id).execute();
}

/** Open warnings of these jobs the lead has not been shown yet, oldest first (wait_for_agents' attention). */
export async function unseenWarnings(q: Q, jobIds: readonly string[]): Promise<WarningRow[]> {
  if (!jobIds.length) return [];
  return (await q.selectFrom('job_warnings').selectAll().where('cleared_at', 'is', null).where('lead_seen_at', 'is', null)
    .where('job_id', 'in', [...jobIds]).orderBy('id').execute()) as WarningRow[];
}

/** The lead has been shown these warnings (a warning seen once keeps its first time). */
export async function markWarningsSeen(q: Q, ids: readonly number[], now: number): Promise<void> {
  if (!ids.length) return;
  await q.updateTable('job_warnings').set({ lead_seen_at: now }).where('id', 'in', [...ids]).where('lead_seen_at', 'is', null).execute();
}

/** Open warnings of these jobs by job, each oldest first (a page of list_agents in one statement). */
export async function openWarningsOfJobs(q: Q, jobIds: readonly string[]): Promise<Map<string, WarningRow[]>> {
  const by = new Map<string, WarningRow[]>(jobIds.map((id) => [id, []]));
  if (!jobIds.length) return by;
  const rows = (await q.selectFrom('job_warnings').selectAll().where('cleared_at', 'is', null).where('job_id', 'in', [...new Set(jobIds)]).orderBy('id').execute()) as WarningRow[];
  for (const w of rows) by.get(w.job_id)?.push(w);
  return by;
}
