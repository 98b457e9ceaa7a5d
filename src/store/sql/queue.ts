// pg-boss on the crew's PostgreSQL database (issue 30; docs/decisions.md "Dispatch to workers:
// pg-boss"): the queue of attempts waiting for a worker. Its tables live in a schema of their own
// (`pgboss`), created and upgraded by pg-boss itself; ours stay ours. A job is sent inside the
// layer's transaction that queued the attempt (`bossDb(trx)`: pg-boss 10's `send(…, { db })` runs
// its INSERT through whatever `executeSql` it is given), so the queue job exists exactly when the
// attempt's row does: a rolled-back spawn leaves no job, and no worker sees one before the commit.
// Queues are per needs (src/domain/placement.ts queueName): a worker fetches from those it serves.
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

/** What a queue job carries: our job and the attempt it is for (our tables hold the rest). */
export interface AttemptMessage { jobId: string; attempt: number }

const made = new WeakMap<PgBoss, Set<string>>();

/** Create a placement queue once per process (idempotent in the database too). DDL of its own
 * partition: call it before the transaction that sends into it (a send into a missing queue is
 * silently dropped by pg-boss, so sendAttempt refuses to send into one not made here). */
export async function ensureQueue(boss: PgBoss, name: string): Promise<void> {
  let set = made.get(boss);
  if (!set) made.set(boss, (set = new Set()));
  if (set.has(name)) return;
  // short: one waiting job per singleton key (the job's id), so a second send for a job already
  // waiting is a no-op. retryLimit 0: retries are ours (the job's retry policy).
  await boss.createQueue(name, { name, policy: 'short', retryLimit: 0 });
  set.add(name);
}

/**
 * Send one attempt into its queue through `q` (the layer's transaction that makes the job queued):
 * the queue job exists exactly when that transaction commits. Returns pg-boss's id, or null when a
 * job for this jobId is already waiting in the queue (the singleton key). `expireInSeconds` is a
 * backstop only (docs/decisions.md): a job's timeout plus a worker's lease.
 */
export async function sendAttempt(q: Kysely<Schema>, boss: PgBoss, queue: string, m: AttemptMessage, expireInSeconds: number): Promise<string | null> {
  if (!made.get(boss)?.has(queue)) throw new Error(`queue ${queue} was not created in this process: ensureQueue before the transaction`);
  return boss.send(queue, { ...m }, { db: bossDb(q), singletonKey: m.jobId, expireInSeconds: Math.max(60, Math.ceil(expireInSeconds)) });
}

/** Withdraw a job's waiting queue job in `q`'s transaction (cancel of a queued job). */
export async function cancelAttempt(q: Kysely<Schema>, boss: PgBoss, queue: string, id: string): Promise<void> {
  await boss.cancel(queue, id, { db: bossDb(q) });
}
