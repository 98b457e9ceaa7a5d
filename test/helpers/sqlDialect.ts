// A fresh layer for one test on either database: SQLite in a new temp state directory, or a
// fresh PostgreSQL database (test/helpers/postgres.ts); both closed (and dropped) after the test.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { freshDatabase } from './postgres.js';

export type Dialect = 'sqlite' | 'postgres';

export async function openDialect(dialect: Dialect, t: { after: (fn: () => Promise<void> | void) => void }): Promise<{ s: SqlDb; home: string; url?: string }> {
  const home = mkdtempSync(join(tmpdir(), 'overseer-sql-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  let url: string | undefined;
  if (dialect === 'postgres') {
    const d = await freshDatabase();
    t.after(() => d.drop());
    url = d.url;
  }
  const s = await openSql({ home, databaseUrl: url });
  t.after(() => s.close());
  return { s, home, ...(url ? { url } : {}) };
}
