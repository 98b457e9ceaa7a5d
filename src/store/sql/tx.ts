// Transactions of the layer. Store functions take the queryable as their first parameter (the
// Kysely instance or a transaction of it: no ambient transaction); `transact` runs a function in
// the one it is given when that is already a transaction, else in a new one — IMMEDIATE on SQLite
// (src/store/sql/sqlite.ts), READ COMMITTED on PostgreSQL, where a decision is made strict by a
// conditional statement, a row lock or an advisory lock (docs/store-plan.md §2).
import { CompiledQuery, PostgresAdapter, type Kysely } from 'kysely';
import { StoreBusyError } from '../../errors.js';
import { layerPrepare, tx, type Db } from '../db.js';
import type { Schema } from './schema.js';

export type Q = Kysely<Schema>;

export async function transact<T>(q: Q, fn: (trx: Q) => Promise<T>): Promise<T> {
  if (q.isTransaction) return fn(q);
  try {
    return await q.transaction().execute(fn);
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new StoreBusyError(err);
    throw err;
  }
}

/** Is `q` on PostgreSQL (else SQLite)? For the few statements whose text differs between the two. */
export function isPostgres(q: Q): boolean {
  return q.getExecutor().adapter instanceof PostgresAdapter;
}

/** The SQLite connection under a layer instance (src/store/sql/open.ts registers it). */
const sqliteOf = new WeakMap<object, Db>();
export function registerSqlite(q: Q, raw: Db): void {
  sqliteOf.set(q, raw);
}


/**
 * Writes that must land together and need nothing read in between (a job's change and its event,
 * an attempt's end): one transaction. On SQLite it runs without a single await between BEGIN and
 * COMMIT (the statements are compiled first, then run synchronously on the connection while the
 * layer holds it), so no other code of the hub can run inside it — in the mixed period a
 * synchronous write of a module not yet moved, arriving while an awaited transaction is open, is
 * refused (src/store/db.ts), and the engine's frequent writes would make that likely. On
 * PostgreSQL (or inside a transaction already) the statements run in order in one transaction.
 */
export async function batch(q: Q, queries: readonly { compile(): CompiledQuery }[]): Promise<void> {
  const compiled = queries.map((b) => b.compile());
  const raw = q.isTransaction ? undefined : sqliteOf.get(q);
  if (!raw) {
    await transact(q, async (trx) => { for (const c of compiled) await trx.executeQuery(c); });
    return;
  }
  const prepare = layerPrepare(raw);
  await q.connection().execute(async () => {
    tx(raw, () => { for (const c of compiled) prepare(c.sql).run(c.parameters as unknown[]); });
  });
}

/**
 * Reads that must agree with each other (the floor, a view over several tables): one snapshot.
 * On PostgreSQL a `REPEATABLE READ READ ONLY` transaction (every statement sees the database as
 * at its first; no lock taken, never a serialization failure for a reader). On SQLite a deferred
 * transaction on the connection, held by the layer for the whole of `fn` (other layer calls wait
 * for it): it takes no write lock, so it works on a read-only connection too, and another
 * connection's commit after the first read is not seen. It is not marked as a layer transaction
 * and it always COMMITs, even when `fn` throws: it writes nothing itself, and a synchronous write
 * of a module not yet moved that runs meanwhile (mixed period) joins it and must land, not be
 * undone. Inside a transaction already, `fn` runs in it.
 */
export async function snapshot<T>(q: Q, fn: (r: Q) => Promise<T>): Promise<T> {
  if (q.isTransaction) return fn(q);
  if (isPostgres(q)) return q.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(fn);
  const raw = sqliteOf.get(q);
  return q.connection().execute(async (c) => {
    if (raw?.inTransaction) return fn(c);
    await c.executeQuery(CompiledQuery.raw('begin deferred'));
    try {
      return await fn(c);
    } finally {
      await c.executeQuery(CompiledQuery.raw('commit'));
    }
  });
}
