// What a test reads of a hub's state, through the hub's own layer (`hub.ctx.sql`), so the same test
// runs on SQLite and on PostgreSQL: the job readers of src/store/sql/jobs.ts with the hub's
// connection filled in, and `rows`/`row` for a query a test writes itself with Kysely's `sql`
// tag (its parameters become `?` on SQLite and `$1` on PostgreSQL):
//   const r = await row(h.hub, sql<{ holder: string }>`SELECT holder FROM locks WHERE path = ${p}`);
import type { RawBuilder } from 'kysely';
import type { Hub } from '../../src/hub.js';
import type { AttemptRow, JobRow, MessageRow } from '../../src/store/jobs.js';
import type { JobStatus } from '../../src/domain/job.js';
import { attemptsOf, getJob, jobsByStatus, listJobs, type JobFilter } from '../../src/store/sql/jobs.js';
import { latestEvents, type EventRow } from '../../src/store/sql/events.js';
import { undelivered } from '../../src/store/sql/messages.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { getRequest, lateOf, type FullRequestRow, type LateAnswerRow } from '../../src/store/sql/requests.js';

type HubLike = Pick<Hub, 'ctx'>;

const q = (hub: HubLike) => hub.ctx.sql.db;

/** The job's row, or undefined. */
export const jobOf = (hub: HubLike, id: string): Promise<JobRow | undefined> => getJob(q(hub), id);

/** The job's row; throws when there is none (a test's precondition). */
export async function job(hub: HubLike, id: string): Promise<JobRow> {
  const j = await getJob(q(hub), id);
  if (!j) throw new Error(`no job ${id} in the hub's state`);
  return j;
}

/** The job's attempts, oldest first. */
export const attempts = (hub: HubLike, id: string): Promise<AttemptRow[]> => attemptsOf(q(hub), id);

/** The job's last `limit` events, oldest first. */
export async function events(hub: HubLike, id: string, limit = 200): Promise<EventRow[]> {
  return (await latestEvents(q(hub), { jobId: id, limit })).reverse();
}

export const byStatus = (hub: HubLike, ...statuses: JobStatus[]): Promise<JobRow[]> => jobsByStatus(q(hub), ...statuses);

export const jobs = (hub: HubLike, f: JobFilter): Promise<JobRow[]> => listJobs(q(hub), f);

/** Messages stored for `to` and not yet delivered into its conversation, oldest first. */
export const undeliveredTo = (hub: HubLike, to: string): Promise<MessageRow[]> => undelivered(q(hub), to);

/** The request's row, or undefined. */
export const request = (hub: HubLike, id: string): Promise<FullRequestRow | undefined> => getRequest(q(hub), id);

/** The late answers recorded for a request, oldest first. */
export const lateAnswers = (hub: HubLike, requestId: string): Promise<LateAnswerRow[]> => lateOf(q(hub), requestId);

/** `SELECT count(*) …` as a number on both databases (PostgreSQL returns count(*) as a string). */
export async function count(hub: HubLike, query: RawBuilder<{ n: unknown }>): Promise<number> {
  return Number((await row(hub, query))?.n ?? 0);
}

/** The rows of a query written with Kysely's `sql` tag, on the hub's database. */
export async function rows<T>(hub: HubLike, query: RawBuilder<T>): Promise<T[]> {
  return (await query.execute(q(hub))).rows;
}

/** The first row of such a query, or undefined. */
export async function row<T>(hub: HubLike, query: RawBuilder<T>): Promise<T | undefined> {
  return (await rows(hub, query))[0];
}

/**
 * The database of a hub that stopped, opened as the hub opens it (its configuration's home and
 * databaseUrl: the same SQLite file or PostgreSQL database), for a test that leaves rows as a crash
 * would before the next hub starts on it. Close it before that hub starts.
 */
export function reopen(hub: HubLike): Promise<SqlDb> {
  return openSql(hub.ctx.config);
}

/** Dependency rows (depsOf, statusOf) as id and status only: what the tests of their order and status compare. */
export const idStatus = (rows: readonly { id: string; status: string }[]): { id: string; status: string }[] => rows.map(({ id, status }) => ({ id, status }));
