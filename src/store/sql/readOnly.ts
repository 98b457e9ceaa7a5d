// The state as a process outside the hub reads it (the CLI, `overseer status --watch`, the watch's
// log and diff views, templates' stats, `overseer doctor`): the SQLite file opened read-only (it
// works whether or not a hub runs, and cannot write by mistake) and the layer over that handle,
// which is what the readers query. `db` stays for the readers that still take the synchronous
// handle (readFloor's workflows and script runs until step 7; the CLI's dispatch, schedules and
// debates commands) and for SQLite's own change counter (`PRAGMA data_version`, src/floor/follow.ts).
// On PostgreSQL (docs/store-plan.md step 8) this is the one place that opens a pool instead.
import Database from 'better-sqlite3';
import { sqlOver, type SqlDb } from './open.js';

export interface ReadOnlyState {
  /** The layer over the read-only handle. */
  sql: SqlDb;
  /** mixed period: until the synchronous readers named above move (steps 7–8). */
  db: Database.Database;
  close(): void;
}

/** Opens `file` read-only (it must exist), waiting up to `busyMs` for a hub's write to finish. */
export function openReadOnly(file: string, busyMs = 5000): ReadOnlyState {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyMs))}`);
  } catch (err) {
    db.close();
    throw err;
  }
  const sql = sqlOver(db);
  return { sql, db, close: () => { void sql.close(); db.close(); } };
}
