// PostgreSQL advisory locks of the layer (docs/store-plan.md §2): where a decision is about the
// absence of rows or a view over many of them (phantoms that row locks cannot cover), every
// transaction that makes it first takes one transaction-scoped advisory lock, released at commit.
// On SQLite the transaction is BEGIN IMMEDIATE already (one writer for the whole file), so this is
// a no-op there. The classes are fixed int4s, one per kind of decision, all listed here.
import { sql } from 'kysely';
import { isPostgres, type Q } from './tx.js';

export const ADVISORY = {
  /** File locks and lock waits (one global key for now: SQLite's strictness exactly). */
  locks: 1,
  budgets: 2,
  mergeTarget: 3,
  migrations: 4,
  hubLiveness: 5,
} as const;

/** Take `pg_advisory_xact_lock(cls, key)` in the transaction `trx` (PostgreSQL; nothing on SQLite). */
export async function advisoryXactLock(trx: Q, cls: number, key: number): Promise<void> {
  if (!trx.isTransaction) throw new Error('internal: an advisory transaction lock taken outside a transaction would be released at once');
  if (!isPostgres(trx)) return;
  await sql`SELECT pg_advisory_xact_lock(${cls}::int4, ${key}::int4)`.execute(trx);
}
