// Lock and lock-wait rows on the layer (both databases). The wait-for graph is derived from these
// tables, so deadlock detection survives a hub restart. Every decision over them (grant, wait,
// deadlock, hand-over, release) runs in `lockTx`: BEGIN IMMEDIATE on SQLite, and on PostgreSQL a
// READ COMMITTED transaction that first takes the one advisory lock of the lock tables
// (docs/store-plan.md §2): exactly SQLite's strictness, one lock decision at a time.
// Paths compare byte-wise on both databases (pgBaseline's COLLATE "C"), so prefix ranges agree.
import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import { transact, type Q } from './tx.js';
import { ADVISORY, advisoryXactLock } from './advisory.js';
import { prefixUpperBound } from '../prefix.js';
import type { Schema } from './schema.js';
import type { LockRow, WaitRow } from '../locks.js';

export type { LockRow, WaitRow };

/** Rows per multi-row statement: far under SQLite's and PostgreSQL's bound-parameter limits. */
const CHUNK = 500;

/** Run `fn` as one lock decision (joins `q` when it is a transaction already). */
export function lockTx<T>(q: Q, fn: (trx: Q) => Promise<T>): Promise<T> {
  return transact(q, async (trx) => {
    await advisoryXactLock(trx, ADVISORY.locks, 0);
    return fn(trx);
  });
}

type LockEb = ExpressionBuilder<Schema, 'locks'>;

/** Paths strictly inside directory `dir` (absolute, no trailing slash). */
function inside(eb: LockEb, dir: string): Expression<SqlBool> {
  const prefix = dir === '/' ? '/' : `${dir}/`;
  const upper = prefixUpperBound(prefix);
  return upper === undefined ? eb('path', '>=', prefix) : eb.and([eb('path', '>=', prefix), eb('path', '<', upper)]);
}

function chunks<T>(xs: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += CHUNK) out.push(xs.slice(i, i + CHUNK));
  return out;
}

export async function heldAmong(q: Q, paths: readonly string[]): Promise<LockRow[]> {
  const out: LockRow[] = [];
  for (const c of chunks(paths)) out.push(...(await q.selectFrom('locks').selectAll().where('path', 'in', c).execute()));
  return out;
}

/**
 * The hook's one read: locks on any of `exact` (the targets and the directories above them) or
 * strictly inside any of `dirs` (a target may be a directory: `rm -rf dir`). Expired rows are
 * included; the caller tells them apart.
 */
export async function related(q: Q, exact: readonly string[], dirs: readonly string[]): Promise<LockRow[]> {
  if (exact.length + dirs.length > CHUNK) {
    // Many targets (a long Bash command): one statement per chunk, the same answer.
    const seen = new Map<string, LockRow>();
    for (const c of chunks(exact)) for (const r of await related(q, c, [])) seen.set(r.path, r);
    for (const c of chunks(dirs)) for (const r of await related(q, [], c)) seen.set(r.path, r);
    return [...seen.values()];
  }
  return q.selectFrom('locks').selectAll()
    .where((eb) => eb.or([...(exact.length ? [eb('path', 'in', [...exact])] : []), ...dirs.map((d) => inside(eb, d))]))
    .execute();
}

/** Locks on paths strictly inside directory `dir` (absolute, no trailing slash). */
export async function under(q: Q, dir: string): Promise<LockRow[]> {
  return q.selectFrom('locks').selectAll().where((eb) => inside(eb, dir)).orderBy('path').execute();
}

/** Every lock, or those whose path starts with `prefix`, by path. */
export async function allLocks(q: Q, prefix?: string): Promise<LockRow[]> {
  let s = q.selectFrom('locks').selectAll();
  if (prefix) {
    const upper = prefixUpperBound(prefix);
    s = s.where('path', '>=', prefix);
    if (upper !== undefined) s = s.where('path', '<', upper);
  }
  return s.orderBy('path').execute();
}

