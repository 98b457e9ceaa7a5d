// Send-backs (table job_send_backs, docs/decisions.md "Send back"), on SQLite and PostgreSQL: a
// worktree job whose merge failed, what failed, and how many times its branch went back to its
// agent. The decisions are conditional updates (one statement each, so the same on both
// databases and across hubs): a round is taken only from `failed` and only under the bound, and a
// sent-back job's re-merge is claimed once (`out` → `merging`), so two hubs hearing its end do
// not both merge it.
import type { Q } from './tx.js';

export type SendBackStatus = 'failed' | 'out' | 'merging' | 'asked' | 'merged' | 'stopped';
export type SendBackReason = 'checks_failed' | 'conflict';

export interface SendBackRow {
  job_id: string;
  round: number;
  max_rounds: number;
  status: SendBackStatus;
  reason: SendBackReason;
  detail_json: string;
  options_json: string;
  request_id: string | null;
  updated_at: number;
}

const asRow = (r: Record<string, unknown> | undefined): SendBackRow | undefined =>
  r && ({ ...(r as unknown as SendBackRow), round: Number(r.round), max_rounds: Number(r.max_rounds), updated_at: Number(r.updated_at) });

export async function getSendBack(q: Q, jobId: string): Promise<SendBackRow | undefined> {
  return asRow(await q.selectFrom('job_send_backs').selectAll().where('job_id', '=', jobId).executeTakeFirst());
}

/** The send-backs of these jobs (list_agents reads a page at once). */
export async function sendBacksOf(q: Q, ids: readonly string[]): Promise<Map<string, SendBackRow>> {
  if (ids.length === 0) return new Map();
  const rows = await q.selectFrom('job_send_backs').selectAll().where('job_id', 'in', [...ids]).execute();
  return new Map(rows.map((r) => [r.job_id, asRow(r)!]));
}

/**
 * A merge of the job failed: record what failed (status `failed`), keeping the rounds already
 * taken and the bound first recorded. Not while it is sent back (`out`): that job is not mergeable.
 */
export async function recordFailure(q: Q, jobId: string, f: { reason: SendBackReason; detail: unknown; options: unknown; maxRounds: number; now: number }): Promise<void> {
  const values = { status: 'failed', reason: f.reason, detail_json: JSON.stringify(f.detail), options_json: JSON.stringify(f.options), updated_at: f.now };
  await q.insertInto('job_send_backs').values({ job_id: jobId, max_rounds: f.maxRounds, request_id: null, ...values })
    .onConflict((oc) => oc.column('job_id').doUpdateSet(values)).execute();
}

/**
 * Take the next round: `failed` → `out`, round + 1, only while round < max_rounds. Returns the
 * new round, or undefined when the row is not `failed` (someone else took it, or nothing failed)
 * or the bound is reached.
 */
export async function takeRound(q: Q, jobId: string, now: number): Promise<number | undefined> {
  const r = await q.updateTable('job_send_backs').set((eb) => ({ status: 'out', round: eb('round', '+', 1), updated_at: now }))
    .where('job_id', '=', jobId).where('status', '=', 'failed').whereRef('round', '<', 'max_rounds').executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) return undefined;
  return (await getSendBack(q, jobId))?.round;
}

/** Undo a round taken when the resume that should follow it was refused: `out` → `failed`, round − 1. */
export async function giveBackRound(q: Q, jobId: string, now: number): Promise<void> {
  await q.updateTable('job_send_backs').set((eb) => ({ status: 'failed', round: eb('round', '-', 1), updated_at: now }))
    .where('job_id', '=', jobId).where('status', '=', 'out').execute();
}

/** Move the row from one of `from` to `to` (the conditional update decides who does what follows); true when it moved. */
export async function moveSendBack(q: Q, jobId: string, from: readonly SendBackStatus[], to: SendBackStatus, now: number, extra: { request_id?: string } = {}): Promise<boolean> {
  const r = await q.updateTable('job_send_backs').set({ status: to, updated_at: now, ...extra })
    .where('job_id', '=', jobId).where('status', 'in', [...from]).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The view get_agent and list_agents show as `send_back` (undefined: the job never failed a merge). */
export function sendBackView(row: SendBackRow | undefined): { round: number; max: number; status: string; reason: string; request_id?: string } | undefined {
  if (!row) return undefined;
  return { round: row.round, max: row.max_rounds, status: row.status, reason: row.reason, ...(row.request_id ? { request_id: row.request_id } : {}) };
}

/** Sent-back jobs whose end no hub acted on (the hub stopped between the job's end and its re-merge): id and how the job ended. */
export async function outButEnded(q: Q): Promise<{ job_id: string; status: string }[]> {
  return q.selectFrom('job_send_backs').innerJoin('jobs', 'jobs.id', 'job_send_backs.job_id')
    .select(['job_send_backs.job_id as job_id', 'jobs.status as status'])
    .where('job_send_backs.status', '=', 'out').where('jobs.status', 'in', ['succeeded', 'failed', 'cancelled']).execute();
}
