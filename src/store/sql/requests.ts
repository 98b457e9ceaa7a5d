// Request rows over the Kysely layer, on SQLite and PostgreSQL alike: approvals, questions and
// permission prompts waiting for the person or the lead, the answers that arrived after their
// request had closed (late answers, kept and shown), and the asking job's `needs_input`.
// The decisions (docs/store-plan.md §2, "Request answers"):
//   - a request is answered once: the close is one conditional statement, `UPDATE … WHERE id = ?
//     AND status = 'pending'`; whoever finds it closed records a late answer instead;
//   - the job shows needs_input exactly while it has a pending request: opening and closing a
//     request of a job first lock the job's row (PostgreSQL `SELECT … FOR UPDATE`; SQLite's
//     IMMEDIATE transaction holds the whole file), so two closes of one job's two requests on two
//     connections run one after the other and the second sees the first's close when it recounts
//     (without the lock each sees the other still pending and neither clears needs_input).
import type { Selectable } from 'kysely';
import { isPostgres, transact, type Q } from './tx.js';
import type { RequestLateAnswersTable, RequestsTable } from './schema.js';
import type { Who } from '../../contract/coord.js';

export type { Who };

export type FullRequestRow = RequestsTable & { who: Who };

/** A late answer's row. */
export type LateAnswerRow = Selectable<RequestLateAnswersTable>;

export type NewRequest = Omit<FullRequestRow, 'status' | 'decision' | 'answer' | 'comment' | 'answered_at' | 'answered_by' | 'lead_seen_at'>;

/** How a request closes: its new status and what was answered. */
export interface Closing {
  status: 'answered' | 'timed_out' | 'cancelled';
  decision?: string | null;
  answer?: string | null;
  comment?: string | null;
  by: string;
}

/** What a close did: `closed` false when it was no longer pending (someone else closed it). */
export interface Closed {
  closed: boolean;
  job_id: string;
  /** The job's status after it (undefined: no such job, e.g. a script run's request). */
  job_status: string | undefined;
}

/** Lock the job's row for the rest of the transaction (PostgreSQL); a job that does not exist locks nothing. */
async function lockJob(trx: Q, jobId: string): Promise<void> {
  if (isPostgres(trx)) await trx.selectFrom('jobs').select('id').where('id', '=', jobId).forUpdate().execute();
}

async function jobStatus(q: Q, jobId: string): Promise<string | undefined> {
  return (await q.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirst())?.status;
}

const insertRow = (q: Q, r: NewRequest) => q.insertInto('requests').values({ ...r, status: 'pending' }).execute();

/**
 * Open a request an agent waits on: the row, and its job (when running) shows needs_input.
 * Returns the job's status after it.
 */
export async function openRequest(q: Q, r: NewRequest, now: number): Promise<string | undefined> {
  return transact(q, async (trx) => {
    await lockJob(trx, r.job_id);
    await insertRow(trx, r);
    await trx.updateTable('jobs').set({ status: 'needs_input', updated_at: now }).where('id', '=', r.job_id).where('status', '=', 'running').execute();
    return jobStatus(trx, r.job_id);
  });
}

/** Open a request nobody blocks on (the hub's own: a workflow's plan approval); the job's status is left alone. */
export async function insertRequest(q: Q, r: NewRequest): Promise<void> {
  await insertRow(q, r);
}

/**
 * Close a pending request (answered, timed out, cancelled) and recount its job's pending
 * requests: none left → a needs_input job is running again. `closed: false` when it had closed
 * already; undefined when there is no such request.
 */
export async function closeRequest(q: Q, id: string, c: Closing, now: number): Promise<Closed | undefined> {
  return transact(q, async (trx) => {
    const row = await trx.selectFrom('requests').select('job_id').where('id', '=', id).executeTakeFirst();
    if (!row) return undefined;
    await lockJob(trx, row.job_id);
    const closed = Number((await trx.updateTable('requests')
      .set({ status: c.status, decision: c.decision ?? null, answer: c.answer ?? null, comment: c.comment ?? null, answered_by: c.by, answered_at: now })
      .where('id', '=', id).where('status', '=', 'pending').executeTakeFirst()).numUpdatedRows) > 0;
    if (closed && (await pendingOf(trx, row.job_id)) === 0) {
      await trx.updateTable('jobs').set({ status: 'running', updated_at: now }).where('id', '=', row.job_id).where('status', '=', 'needs_input').execute();
    }
    return { closed, job_id: row.job_id, job_status: await jobStatus(trx, row.job_id) };
  });
}

export interface AnswerOutcome extends Closed {
  /** Set when the request had closed before: the late answer's row id. */
  late_id?: number;
}

/**
 * Answer a request: it closes as answered when still pending, else the answer is kept as a late
 * answer (never dropped). One transaction: of two answerers at once, one answers, one is late.
 */
export async function answerRequest(q: Q, id: string, a: { decision?: string | null; answer?: string | null; comment?: string | null; by: string; leadSeen?: boolean }, now: number): Promise<AnswerOutcome | undefined> {
  return transact(q, async (trx) => {
    const c = await closeRequest(trx, id, { status: 'answered', decision: a.decision, answer: a.answer, comment: a.comment, by: a.by }, now);
    if (!c || c.closed) return c;
    const late = await trx.insertInto('request_late_answers').values({
      request_id: id, job_id: c.job_id, answered_by: a.by, decision: a.decision ?? null, answer: a.answer ?? null, comment: a.comment ?? null,
      at: now, lead_seen_at: a.leadSeen ? now : null,
    }).returning('id').executeTakeFirstOrThrow();
    return { ...c, late_id: late.id };
  });
}

