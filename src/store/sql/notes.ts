// Note compare-and-set over the Kysely layer, on SQLite and PostgreSQL alike: the pattern for
// what the store decides (issue 29). Same semantics as src/services/notes.ts `write` over the
// synchronous store: with expected_version the write goes through only when the note is at that
// version (0: absent), else a ConflictError that says where it is; without, the version grows by
// one. The decision is one conditional statement, so it holds the row (PostgreSQL: its row lock,
// re-checked after a concurrent writer commits; SQLite: the database's write lock):
//   expected N > 0 → UPDATE … WHERE key = ? AND version = N
//   expected 0     → INSERT … ON CONFLICT (key) DO NOTHING
//   none           → INSERT … ON CONFLICT (key) DO UPDATE SET version = notes.version + 1
// SELECT … FOR UPDATE then write would not be as strict: an absent note has no row to lock, so
// two creators would both pass (docs/decisions.md, "Note compare-and-set on both databases").
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { ConflictError } from '../../errors.js';
import { transact } from './tx.js';
import { prefixUpperBound } from '../prefix.js';
import { noteWriteConflict } from '../../domain/noteVersion.js';
import type { Schema } from './schema.js';

export interface NoteWrite {
  key: string;
  value: string;
  author: string;
  /** ms since the epoch */
  now: number;
  /** Write only when the note is at this version (0: does not exist yet). */
  expected_version?: number | undefined;
}

/** Set a note; returns its new version. In a transaction of its own, or in `db` when that is one. */
export async function setNote(db: Kysely<Schema>, w: NoteWrite): Promise<number> {
  if (!db.isTransaction) return transact(db, (trx) => setNote(trx, w));
  const row = { key: w.key, value: w.value, version: 1, author: w.author, updated_at: w.now };
  const exp = w.expected_version;
  const written =
    exp === undefined
      ? await db.insertInto('notes').values(row)
        .onConflict((oc) => oc.column('key').doUpdateSet((eb) => ({
          value: eb.ref('excluded.value'), author: eb.ref('excluded.author'), updated_at: eb.ref('excluded.updated_at'),
          version: sql<number>`notes.version + 1`,
        })))
        .returning('version').executeTakeFirst()
      : exp === 0
        ? await db.insertInto('notes').values(row).onConflict((oc) => oc.column('key').doNothing()).returning('version').executeTakeFirst()
        : await db.updateTable('notes').set({ value: w.value, author: w.author, updated_at: w.now, version: exp + 1 })
          .where('key', '=', w.key).where('version', '=', exp).returning('version').executeTakeFirst();
  if (written) return written.version;
  const cur = await db.selectFrom('notes').select('version').where('key', '=', w.key).executeTakeFirst();
  throw new ConflictError(noteWriteConflict(w.key, cur?.version, exp)
    ?? `note ${JSON.stringify(w.key)} changed while it was written (it is at version ${cur?.version} again): read it again and retry`);
}

/** A note's version, or undefined when it does not exist. */
export async function noteVersion(db: Kysely<Schema>, key: string): Promise<number | undefined> {
  return (await db.selectFrom('notes').select('version').where('key', '=', key).executeTakeFirst())?.version;
}

/** A note's row: key → value with a version that grows by one on every write (compare-and-set). */
export interface NoteRow {
  key: string;
  value: string;
  version: number;
  author: string;
  updated_at: number;
}

/** Keys starting with `prefix` (byte order on both databases: pgBaseline's COLLATE "C"). */
const keyUnder = (prefix: string) => (eb: ExpressionBuilder<Schema, 'notes'>) => {
  const upper = prefixUpperBound(prefix);
  return upper === undefined ? eb('key', '>=', prefix) : eb.and([eb('key', '>=', prefix), eb('key', '<', upper)]);
};

export async function getNote(db: Kysely<Schema>, key: string): Promise<NoteRow | undefined> {
  return db.selectFrom('notes').selectAll().where('key', '=', key).executeTakeFirst();
}

/** Keys under a prefix (all when empty), the most recently written first, at most `limit` (the lead's resources). */
export async function recentNoteKeys(db: Kysely<Schema>, limit: number, prefix = ''): Promise<string[]> {
  return (await db.selectFrom('notes').select('key').where(keyUnder(prefix)).orderBy('updated_at', 'desc').orderBy('key').limit(limit).execute()).map((r) => r.key);
}

/** Keys under a prefix (all when empty), without values, ordered by key, after `afterKey`. */
export async function listNotes(db: Kysely<Schema>, prefix: string, limit: number, afterKey = ''): Promise<Omit<NoteRow, 'value'>[]> {
  return db.selectFrom('notes').select(['key', 'version', 'author', 'updated_at']).where(keyUnder(prefix))
    .where('key', '>', afterKey).orderBy('key').limit(limit).execute();
}

/** Full rows for the given keys and/or a prefix, each once, ordered by key. */
export async function selectNotes(db: Kysely<Schema>, keys: readonly string[], prefix: string | undefined): Promise<NoteRow[]> {
  const rows: NoteRow[] = [];
  if (keys.length) rows.push(...(await db.selectFrom('notes').selectAll().where('key', 'in', [...keys]).execute()));
  if (prefix !== undefined) rows.push(...(await db.selectFrom('notes').selectAll().where(keyUnder(prefix)).execute()));
  const seen = new Set<string>();
  return rows.filter((r) => !seen.has(r.key) && seen.add(r.key)).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Delete a note; with `expected_version`, only when it is at that version (one conditional
 * statement, as strict as setNote), else a ConflictError that says where it is. Returns whether
 * a row went.
 */
export async function deleteNote(db: Kysely<Schema>, key: string, expected_version?: number): Promise<boolean> {
  let q = db.deleteFrom('notes').where('key', '=', key);
  if (expected_version !== undefined) q = q.where('version', '=', expected_version);
  const gone = Number((await q.executeTakeFirst()).numDeletedRows) > 0;
  if (gone || expected_version === undefined) return gone;
  const cur = await noteVersion(db, key);
  throw new ConflictError(cur !== undefined ? `note ${JSON.stringify(key)} is at version ${cur}, not ${expected_version}` : `note ${JSON.stringify(key)} does not exist`);
}
