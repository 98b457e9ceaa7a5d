// Transactions of the layer. Store functions take the queryable as their first parameter (the
// Kysely instance or a transaction of it: no ambient transaction); `transact` runs a function in
// the one it is given when that is already a transaction, else in a new one — IMMEDIATE on SQLite
// (src/store/sql/sqlite.ts), READ COMMITTED on PostgreSQL, where a decision is made strict by a
// conditional statement, a row lock or an advisory lock (docs/store-plan.md §2).
import { PostgresAdapter, type Kysely } from 'kysely';
import { StoreBusyError } from '../../errors.js';
import { markLayerTransaction, type Db } from '../db.js';
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

/**
 * mixed period (until step 7): run the synchronous writes of a module not yet moved (a workflow's
 * or a script's own rows, a project's row) inside this layer transaction. On SQLite the two share
 * one connection, so they join the transaction and its rollback undoes them too; the guard of
 * src/store/db.ts is lifted for `fn` alone (it is synchronous: nothing else runs meanwhile). On
 * PostgreSQL there is no synchronous store: a hub there has every such module moved first.
 */
export function joinSync<T>(trx: Q, sqlite: Db, fn: () => T): T {
  if (!trx.isTransaction) throw new Error('internal: joinSync outside a transaction');
  if (isPostgres(trx)) throw new Error('internal: a synchronous store write inside a PostgreSQL transaction (a module not yet moved onto the layer)');
  markLayerTransaction(sqlite, false);
  try {
    return fn();
  } finally {
    markLayerTransaction(sqlite, true);
  }
}
