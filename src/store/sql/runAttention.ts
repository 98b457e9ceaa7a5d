// What the lead's wait_for_agents is told about its own script runs (src/services/runAttention.ts),
// over the Kysely layer on SQLite and PostgreSQL: runs that ended and approve() calls waiting for
// the person, each until it is marked told. A hub's bundled scripts (rules_json.bundled set: the
// implement/review workflow) are not the lead's runs and are left out.
import { sql } from 'kysely';
import { isPostgres } from './tx.js';
import type { Q } from './tx.js';

export interface EndedRunRow { id: string; title: string; status: string; note: string | null; ended_at: number | null }
export interface WaitingApproveRow { run_id: string; title: string; seq: number; request_id: string; label: string | null; summary: string; who: string; created_at: number }

/** `rules_json.bundled` is absent or JSON null (SQLite json_extract and PostgreSQL ->> both give SQL NULL for either). */
const notBundled = (q: Q, col: 'rules_json' | 'r.rules_json') =>
  isPostgres(q) ? sql<boolean>`(${sql.ref(col)}::jsonb ->> 'bundled') IS NULL` : sql<boolean>`json_extract(${sql.ref(col)}, '$.bundled') IS NULL`;

/** The lead's script runs that ended and were not told yet, in the order they ended. */
export async function untoldEndedRuns(q: Q): Promise<EndedRunRow[]> {
  return q.selectFrom('runs').select(['id', 'title', 'status', 'note', 'ended_at'])
    .where('kind', '=', 'script').where('status', '!=', 'running').where('lead_seen_at', 'is', null).where(notBundled(q, 'rules_json'))
    .orderBy('ended_at').orderBy('id').execute();
}

/** approve() calls of the lead's running script runs whose request waits and was not told yet. */
export async function untoldWaitingApproves(q: Q): Promise<WaitingApproveRow[]> {
  return (await q.selectFrom('script_calls as c')
    .innerJoin('runs as r', 'r.id', 'c.run_id')
    .innerJoin('requests as q', 'q.id', 'c.request_id')
    .select(['c.run_id', 'r.title', 'c.seq', 'q.id as request_id', 'c.label', 'q.summary', 'q.who', 'q.created_at'])
    .where('c.kind', '=', 'approve').where('c.status', '=', 'running').where('r.status', '=', 'running').where(notBundled(q, 'r.rules_json'))
    .where('q.status', '=', 'pending').where('q.lead_seen_at', 'is', null)
    .orderBy('q.created_at').orderBy('q.id').execute());
}

/** Record runs' ends as told to the lead (the first time only). */
export async function markRunsTold(q: Q, ids: readonly string[], now: number): Promise<void> {
  if (ids.length === 0) return;
  await q.updateTable('runs').set({ lead_seen_at: now }).where('id', 'in', [...ids]).where('lead_seen_at', 'is', null).execute();
}
