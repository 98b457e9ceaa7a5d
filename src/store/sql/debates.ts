// Debates on the layer (src/debate; tables debates and debate_turns of migration 21). Decisions,
// each one conditional statement (docs/store-plan.md §2): a turn gets its job once (`recordTurn`,
// inside the job's transaction: a second advance of the same round makes no second job), a turn's
// answer is recorded once (`settleTurn`: only while it is running with that job), and a debate
// ends once (`endDebate`: only while it is running).
import { sql, type Selectable } from 'kysely';
import { isPostgres, type Q } from './tx.js';
import type { DebateTurnsTable, DebatesTable } from './schema.js';

export type DebateRow = Omit<Selectable<DebatesTable>, 'hub_id'>;
export type TurnRow = Selectable<DebateTurnsTable>;
export type DebateStatus = DebateRow['status'];
export type TurnKeyRow = Pick<TurnRow, 'debate_id' | 'loop' | 'kind' | 'round' | 'side'>;

const DEBATE_COLUMNS = ['id', 'title', 'task', 'status', 'cwd', 'repo_root', 'worktree_path', 'branch', 'base_commit', 'sides_json', 'max_rounds', 'loops',
  'post_action', 'post_action_side', 'verify', 'error', 'project', 'created_at', 'updated_at', 'ended_at'] as const;

/** Newest first; on SQLite ties in the same millisecond by insertion (rowid), on PostgreSQL by id. */
const tie = (q: Q) => (isPostgres(q) ? sql`id` : sql`rowid`);

/** `hub_id`: the hub that drives it (docs/store-plan.md §3.4). */
export async function insertDebate(q: Q, d: Omit<DebateRow, 'updated_at'> & { hub_id: string }): Promise<void> {
  await q.insertInto('debates').values({ ...d, updated_at: d.created_at }).execute();
}

/** Running debates, oldest first, with the hub that drives each (null: nobody, adoptable). */
export async function runningDebates(q: Q): Promise<{ id: string; hub_id: string | null }[]> {
  return q.selectFrom('debates').select(['id', 'hub_id']).where('status', '=', 'running').orderBy('created_at').orderBy('id').execute();
}

export async function getDebate(q: Q, id: string): Promise<DebateRow | undefined> {
  return await q.selectFrom('debates').select(DEBATE_COLUMNS).where('id', '=', id).executeTakeFirst() as DebateRow | undefined;
}

export async function listDebates(q: Q, status: DebateStatus | undefined, limit: number): Promise<DebateRow[]> {
  let s = q.selectFrom('debates').select(DEBATE_COLUMNS);
  if (status) s = s.where('status', '=', status);
  return await s.orderBy('created_at', 'desc').orderBy(tie(q), 'desc').limit(limit).execute() as DebateRow[];
}

export async function recentDebateIds(q: Q, n = 5): Promise<string[]> {
  return (await q.selectFrom('debates').select('id').orderBy('created_at', 'desc').orderBy(tie(q), 'desc').limit(n).execute()).map((r) => r.id);
}

/** Ids that start with `prefix` (the CLI's short ids), newest first. */
export async function debateIdsWithPrefix(q: Q, prefix: string): Promise<string[]> {
  return (await q.selectFrom('debates').select('id').where(sql<boolean>`substr(id, 1, ${prefix.length}) = ${prefix}`)
    .orderBy('created_at', 'desc').limit(20).execute()).map((r) => r.id);
}

/** End a running debate (its outcome, failed or cancelled). False when it had ended already: nothing changes. */
export async function endDebate(q: Q, id: string, patch: Pick<DebateRow, 'status'> & Partial<Pick<DebateRow, 'error'>>, now: number): Promise<boolean> {
  const r = await q.updateTable('debates').set({ ...patch, ended_at: now, updated_at: now }).where('id', '=', id).where('status', '=', 'running').executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** A debate that could not start: its rows go (nothing half-created). */
export async function deleteDebate(q: Q, id: string): Promise<void> {
  await q.deleteFrom('debate_turns').where('debate_id', '=', id).execute();
  await q.deleteFrom('debates').where('id', '=', id).execute();
}

export async function turnsOf(q: Q, id: string): Promise<TurnRow[]> {
  return await q.selectFrom('debate_turns').selectAll().where('debate_id', '=', id).orderBy('loop').orderBy('round').orderBy('kind').orderBy('side').execute();
}

export async function turnByJob(q: Q, jobId: string): Promise<TurnRow | undefined> {
  return await q.selectFrom('debate_turns').selectAll().where('job_id', '=', jobId).executeTakeFirst();
}

/**
 * A turn gets `jobId` (inside the transaction that creates the job): a new turn is inserted only
 * when no row has its key yet; a turn whose job was interrupted gets the new job only while it
 * still has `replacing`. False: another advance recorded the turn first — abort that job.
 */
export async function recordTurn(q: Q, t: TurnKeyRow, jobId: string, now: number, replacing?: string): Promise<boolean> {
  if (replacing === undefined) {
    const r = await q.insertInto('debate_turns').values({ ...t, job_id: jobId, status: 'running', verdict: null, position: null, reasoning: null, open_points: null, text: null, error: null, created_at: now, ended_at: null })
      .onConflict((oc) => oc.columns(['debate_id', 'loop', 'kind', 'round', 'side']).doNothing()).returning('job_id').executeTakeFirst();
    return r !== undefined;
  }
  const r = await q.updateTable('debate_turns').set({ job_id: jobId, status: 'running', error: null, ended_at: null })
    .where('debate_id', '=', t.debate_id).where('loop', '=', t.loop).where('kind', '=', t.kind).where('round', '=', t.round).where('side', '=', t.side)
    .where('job_id', '=', replacing).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export type TurnResult = Partial<Pick<TurnRow, 'verdict' | 'position' | 'reasoning' | 'open_points' | 'text' | 'error'>> & { status: 'done' | 'failed' };

/** Record what a turn's job answered, once: only while the turn is running with that job. False: recorded already (by another hub or call). */
export async function settleTurn(q: Q, jobId: string, r: TurnResult, now: number): Promise<boolean> {
  const u = await q.updateTable('debate_turns').set({ verdict: null, position: null, reasoning: null, open_points: null, text: null, error: null, ...r, ended_at: now })
    .where('job_id', '=', jobId).where('status', '=', 'running').executeTakeFirst();
  return Number(u.numUpdatedRows) > 0;
}

/** The status and cost of the jobs of `turns`, by id (a debate's view). */
export async function turnJobs(q: Q, turns: readonly Pick<TurnRow, 'job_id'>[]): Promise<Map<string, { status: string; cost_usd: number }>> {
  const ids = [...new Set(turns.map((t) => t.job_id))];
  if (!ids.length) return new Map();
  const rows = await q.selectFrom('jobs').select(['id', 'status', 'cost_usd']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, { status: r.status, cost_usd: Number(r.cost_usd) }]));
}
