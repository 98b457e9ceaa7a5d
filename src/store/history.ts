// Reads for the dashboard's Timeline and Graph: the most recent jobs (a window by seq), their
// attempts, and the dependency edges among them. Read-only.
import type { Db } from './db.js';
import type { AttemptRow, JobRow } from './jobs.js';

export type HistoryJob = Pick<JobRow, 'id' | 'seq' | 'title' | 'status' | 'parent_id' | 'depth' | 'provider' | 'model' | 'workflow_id' | 'phase' | 'cycle' | 'created_at' | 'started_at' | 'ended_at' | 'failure_class' | 'cost_usd'>;
export type HistoryAttempt = Pick<AttemptRow, 'job_id' | 'n' | 'kind' | 'status' | 'started_at' | 'ended_at' | 'failure_class' | 'turns' | 'cost_usd'>;

const JOB_COLS = 'id, seq, title, status, parent_id, depth, provider, model, workflow_id, phase, cycle, created_at, started_at, ended_at, failure_class, cost_usd';
const marks = (n: number): string => Array.from({ length: n }, () => '?').join(',');

/** The `limit` most recent jobs, oldest first. */
export function recentJobs(db: Db, limit: number): HistoryJob[] {
  return (db.prepare(`SELECT ${JOB_COLS} FROM jobs ORDER BY seq DESC LIMIT ?`).all(limit) as HistoryJob[]).reverse();
}

/** These jobs (those that exist), by seq. */
export function jobsByIds(db: Db, ids: readonly string[]): HistoryJob[] {
  if (!ids.length) return [];
  return db.prepare(`SELECT ${JOB_COLS} FROM jobs WHERE id IN (${marks(ids.length)}) ORDER BY seq`).all(...ids) as HistoryJob[];
}

/** Every attempt of these jobs, by job then n. */
export function attemptsOfJobs(db: Db, ids: readonly string[]): HistoryAttempt[] {
  if (!ids.length) return [];
  return db.prepare(`SELECT job_id, n, kind, status, started_at, ended_at, failure_class, turns, cost_usd FROM attempts WHERE job_id IN (${marks(ids.length)}) ORDER BY job_id, n`)
    .all(...ids) as HistoryAttempt[];
}

/** Dependency edges touching these jobs (either end): `job_id` waits for `dep_id`. */
export function depsTouching(db: Db, ids: readonly string[]): { job_id: string; dep_id: string }[] {
  if (!ids.length) return [];
  return db.prepare(`SELECT job_id, dep_id FROM job_deps WHERE job_id IN (${marks(ids.length)}) OR dep_id IN (${marks(ids.length)}) ORDER BY job_id, dep_id`)
    .all(...ids, ...ids) as { job_id: string; dep_id: string }[];
}
