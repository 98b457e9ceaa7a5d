// pg-boss on the crew's PostgreSQL database (issue 30; docs/decisions.md "Dispatch to workers:
// pg-boss"): the queue of attempts waiting for a worker. Its tables live in a schema of their own
// (`pgboss`), created and upgraded by pg-boss itself; ours stay ours. A job is sent inside the
// layer's transaction that queued the attempt (`bossDb(trx)`: pg-boss 10's `send(…, { db })` runs
// its INSERT through whatever `executeSql` it is given), so the queue job exists exactly when the
// attempt's row does: a rolled-back spawn leaves no job, and no worker sees one before the commit.
// Not wired into dispatch yet (docs/workers-plan.md, step 2).
import PgBoss from 'pg-boss';
import { CompiledQuery, type Kysely } from 'kysely';
import type { Logger } from '../../log.js';
import type { Schema } from './schema.js';
import { scrub } from './url.js';

/** The queue of attempts for workers. */
export const ATTEMPT_QUEUE = 'overseer-attempts';
/** pg-boss's own schema in the crew's database. */
export const BOSS_SCHEMA = 'pgboss';

/** pg-boss's `db` over a Kysely queryable (a transaction included): its statements run there. */
export function bossDb(q: Kysely<Schema>): PgBoss.Db {
  return {
    executeSql: async (text: string, values: unknown[] = []) => ({ rows: (await q.executeQuery(CompiledQuery.raw(text, values))).rows as unknown[] }),
  };
}

export interface AttemptQueueOptions {
  url: string;
  log: Logger;
  /** Its own pool's size (default 2: it polls and sends little). */
  max?: number;
}

/**
 * A started pg-boss on `url` with the attempt queue created (both idempotent: the first process
 * creates the schema under pg-boss's advisory lock, the others find it). Supervision (expiry,
 * archiving) runs in one process at a time: pg-boss takes its own turns in the database.
 */
export async function openAttemptQueue(o: AttemptQueueOptions): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: o.url, schema: BOSS_SCHEMA, max: o.max ?? 2, application_name: 'overseer-queue', schedule: false });
  boss.on('error', (err: Error) => o.log.warn({ err: scrub(err.message, o.url) }, 'attempt queue (pg-boss) error'));
  await boss.start();
  await boss.createQueue(ATTEMPT_QUEUE, { name: ATTEMPT_QUEUE, policy: 'standard', retryLimit: 0 });
  return boss;
}
