// Lock and lock-wait rows on the layer (both databases). The wait-for graph is derived from these
// tables, so deadlock detection survives a hub restart. Every decision over them (grant, wait,
// deadlock, hand-over, release) runs in `lockTx`: BEGIN IMMEDIATE on SQLite, and on PostgreSQL a
// READ COMMITTED transaction that first takes the one advisory lock of the lock tables
// (docs/store-plan.md §2): exactly SQLite's strictness, one lock decision at a time.
// Paths compare byte-wise on both databases (pgBaseline's COLLATE "C"), so prefix ranges agree.
// A lock's key is (repo, rel_path) (src/domain/lockKeys.ts): the repository and branch that
// contain the file and the path inside it, or '' and the absolute path; `path` is the holder's
// own absolute path, for views, the lock mounts and messages. Every tree-relative question (the
// hook's, `under`) is asked inside one repo, with rel_path standing for the path.
import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import { transact, type Q } from './tx.js';
import { ADVISORY, advisoryXactLock } from './advisory.js';
import { prefixUpperBound } from '../prefix.js';
import type { Schema } from './schema.js';
import type { LockRow, WaitRow } from '../locks.js';
import type { LockItem, LockKey } from '../../domain/lockKeys.js';

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

/** Key paths strictly inside key directory `dir` ('/'-rooted, no trailing slash). */
function inside(eb: LockEb, dir: string): Expression<SqlBool> {
  const prefix = dir === '/' ? '/' : `${dir}/`;
  const upper = prefixUpperBound(prefix);
  return upper === undefined ? eb('rel_path', '>=', prefix) : eb.and([eb('rel_path', '>=', prefix), eb('rel_path', '<', upper)]);
}

function chunks<T>(xs: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += CHUNK) out.push(xs.slice(i, i + CHUNK));
  return out;
}

/** The locks on any of `keys`. */
export async function heldAmong(q: Q, keys: readonly LockKey[]): Promise<LockRow[]> {
  const out: LockRow[] = [];
  for (const [repo, rels] of byRepo(keys)) {
    for (const c of chunks(rels)) out.push(...(await q.selectFrom('locks').selectAll().where('repo', '=', repo).where('rel_path', 'in', c).execute()));
  }
  return out;
}

function byRepo(keys: readonly LockKey[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const k of keys) m.set(k.repo, [...(m.get(k.repo) ?? []), k.rel]);
  return m;
}

/**
 * The hook's one read: locks on any of `exact` (the targets and the directories above them) or
 * strictly inside any of `dirs` (a target may be a directory: `rm -rf dir`), each key in its own
 * repo. Expired rows are included; the caller tells them apart.
 */
export async function related(q: Q, exact: readonly LockKey[], dirs: readonly LockKey[]): Promise<LockRow[]> {
  if (exact.length + dirs.length > CHUNK) {
    // Many targets (a long Bash command): one statement per chunk, the same answer.
    const seen = new Map<string, LockRow>();
    for (const c of chunks(exact)) for (const r of await related(q, c, [])) seen.set(`${r.repo}\0${r.rel_path}`, r);
    for (const c of chunks(dirs)) for (const r of await related(q, [], c)) seen.set(`${r.repo}\0${r.rel_path}`, r);
    return [...seen.values()];
  }
  const repos = new Set([...exact, ...dirs].map((k) => k.repo));
  if (repos.size === 0) return [];
  const ex = byRepo(exact);
  const ds = byRepo(dirs);
  return q.selectFrom('locks').selectAll()
    .where((eb) => eb.or([...repos].map((repo) => eb.and([
      eb('repo', '=', repo),
      eb.or([...(ex.get(repo)?.length ? [eb('rel_path', 'in', ex.get(repo)!)] : []), ...(ds.get(repo) ?? []).map((d) => inside(eb, d))]),
    ]))))
    .execute();
}

/** Locks of repo on key paths strictly inside key directory `dir`. */
export async function under(q: Q, repo: string, dir: string): Promise<LockRow[]> {
  return q.selectFrom('locks').selectAll().where('repo', '=', repo).where((eb) => inside(eb, dir)).orderBy('path').execute();
}

/**
 * Every lock, by the holder's path; or those whose holder's path starts with `prefix`; or, with
 * `repo`, those of that repo whose key path starts with `prefix`.
 */
export async function allLocks(q: Q, prefix?: string, repo?: string): Promise<LockRow[]> {
  let s = q.selectFrom('locks').selectAll();
  const col = repo === undefined ? 'path' : 'rel_path';
  if (repo !== undefined) s = s.where('repo', '=', repo);
  if (prefix) {
    const upper = prefixUpperBound(prefix);
    s = s.where(col, '>=', prefix);
    if (upper !== undefined) s = s.where(col, '<', upper);
  }
  return s.orderBy('path').execute();
}

