// PostgreSQL's migrations (src/store/sql/migrate.ts): the baseline is SQLite's schema at its latest
// version, table by table and column by column under the mapping of pgBaseline.ts; and two real
// processes that open one fresh database at the same moment run the migrations once.
import { test, describe, after, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import Database from 'better-sqlite3';
import pg from 'pg';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { migrate } from '../../src/store/db.js';
import { openSql } from '../../src/store/sql/open.js';
import { PG_MIGRATIONS, PG_MIGRATION_TABLE, PG_ONLY } from '../../src/store/sql/migrate.js';
import { InvalidInputError } from '../../src/errors.js';
import { freshDatabase } from '../helpers/postgres.js';
import { all, startRacer, type Racer } from '../helpers/sqlRacers.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'overseer-sql-mig-'));
  dirs.push(d);
  return d;
};
const racers: Racer[] = [];
after(() => {
  racers.forEach((r) => r.kill());
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
});

/** A fresh database and two racer processes given `cmd` at the same moment; cleaned up after the test. */
async function twoAtOnce(t: TestContext, cmd: (url: string) => Record<string, unknown>): Promise<{ url: string; pair: Racer[]; answers: Record<string, unknown>[] }> {
  const fresh = await freshDatabase();
  t.after(() => fresh.drop());
  const pair = [await startRacer(), await startRacer()];
  racers.push(...pair);
  t.after(() => all(pair, { op: 'close' }));
  return { url: fresh.url, pair, answers: await all(pair, cmd(fresh.url)) };
}

/** The rows of one query, on a connection of its own (no migrations run). */
async function rows<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

interface Col { table: string; column: string; type: string; notNull: boolean; dflt: string | null; pk: number }

/** SQLite's tables at the latest migration, as PostgreSQL should have them (pgBaseline.ts's mapping). */
function sqliteColumns(): Col[] {
  const db = new Database(':memory:');
  migrate(db, MIGRATIONS);
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'transcript_fts_%'").all() as { name: string }[]).map((t) => t.name);
  const map: Record<string, string> = { INTEGER: 'bigint', REAL: 'double precision', TEXT: 'text' };
  const cols = tables.flatMap((table) => (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; type: string; notnull: number; dflt_value: string | null; pk: number }[])
    .map((c) => ({ table, column: c.name, type: map[c.type] ?? `unmapped ${c.type}`, notNull: c.notnull === 1 || c.pk > 0, dflt: c.dflt_value, pk: c.pk })));
  db.close();
  return cols.sort((a, b) => `${a.table}.${a.column}`.localeCompare(`${b.table}.${b.column}`));
}

