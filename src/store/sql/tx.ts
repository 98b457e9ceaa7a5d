// Transactions of the layer. Store functions take the queryable as their first parameter (the
// Kysely instance or a transaction of it: no ambient transaction); `transact` runs a function in
// the one it is given when that is already a transaction, else in a new one — IMMEDIATE on SQLite
// (src/store/sql/sqlite.ts), READ COMMITTED on PostgreSQL, where a decision is made strict by a
// conditional statement, a row lock or an advisory lock (docs/store-plan.md §2).
import type { Kysely } from 'kysely';
import { StoreBusyError } from '../../errors.js';
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
