// A child process for the cross-process races of the Kysely layer (test/integration/sql-*.test.ts):
// one JSON command per stdin line, one JSON answer per stdout line. Run by sqlRacers.ts.
//   {op: 'open', home, url?}          openSql (PostgreSQL: connects and migrates) → {ok}
//   {op: 'migrate', url, slowMs}      a test migration list on its own Kysely: counts its runs → {ok, ran}
//   {op: 'set', key, value, expected?} setNote → {ok, version} | {ok: false, conflict}
//   {op: 'call', module, fn, args}    fn(db, ...args) of src/store/sql/<module>.ts → {ok, value}
//   {op: 'kbOpen', file?, url?, project?} a knowledge base: a KB file (SQLite) or the project's rows of kb_entries → {ok}
//   {op: 'kbMerge', id, times}        `times` read-modify-writes of the entry (merged_count + 1, its pid in sources) → {ok}
//   {op: 'close'}                     → {ok}, then exits
import { callStore, serveRacer } from './racerLoop.js';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { migratePostgres } from '../../src/store/sql/migrate.js';
import { setNote } from '../../src/store/sql/notes.js';
import { ConflictError } from '../../src/errors.js';
import { kbEntries, openKbFile, type KbEntries } from '../../src/kb/sqlEntries.js';
import type { Schema } from '../../src/store/sql/schema.js';

let s: SqlDb | undefined;
let kb: { db: Kysely<Schema>; e: KbEntries } | undefined;

async function run(cmd: Record<string, unknown>): Promise<unknown> {
  switch (cmd.op) {
    case 'open':
      s = await openSql({ home: cmd.home as string, databaseUrl: cmd.url as string | undefined });
      return { ok: true };
    case 'migrate': {
      // The migration records every run of itself and holds its transaction for slowMs, so that a
      // second process that did not wait for the first would run it too and be counted.
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: cmd.url as string }) }) });
      try {
        const ran = await migratePostgres(db, {
          '0001-count': {
            up: async (d) => {
              await sql`CREATE TABLE IF NOT EXISTS migration_runs (pid INTEGER NOT NULL)`.execute(d);
              await sql`INSERT INTO migration_runs VALUES (${process.pid})`.execute(d);
              await sql`SELECT pg_sleep(${Number(cmd.slowMs) / 1000})`.execute(d);
            },
          },
        });
        return { ok: true, ran };
      } finally {
        await db.destroy();
      }
    }
    case 'set':
      try {
        const version = await setNote(s!.db, { key: cmd.key as string, value: cmd.value as string, author: `pid${process.pid}`, now: Date.now(), expected_version: cmd.expected as number | undefined });
        return { ok: true, version };
      } catch (err) {
        if (err instanceof ConflictError) return { ok: false, conflict: err.message };
        throw err;
      }
    case 'call':
      return callStore(s!, cmd);
    case 'kbOpen':
      if (cmd.file) kb = { db: openKbFile(cmd.file as string), e: kbEntries({ dialect: 'sqlite', scope: 'project' }) };
      else {
        s = await openSql({ home: '', databaseUrl: cmd.url as string });
        kb = { db: s.db, e: kbEntries({ dialect: 'postgres', scope: 'project', project: cmd.project as string }) };
      }
      return { ok: true };
    case 'kbMerge':
      for (let i = 0; i < Number(cmd.times); i++) {
        await kb!.e.modify(kb!.db, cmd.id as number, (cur) => ({ merged_count: cur.merged_count + 1, sources: [...cur.sources, `p${process.pid}`] }));
      }
      return { ok: true };
    case 'close':
      if (kb && kb.db !== s?.db) await kb.db.destroy();
      await s?.close();
      return { ok: true };
    default:
      throw new Error(`unknown op ${String(cmd.op)}`);
  }
}

await serveRacer(run);