describe('PostgreSQL migrations', () => {
  test('one version sequence: PostgreSQL\'s last migration is SQLite\'s last version', () => {
    const last = Object.keys(PG_MIGRATIONS).sort().at(-1)!;
    assert.match(last, /^\d{4}-/);
    assert.equal(Number(last.slice(0, 4)), MIGRATIONS.at(-1)!.version, 'a SQLite migration without its PostgreSQL twin (or the other way round): add it to src/store/sql/migrate.ts');
  });

  test('the migrated PostgreSQL schema is SQLite\'s: tables, columns, types as mapped, NOT NULL, defaults, keys; text in byte order', async () => {
    const fresh = await freshDatabase();
    const s = await openSql({ home: tmp(), databaseUrl: fresh.url });
    try {
      const rows = await sql<{ table_name: string; column_name: string; data_type: string; is_nullable: string; column_default: string | null; collation_name: string | null; is_identity: string }>`
        SELECT table_name, column_name, data_type, is_nullable, column_default, collation_name, is_identity
        FROM information_schema.columns WHERE table_schema = current_schema() AND table_name NOT LIKE ${PG_MIGRATION_TABLE + '%'}`.execute(s.db);
      const pks = await sql<{ table_name: string; column_name: string; ordinal_position: number }>`
        SELECT k.table_name, k.column_name, k.ordinal_position FROM information_schema.table_constraints c
        JOIN information_schema.key_column_usage k ON k.constraint_name = c.constraint_name AND k.table_schema = c.table_schema
        WHERE c.constraint_type = 'PRIMARY KEY' AND c.table_schema = current_schema()`.execute(s.db);
      const pkOf = new Map(pks.rows.map((p) => [`${p.table_name}.${p.column_name}`, p.ordinal_position]));
      const pgOnly = (r: { table_name: string; column_name: string }): boolean =>
        (PG_ONLY.tables as readonly string[]).includes(r.table_name) || (PG_ONLY.columns as readonly string[]).includes(`${r.table_name}.${r.column_name}`);
      const only = rows.rows.filter(pgOnly);
      assert.deepEqual([...new Set(only.map((r) => r.table_name))].sort(), [...new Set([...PG_ONLY.tables, ...PG_ONLY.columns.map((c) => c.split('.')[0]!)])].sort(), 'every PostgreSQL-only table and column exists');
      assert.ok(PG_ONLY.columns.every((c) => only.some((r) => `${r.table_name}.${r.column_name}` === c)), 'every PostgreSQL-only column exists');
      const pgCols: Col[] = rows.rows.filter((r) => !pgOnly(r)).map((r) => ({
        table: r.table_name, column: r.column_name, type: r.data_type, notNull: r.is_nullable === 'NO',
        dflt: r.column_default === null ? null : r.column_default.replace(/::[a-z ]+$/, ''),
        pk: pkOf.get(`${r.table_name}.${r.column_name}`) ?? 0,
      })).sort((a, b) => `${a.table}.${a.column}`.localeCompare(`${b.table}.${b.column}`));
      assert.deepEqual(pgCols, sqliteColumns());
      const notC = rows.rows.filter((r) => r.data_type === 'text' && r.collation_name !== 'C').map((r) => `${r.table_name}.${r.column_name}`);
      assert.deepEqual(notC, [], 'every text column compares bytes, as SQLite does');
      const identity = rows.rows.filter((r) => r.is_identity === 'YES').map((r) => r.table_name).sort();
      assert.deepEqual(identity, ['events', 'job_commands', 'job_merges', 'job_warnings', 'kb_entries', 'lock_waits', 'messages', 'overlaps', 'request_late_answers', 'usage'], 'INTEGER PRIMARY KEY (assigned when omitted) is an identity');
    } finally {
      await s.close();
      await fresh.drop();
    }
  });

  test('two processes open one fresh database at the same moment: both open it, the migrations ran once', async (t) => {
    const { url, answers } = await twoAtOnce(t, (url) => ({ op: 'open', home: tmp(), url }));
    assert.deepEqual(answers, [{ ok: true }, { ok: true }]);
    const done = await rows<{ name: string }>(url, `SELECT name FROM ${PG_MIGRATION_TABLE}`);
    assert.deepEqual(done.map((r) => r.name).sort(), Object.keys(PG_MIGRATIONS).sort());
  });

  test('the Migrator\'s lock holds across processes: a migration that takes 300 ms, started by two at once, runs in one of them', async (t) => {
    const { url, answers, pair } = await twoAtOnce(t, (url) => ({ op: 'migrate', url, slowMs: 300 }));
    assert.deepEqual(answers.map((a) => a.ran).sort(), [[], ['0001-count']]);
    const runs = await rows<{ pid: number }>(url, 'SELECT pid FROM migration_runs');
    assert.equal(runs.length, 1, `the migration ran in ${runs.length} processes`);
    assert.equal(runs[0]!.pid, pair[answers.findIndex((a) => (a.ran as string[]).length === 1)]!.pid);
  });

  test('a database migrated by a newer overseer is refused at open: says to upgrade', async () => {
    const fresh = await freshDatabase();
    try {
      const s = await openSql({ home: tmp(), databaseUrl: fresh.url });
      await sql`INSERT INTO ${sql.table(PG_MIGRATION_TABLE)} (name, timestamp) VALUES ('0099-future', now())`.execute(s.db);
      await s.close();
      await assert.rejects(openSql({ home: tmp(), databaseUrl: fresh.url }), (e: Error) =>
        e instanceof InvalidInputError && /newer than this overseer knows.*upgrade overseer-mcp/.test(e.message) && !e.message.includes(new URL(fresh.url).password));
    } finally {
      await fresh.drop();
    }
  });
});

describe('SQLite: two processes opening a fresh state file at once', () => {
  test('both open it, and every migration ran exactly once (five rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const pair = [await startRacer(), await startRacer()];
      racers.push(...pair);
      const home = tmp();
      const answers = await all(pair, { op: 'open', home });
      assert.deepEqual(answers.map((a) => a.ok), [true, true], JSON.stringify(answers));
      await all(pair, { op: 'close' });
      const db = new Database(join(home, 'state.db'), { readonly: true });
      const versions = (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
      db.close();
      assert.deepEqual(versions, MIGRATIONS.map((m) => m.version), `round ${round}`);
    }
  });
});
