// Who drives a run, workflow or debate, decided by the database (docs/store-plan.md §2, §3.4;
// who runs a job: claimJob of ./jobs.ts). Each decision is one conditional UPDATE (compare-and-set): under
// PostgreSQL's READ COMMITTED a second UPDATE of the same row waits for the first to commit and
// re-checks its WHERE, and SQLite has one writer at a time; so of any number of hubs that try,
// one gets the row back and the others get nothing.
import type { Kysely, Transaction } from 'kysely';
import type { Schema } from './schema.js';

export type OwnedKind = 'runs' | 'workflows' | 'debates';

/**
 * Take over driving a run, workflow or debate: when it has no owner, is this hub's already, or its
 * owner was found dead or stopped (a clean stop leaves its script runs for the next hub). True when this hub drives it now.
 */
export async function adopt(db: Kysely<Schema>, table: OwnedKind, id: string, hubId: string): Promise<boolean> {
  const r = await db.updateTable(table).set({ hub_id: hubId })
    .where('id', '=', id)
    .where((eb) => eb.or([
      eb('hub_id', 'is', null), eb('hub_id', '=', hubId),
      eb('hub_id', 'in', eb.selectFrom('hubs').select('id').where((h) => h.or([h('dead_at', 'is not', null), h('stopped_at', 'is not', null)]))),
    ]))
    .returning('id').executeTakeFirst();
  return r !== undefined;
}

/** Whether this hub drives the run, workflow or debate `id` (its bus listeners act only then). */
export async function drives(db: Kysely<Schema>, table: OwnedKind, id: string, hubId: string): Promise<boolean> {
  return (await db.selectFrom(table).select('id').where('id', '=', id).where('hub_id', '=', hubId).executeTakeFirst()) !== undefined;
}

/** A lead on this hub restarts it (resume_run, a forced resume_workflow): this hub drives it from now on, whoever did before. */
export async function takeOver(db: Kysely<Schema>, table: OwnedKind, id: string, hubId: string): Promise<void> {
  await db.updateTable(table).set({ hub_id: hubId }).where('id', '=', id).execute();
}

/**
 * What a dead hub owned and nobody runs any more, released for the others: its queued and
 * waiting jobs become unowned (any hub may claim them; a waiting one — a schedule's next
 * occurrence, a job whose dependencies run — is queued by whichever hub's tick or dependency
 * comes first and then claimed), its runs, workflows and debates wait for adoption.
 * Its running jobs are the caller's (interrupted as a restarted hub's reconcile does).
 */
export async function releaseOwned(trx: Transaction<Schema>, hubId: string): Promise<{ jobs: number; runs: number; workflows: number; debates: number }> {
  const n = async (q: Promise<{ numUpdatedRows: bigint }>): Promise<number> => Number((await q).numUpdatedRows);
  return {
    jobs: await n(trx.updateTable('jobs').set({ hub_id: null }).where('hub_id', '=', hubId).where('status', 'in', ['queued', 'waiting']).executeTakeFirstOrThrow()),
    runs: await n(trx.updateTable('runs').set({ hub_id: null }).where('hub_id', '=', hubId).executeTakeFirstOrThrow()),
    workflows: await n(trx.updateTable('workflows').set({ hub_id: null }).where('hub_id', '=', hubId).executeTakeFirstOrThrow()),
    debates: await n(trx.updateTable('debates').set({ hub_id: null }).where('hub_id', '=', hubId).executeTakeFirstOrThrow()),
  };
}