/** Take or renew `paths` for holder (a path another holder has is left alone: check first). */
export async function take(q: Q, holder: string, paths: readonly string[], reason: string | null, ttlS: number, now: number): Promise<void> {
  for (const c of chunks(paths)) {
    await q.insertInto('locks')
      .values(c.map((path) => ({ path, holder, reason, ttl_s: ttlS, acquired_at: now, expires_at: now + ttlS * 1000 })))
      .onConflict((oc) => oc.column('path').doUpdateSet((eb) => ({
        reason: eb.fn.coalesce('excluded.reason', 'locks.reason'),
        ttl_s: eb.ref('excluded.ttl_s'),
        expires_at: eb.ref('excluded.expires_at'),
      })).where('locks.holder', '=', (eb) => eb.ref('excluded.holder')))
      .execute();
  }
}

/** Release holder's locks (those among `paths` when given); returns the paths released. */
export async function release(q: Q, holder: string, paths?: readonly string[]): Promise<string[]> {
  if (!paths) return (await q.deleteFrom('locks').where('holder', '=', holder).returning('path').execute()).map((r) => r.path).sort();
  const out: string[] = [];
  for (const c of chunks(paths)) {
    out.push(...(await q.deleteFrom('locks').where('holder', '=', holder).where('path', 'in', c).returning('path').execute()).map((r) => r.path));
  }
  return out.sort();
}

/** Push every lock of holder to now + its own TTL; returns how many it has. */
export async function renew(q: Q, holder: string, now: number): Promise<number> {
  const r = await q.updateTable('locks').set((eb) => ({ expires_at: eb(eb.val(now), '+', eb('ttl_s', '*', 1000)) })).where('holder', '=', holder).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** Drop the locks whose TTL is past; returns them. */
export async function expire(q: Q, now: number): Promise<LockRow[]> {
  return q.deleteFrom('locks').where('expires_at', '<=', now).returningAll().execute();
}

export async function nextExpiry(q: Q): Promise<number | undefined> {
  const r = await q.selectFrom('locks').select((eb) => eb.fn.min('expires_at').as('t')).executeTakeFirst();
  return r?.t ?? undefined;
}

export async function holders(q: Q): Promise<string[]> {
  return (await q.selectFrom('locks').select('holder').distinct().execute()).map((r) => r.holder);
}

/** Whether holder has a lock or a wait (a read: whether a release has anything to do). */
export async function holdsOrWaits(q: Q, holder: string): Promise<boolean> {
  const r = await sql<{ x: number }>`SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM locks WHERE holder = ${holder}) OR EXISTS (SELECT 1 FROM lock_waits WHERE holder = ${holder})`.execute(q);
  return r.rows.length > 0;
}

export async function addWait(q: Q, holder: string, paths: readonly string[], reason: string | null, ttlS: number, now: number): Promise<number> {
  const r = await q.insertInto('lock_waits').values({ holder, paths_json: JSON.stringify(paths), reason, ttl_s: ttlS, created_at: now }).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function getWait(q: Q, id: number): Promise<WaitRow | undefined> {
  return q.selectFrom('lock_waits').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Waits not yet granted, in arrival order. */
export async function waiting(q: Q): Promise<WaitRow[]> {
  return q.selectFrom('lock_waits').selectAll().where('status', '=', 'waiting').orderBy('id').execute();
}

export async function grantWait(q: Q, id: number): Promise<void> {
  await q.updateTable('lock_waits').set({ status: 'granted' }).where('id', '=', id).execute();
}

export async function dropWait(q: Q, id: number): Promise<void> {
  await q.deleteFrom('lock_waits').where('id', '=', id).execute();
}

export async function dropWaitsOf(q: Q, holder: string): Promise<void> {
  await q.deleteFrom('lock_waits').where('holder', '=', holder).execute();
}

export async function dropAllWaits(q: Q): Promise<void> {
  await q.deleteFrom('lock_waits').execute();
}