/** Cancel every pending request of an ended job, except those with tool_name `keepToolName`; their ids. */
export async function cancelPendingOf(q: Q, jobId: string, now: number, keepToolName: string): Promise<string[]> {
  const rows = await q.updateTable('requests')
    .set({ status: 'cancelled', comment: 'the agent is no longer running', answered_by: 'hub', answered_at: now })
    .where('job_id', '=', jobId).where('status', '=', 'pending')
    .where((eb) => eb.or([eb('tool_name', 'is', null), eb('tool_name', '!=', keepToolName)]))
    .returning('id').execute();
  return rows.map((r) => r.id);
}

/** Pending requests with their job's status (undefined: no such job), oldest first: the hub's start reconciles them. */
export async function pendingWithJobs(q: Q): Promise<{ id: string; job_id: string; tool_name: string | null; job_status: string | null }[]> {
  return q.selectFrom('requests').leftJoin('jobs', 'jobs.id', 'requests.job_id')
    .select(['requests.id', 'requests.job_id', 'requests.tool_name', 'jobs.status as job_status'])
    .where('requests.status', '=', 'pending').orderBy('requests.created_at').orderBy('requests.id').execute();
}

export async function getRequest(q: Q, id: string): Promise<FullRequestRow | undefined> {
  return (await q.selectFrom('requests').selectAll().where('id', '=', id).executeTakeFirst()) as FullRequestRow | undefined;
}

export async function listRequests(q: Q, status: string, limit: number): Promise<FullRequestRow[]> {
  const base = q.selectFrom('requests').selectAll();
  const rows = status === 'all'
    ? await base.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
    : await base.where('status', '=', status).orderBy('created_at').orderBy('id').limit(limit).execute();
  return rows as FullRequestRow[];
}

/** Pending requests of these jobs, oldest first. */
export async function pendingFor(q: Q, jobIds: readonly string[]): Promise<FullRequestRow[]> {
  if (jobIds.length === 0) return [];
  return (await q.selectFrom('requests').selectAll().where('status', '=', 'pending').where('job_id', 'in', [...jobIds])
    .orderBy('created_at').orderBy('id').execute()) as FullRequestRow[];
}

/** The newest `limit` requests of one job, oldest of them first (get_agent). */
export async function requestsOfJob(q: Q, jobId: string, limit: number): Promise<FullRequestRow[]> {
  return ((await q.selectFrom('requests').selectAll().where('job_id', '=', jobId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()) as FullRequestRow[]).reverse();
}

/** A job's pending requests, counted. */
export async function pendingOf(q: Q, jobId: string): Promise<number> {
  const r = await q.selectFrom('requests').select((eb) => eb.fn.countAll<number | string>().as('c')).where('job_id', '=', jobId).where('status', '=', 'pending').executeTakeFirstOrThrow();
  return Number(r.c);
}

/** Ids of the most recent requests (to name some when an id is not found). */
export async function recentRequestIds(q: Q, max = 5): Promise<string[]> {
  return (await q.selectFrom('requests').select('id').orderBy('created_at', 'desc').orderBy('id', 'desc').limit(max).execute()).map((r) => r.id);
}

/** Record that a lead was shown these requests (the first time only). */
export async function markLeadSeen(q: Q, ids: readonly string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await q.updateTable('requests').set({ lead_seen_at: now }).where('id', 'in', [...ids]).where('lead_seen_at', 'is', null).execute();
}

// ---- late answers ------------------------------------------------------------------------

export async function lateOf(q: Q, requestId: string): Promise<LateAnswerRow[]> {
  return q.selectFrom('request_late_answers').selectAll().where('request_id', '=', requestId).orderBy('id').execute();
}

/** Late answers of these requests, by request id, each list oldest first. */
export async function lateOfMany(q: Q, requestIds: readonly string[]): Promise<Map<string, LateAnswerRow[]>> {
  const by = new Map<string, LateAnswerRow[]>();
  if (requestIds.length === 0) return by;
  for (const l of await q.selectFrom('request_late_answers').selectAll().where('request_id', 'in', [...new Set(requestIds)]).orderBy('id').execute()) {
    const list = by.get(l.request_id) ?? [];
    list.push(l);
    by.set(l.request_id, list);
  }
  return by;
}

/** Requests with late answers, the most recent late answer first. */
export async function requestsWithLate(q: Q, limit: number): Promise<string[]> {
  return (await q.selectFrom('request_late_answers').select('request_id').groupBy('request_id')
    .orderBy((eb) => eb.fn.max('id'), 'desc').limit(limit).execute()).map((r) => r.request_id);
}

/** Late answers on these jobs' requests that no lead has been shown yet. */
export async function unseenLate(q: Q, jobIds: readonly string[]): Promise<LateAnswerRow[]> {
  if (jobIds.length === 0) return [];
  return q.selectFrom('request_late_answers').selectAll().where('lead_seen_at', 'is', null).where('job_id', 'in', [...jobIds]).orderBy('id').execute();
}

export async function markLateSeen(q: Q, ids: readonly number[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await q.updateTable('request_late_answers').set({ lead_seen_at: now }).where('id', 'in', [...ids]).execute();
}