/** Take or renew `items` for holder (a key another holder has is left alone: check first). */
export async function take(q: Q, holder: string, items: readonly LockItem[], reason: string | null, ttlS: number, now: number): Promise<void> {
  for (const c of chunks(items)) {
    await q.insertInto('locks')
      .values(c.map((i) => ({ repo: i.repo, rel_path: i.rel, path: i.path, holder, reason, ttl_s: ttlS, acquired_at: now, expires_at: now + ttlS * 1000 })))
      .onConflict((oc) => oc.columns(['repo', 'rel_path']).doUpdateSet((eb) => ({
        reason: eb.fn.coalesce('excluded.reason', 'locks.reason'),
        ttl_s: eb.ref('excluded.ttl_s'),
        expires_at: eb.ref('excluded.expires_at'),
      })).where('locks.holder', '=', (eb) => eb.ref('excluded.holder')))
      .execute();
  }
}

/**
 * Move one lock to key `to` (re-keying a lock keyed by its absolute path). When `to` is held
 * already, the row is released instead: false unless that holder is the row's own.
 */
export async function rekey(q: Q, row: Pick<LockRow, 'repo' | 'rel_path' | 'holder'>, to: LockKey): Promise<boolean> {
  const [there] = await heldAmong(q, [to]);
  if (there) {
    await q.deleteFrom('locks').where('repo', '=', row.repo).where('rel_path', '=', row.rel_path).execute();
    return there.holder === row.holder;
  }
  await q.updateTable('locks').set({ repo: to.repo, rel_path: to.rel }).where('repo', '=', row.repo).where('rel_path', '=', row.rel_path).execute();
  return true;
}

/** Release holder's locks (those among `keys` when given); returns the holder's paths released. */
export async function release(q: Q, holder: string, keys?: readonly LockKey[]): Promise<string[]> {
  if (!keys) return (await q.deleteFrom('locks').where('holder', '=', holder).returning('path').execute()).map((r) => r.path).sort();
  const out: string[] = [];
  for (const [repo, rels] of byRepo(keys)) {
    for (const c of chunks(rels)) {
      out.push(...(await q.deleteFrom('locks').where('holder', '=', holder).where('repo', '=', repo).where('rel_path', 'in', c).returning('path').execute()).map((r) => r.path));
    }
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

/** A wait for `items`: their paths as the waiter knows them, and their keys. */
export async function addWait(q: Q, holder: string, items: readonly LockItem[], reason: string | null, ttlS: number, now: number): Promise<number> {
  const r = await q.insertInto('lock_waits').values({
    holder, paths_json: JSON.stringify(items.map((i) => i.path)), keys_json: JSON.stringify(items.map((i) => [i.repo, i.rel])), reason, ttl_s: ttlS, created_at: now,
  }).returning('id').executeTakeFirstOrThrow();
  return r.id;
}

export async function getWait(q: Q, id: number): Promise<WaitRow | undefined> {
  return q.selectFrom('lock_waits').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A wait's keys with its paths (a wait without keys, from before migration 29, is keyed by its paths). */
export function waitItems(w: Pick<WaitRow, 'paths_json' | 'keys_json'>): LockItem[] {
  const paths = JSON.parse(w.paths_json) as string[];
  const keys = w.keys_json ? (JSON.parse(w.keys_json) as [string, string][]) : undefined;
  return paths.map((path, k) => ({ repo: keys?.[k]?.[0] ?? '', rel: keys?.[k]?.[1] ?? path, path }));
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

/** Hand every lock of `from` to `to` (a restarted hub's lead takes its predecessor's: docs/decisions.md "Steering across hubs"); how many. */
export async function renameHolder(q: Q, from: string, to: string): Promise<number> {
  const r = await q.updateTable('locks').set({ holder: to }).where('holder', '=', from).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** The hubs named, with whether each still serves (neither stopped nor found dead) and where it ran. */
export async function hubsOf(q: Q, ids: readonly string[]): Promise<Map<string, { live: boolean; host: string; stateDir: string }>> {
  if (!ids.length) return new Map();
  const rows = await q.selectFrom('hubs').select(['id', 'host', 'state_dir', 'stopped_at', 'dead_at']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((r) => [r.id, { live: r.stopped_at === null && r.dead_at === null, host: r.host, stateDir: r.state_dir }]));
}
