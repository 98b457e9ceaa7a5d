// Reads for the dashboard's Timeline and Graph over the Kysely layer, on SQLite and PostgreSQL
// alike: the most recent jobs (a window by seq) and the dependency edges among them (their
// attempts: attemptsOfJobs in jobs.ts). Read-only; src/web/api/history.ts reads them in one snapshot.
import type { JobRow } from '../jobs.js';
import type { Q } from './tx.js';

export type HistoryJob = Pick<JobRow, 'id' | 'seq' | 'title' | 'status' | 'parent_id' | 'depth' | 'provider' | 'model' | 'workflow_id' | 'phase' | 'cycle' | 'created_at' | 'started_at' | 'ended_at' | 'failure_class' | 'cost_usd'>;

const JOB_COLS = ['id', 'seq', 'title', 'status', 'parent_id', 'depth', 'provider', 'model', 'workflow_id', 'phase', 'cycle', 'created_at', 'started_at', 'ended_at', 'failure_class', 'cost_usd'] as const;

/** The `limit` most recent jobs, oldest first. */
export async function recentHistory(q: Q, limit: number): Promise<HistoryJob[]> {
  return ((await q.selectFrom('jobs').select(JOB_COLS).orderBy('seq', 'desc').limit(limit).execute()) as HistoryJob[]).reverse();
}

/** These jobs (those that exist), by seq. */
export async function historyJobsByIds(q: Q, ids: readonly string[]): Promise<HistoryJob[]> {
  if (!ids.length) return [];
  return (await q.selectFrom('jobs').select(JOB_COLS).where('id', 'in', ids).orderBy('seq').execute()) as HistoryJob[];
}

/** Dependency edges touching these jobs (either end): `job_id` waits for `dep_id`. */
export async function depsTouching(q: Q, ids: readonly string[]): Promise<{ job_id: string; dep_id: string }[]> {
  if (!ids.length) return [];
  return q.selectFrom('job_deps').select(['job_id', 'dep_id']).where((e) => e.or([e('job_id', 'in', ids), e('dep_id', 'in', ids)])).orderBy('job_id').orderBy('dep_id').execute();
}
