// PostgreSQL's migrations, run by Kysely's Migrator. One version sequence for both dialects: a
// schema change is one version with its SQLite text (src/store/migrations.ts, still run by the
// synchronous store's openDb) and its PostgreSQL text here, named `<version, 4 digits>-<what>`.
// PostgreSQL starts at the baseline of version 26. The Migrator runs every pending migration in
// one transaction under a session advisory lock, so two processes that open one fresh database
// together run them once (test/integration/sql-migrations.test.ts starts two).
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { PG_BASELINE_26 } from './pgBaseline.js';
import { PG_28_SEARCH_AND_KB } from './pg28.js';

/** Kysely's record of applied migrations and its lock row (PostgreSQL only). */
export const PG_MIGRATION_TABLE = 'overseer_migration';
export const PG_MIGRATION_LOCK_TABLE = 'overseer_migration_lock';

const raw = (text: string): Migration => ({ up: async (db) => void (await sql.raw(text).execute(db)) });

/**
 * What PostgreSQL has and SQLite's state database has not (the schema-equality test leaves them
 * out): the knowledge bases (SQLite keeps each in a file of its own) and the tsvector the
 * transcript index is searched by (SQLite's is the FTS5 table transcript_fts).
 */
export const PG_ONLY = { tables: ['kb_entries'], columns: ['transcript_rows.search_doc'] } as const;

export const PG_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0026-baseline': raw(PG_BASELINE_26),
  '0028-search-and-kb': raw(PG_28_SEARCH_AND_KB),
};

/** Apply every pending PostgreSQL migration; throws with what went wrong (the caller adds where). */
export async function migratePostgres(db: Kysely<unknown>, migrations: Readonly<Record<string, Migration>> = PG_MIGRATIONS): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ ...migrations }) },
    migrationTableName: PG_MIGRATION_TABLE,
    migrationLockTableName: PG_MIGRATION_LOCK_TABLE,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const msg = error instanceof Error ? error.message : String(error);
    if (/previously executed migration .* is missing/i.test(msg)) {
      throw new Error(`the database's schema is newer than this overseer knows (${msg}): upgrade overseer-mcp`);
    }
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`migration ${failed ?? '(before any ran)'} failed: ${msg}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
