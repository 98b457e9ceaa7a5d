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
import { sql, type Kysely } from 'kysely';
import { ConflictError, StoreBusyError } from '../../errors.js';
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
  if (!db.isTransaction) {
    try {
      return await db.transaction().execute((trx) => setNote(trx, w));
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') throw new StoreBusyError(err);
      throw err;
    }
  }
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
