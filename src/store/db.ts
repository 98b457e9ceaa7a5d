// Opens the SQLite state file: WAL, busy timeout, foreign keys, then applies pending migrations.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MIGRATIONS, type Migration } from './migrations.js';
import { StoreBusyError } from '../errors.js';

export type Db = Database.Database;

export function openDb(file: string, migrations: readonly Migration[] = MIGRATIONS): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file);
  // The busy timeout first: two processes opening a fresh file at once wait for each other's migrations instead of failing.
  db.pragma('busy_timeout = 5000');
  enableWal(db);
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  cacheStatements(db);
  try {
    migrate(db, migrations);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/**
 * Memoise db.prepare by SQL text (bounded): the stores prepare their statements where they
 * use them, and preparing is a measurable share of the hub's CPU on hot paths (tool calls,
 * hook checks). Statements are reusable in better-sqlite3 because every call is synchronous.
 * The memoised prepare without the mixed-period guard is kept for the asynchronous layer
 * (`layerPrepare`); `db.prepare` itself refuses a write while the layer has a transaction open.
 */
function cacheStatements(db: Database.Database, max = 1000): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  const cached = (sql: string): Database.Statement => {
    let st = cache.get(sql);
    if (!st) {
      st = prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(sql, st);
    }
    return st;
  };
  layerPrepares.set(db, cached);
  db.prepare = ((sql: string) => {
    const st = cached(sql);
    if (!st.reader && asyncOpen.has(db)) throw mixedError(sql);
    return st;
  }) as typeof db.prepare;
}

// The mixed period (issue 29, docs/store-plan.md step 2): modules move one by one from this
// synchronous store onto the asynchronous layer (src/store/sql), which on SQLite shares this
// connection. A write of the synchronous store issued while the layer's transaction is open
// (between two of its awaits) would silently join that transaction and be undone by its
// rollback, so it is refused instead; reads are harmless. The layer marks its transactions here.
const asyncOpen = new WeakSet<Db>();
const layerPrepares = new WeakMap<Db, (sql: string) => Database.Statement>();

/** The layer's prepare: memoised like db.prepare, without the guard (the layer is the transaction's owner). */
export function layerPrepare(db: Db): (sql: string) => Database.Statement {
  return layerPrepares.get(db) ?? db.prepare.bind(db);
}

/** Called by the layer when its transaction on `db` begins (true) and ends (false). */
export function markLayerTransaction(db: Db, open: boolean): void {
  if (open) asyncOpen.add(db);
  else asyncOpen.delete(db);
}

function mixedError(sql: string): Error {
  return new Error(`internal: a synchronous write ran while an asynchronous transaction was open on the same SQLite connection; it would have joined that transaction (statement: ${sql.slice(0, 80)}). Move the caller onto the asynchronous layer or await the transaction first.`);
}

/** WAL mode. Switching to it takes the file's exclusive lock and SQLite does not wait for that
 * under the busy timeout: a second process opening a fresh file at the same moment got
 * SQLITE_BUSY (1 in 4 tries), so it retries for up to 5 s. */
function enableWal(db: Db): void {
  const until = Date.now() + 5000;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > until) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** Apply every migration newer than the recorded version, each in its own transaction. */
export function migrate(db: Db, migrations: readonly Migration[]): number {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  const current = (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
  const known = migrations.at(-1)?.version ?? 0;
  if (current > known) {
    throw new Error(`State database schema version ${current} is newer than this overseer knows (${known}). Upgrade overseer-mcp.`);
  }
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      // Another process may have applied it since `current` was read: the write lock we hold now decides.
      if (db.prepare('SELECT 1 FROM schema_migrations WHERE version = ?').get(m.version)) return;
      db.exec(m.up);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    }).immediate();
  }
  return known;
}

/** One transaction function per connection that runs its argument: better-sqlite3's
 * `db.transaction(fn)` builds four wrappers with their properties on every call, which cost a
 * busy hub more than the write itself (a note write: 34 → 22 µs measured). */
const runners = new WeakMap<Db, Database.Transaction<(fn: () => unknown) => unknown>>();

/** Run `fn` in an IMMEDIATE transaction (a savepoint inside one already open); SQLITE_BUSY becomes a StoreBusyError that says to retry. */
export function tx<T>(db: Db, fn: () => T): T {
  if (asyncOpen.has(db)) throw mixedError('BEGIN IMMEDIATE');
  let run = runners.get(db);
  if (!run) runners.set(db, (run = db.transaction((f: () => unknown) => f())));
  try {
    return run.immediate(fn) as T;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new StoreBusyError(err);
    throw err;
  }
}
