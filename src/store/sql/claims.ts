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

/**
 * What a dead hub owned and nobody runs any more, released for the others: its queued jobs
 * become unowned (any hub may claim them), its runs, workflows and debates wait for adoption.
 * Its running jobs are the caller's (interrupted as a restarted hub's reconcile does).
 */
export async function releaseOwned(trx: Transaction<Schema>, hubId: string): Promise<{ jobs: number; runs: number; workflows: number; debates: number }> {
  const n = async (q: Promise<{ numUpdatedRows: bigint }>): Promise<number> => Number((await q).numUpdatedRows);
  return {
    jobs: await n(trx.updateTable('jobs').set({ hub_id: null }).where('hub_id', '=', hubId).where('status', '=', 'queued').executeTakeFirstOrThrow()),
    runs: await n(trx.updateTable('runs').set({ hub_id: null }).where('hub_id', '=', hubId).executeTakeFirstOrThrow()),
    workflows: await n(trx.updateTable('workflows').set({ hub_id: null }).where('hub_id', '=', hubId).executeTakeFirstOrThrow()),
    debates: await n(trx.updateTable('debates').set({ hub_id: null }).where('hub_id', '=', hubId).executeTakeFirstOrThrow()),
  };
}
