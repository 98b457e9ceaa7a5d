// The state as a process outside the hub reads it (the CLI, `overseer status --watch`, the watch's
// feed, log and diff views, templates' stats, `overseer doctor`), and the one place that opens it:
// - SQLite: the state file opened read-only (it works whether or not a hub runs, and cannot write
//   by mistake), the layer over that handle;
// - PostgreSQL (`databaseUrl` / OVERSEER_DATABASE_URL): a pool through `openSql` without
//   migrating — a reader never creates or upgrades the schema; a database without Overseer's
//   schema, or with an older one, fails with what to do (start a hub once), the URL masked.
// `changeMark` says cheaply whether the database changed since the last look (the polling readers).
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import { openSql, sqlOver, type SqlDb } from './open.js';
import { sqlTarget } from './url.js';

export interface ReadOnlyState {
  /** The layer every reader queries (SQLite's read-only handle, or a PostgreSQL pool). */
  sql: SqlDb;
  /** Closes the handle or ends the pool. */
  close(): Promise<void>;
}

/** Opens the SQLite state `file` read-only (it must exist), waiting up to `busyMs` for a hub's write to finish. */
export function openReadOnly(file: string, busyMs = 5000): ReadOnlyState {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyMs))}`);
  } catch (err) {
    db.close();
    throw err;
  }
  const layer = sqlOver(db);
  return { sql: layer, close: async () => { await layer.close(); db.close(); } };
}

/** Where the state of `config` is, for a message: the SQLite file or the masked URL. */
export function stateWhere(config: { home: string; databaseUrl?: string | undefined }): string {
  const t = sqlTarget(config);
  return t.dialect === 'sqlite' ? t.file : t.shown;
}

/**
 * The state of `config` for reading: SQLite's file read-only, or a PostgreSQL pool (never
 * migrated). `undefined` when the SQLite file does not exist yet (no hub ever ran here); a
 * PostgreSQL database that cannot be read throws InvalidInputError (masked URL, what to check).
 */
export async function openStateReadOnly(config: { home: string; databaseUrl?: string | undefined }, busyMs = 5000): Promise<ReadOnlyState | undefined> {
  const t = sqlTarget(config);
  if (t.dialect === 'sqlite') return existsSync(t.file) ? openReadOnly(t.file, busyMs) : undefined;
  const layer = await openSql(config, { migrate: false });
  return { sql: layer, close: () => layer.close() };
}

/**
 * A value that changes whenever another connection committed a change, cheap enough to ask every
 * 100–250 ms (src/floor/follow.ts): read it, then the state; a different value later means read again.
 * - SQLite: `PRAGMA data_version` (per connection: other connections' commits only).
 * - PostgreSQL: the current snapshot as text (`pg_current_snapshot()`, PostgreSQL 13+:
 *   xmin:xmax:running xids). A write transaction takes an xid (xmax moves) and its commit leaves
 *   the running list, so any commit since the last look changes it, whatever table it wrote; reads
 *   take no xid, so an idle crew costs one function call and no table read. Writes to other
 *   databases of the same server change it too: a floor read for nothing, never a missed change.
 *   LISTEN replaces this poll once hubs relay their events (docs/store-plan.md §3.2).
 */
export async function changeMark(s: SqlDb): Promise<string> {
  if (s.dialect === 'sqlite') {
    const r = await sql<{ data_version: number }>`PRAGMA data_version`.execute(s.db);
    return String(r.rows[0]?.data_version);
  }
  return (await sql<{ s: string }>`SELECT pg_current_snapshot()::text AS s`.execute(s.db)).rows[0]!.s;
}
