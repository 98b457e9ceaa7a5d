// The events table read over the layer (issue 29 step 3): the most recent entries of one job or of
// all. Appends stay with the synchronous JobStore.addEvent until the engine moves (step 6).
import type { Q } from './tx.js';

export interface EventRow {
  id: number;
  job_id: string;
  at: number;
  kind: string;
  data_json: string | null;
}

/** The most recent `limit` events (of one job, or of all), newest first. */
export async function latestEvents(q: Q, o: { jobId?: string | undefined; limit: number }): Promise<EventRow[]> {
  let s = q.selectFrom('events').select(['id', 'job_id', 'at', 'kind', 'data_json']);
  if (o.jobId !== undefined) s = s.where('job_id', '=', o.jobId);
  return s.orderBy('id', 'desc').limit(o.limit).execute();
}

/** Append an event to a job's log. */
export async function appendEvent(q: Q, jobId: string, at: number, kind: string, data?: unknown): Promise<void> {
  await q.insertInto('events').values({ job_id: jobId, at, kind, data_json: data === undefined ? null : JSON.stringify(data) }).execute();
}
