// A fresh layer on either database: SQLite in a new temp state directory, or a fresh PostgreSQL
// database (test/helpers/postgres.ts); both closed (and dropped, and the directory removed) after.
// `openDialect` is one test's; `dialectSuite` is a describe's, with racer processes on it if asked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, after } from 'node:test';
import { sql } from 'kysely';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { freshDatabase } from './postgres.js';
import { all, startRacer, type Racer } from './sqlRacers.js';

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

export interface SuiteOptions {
  /** Prefix of the temp state directory's name. */
  prefix?: string;
  /** Open a second connection (pool) to the same database as `other`. */
  other?: boolean;
  /** Start `n` racer processes (sqlRacers.ts; `script` defaults to sqlRacer.ts) and open them on the
   *  database after it is migrated, then send each of `warm` to all of them (to load the store
   *  modules before the races, so that the races start together). */
  racers?: { n: number; script?: string; warm?: Record<string, unknown>[] };
}

/** What a suite's tests read: set in its `before`, valid until its `after`. */
export interface SuiteLayer {
  s: SqlDb;
  other: SqlDb;
  home: string;
  url: string | undefined;
  /** Filled in `before` (the same array all along). */
  racers: Racer[];
}

/** Call inside a `describe`: registers the suite's own before/after hooks that open (and migrate)
 *  a fresh layer on `dialect`, then start and open the racers; after, close the racers (or kill
 *  them), the connections, drop the PostgreSQL database and remove the directory. */
export function dialectSuite(dialect: Dialect, o: SuiteOptions = {}): SuiteLayer {
  const layer = { home: '', url: undefined, racers: [] as Racer[] } as unknown as SuiteLayer;
  let drop = async (): Promise<void> => undefined;
  let opened: SqlDb | undefined;
  let other: SqlDb | undefined;
  before(async () => {
    layer.home = mkdtempSync(join(tmpdir(), o.prefix ?? 'overseer-sql-'));
    if (dialect === 'postgres') {
      const fresh = await freshDatabase();
      layer.url = fresh.url;
      drop = fresh.drop;
    }
    const config = { home: layer.home, databaseUrl: layer.url };
    layer.s = opened = await openSql(config); // migrates (SQLite: before the racers open the same file)
    if (o.other) layer.other = other = await openSql(config);
    if (!o.racers) return;
    for (let i = 0; i < o.racers.n; i++) layer.racers.push(await startRacer(30_000, o.racers.script));
    await all(layer.racers, { op: 'open', home: config.home, url: config.databaseUrl });
    for (const cmd of o.racers.warm ?? []) await all(layer.racers, cmd);
  });
  after(async () => {
    try {
      await all(layer.racers, { op: 'close' }).catch(() => layer.racers.forEach((r) => r.kill()));
      await other?.close();
      await opened?.close();
      await drop();
    } finally {
      if (layer.home) rmSync(layer.home, { recursive: true, force: true });
    }
  });
  return layer;
}

/** Resolves when `n` other sessions wait for a lock in a statement that takes a row lock with FOR
 *  UPDATE (PostgreSQL; deadline 10 s); `what` names the row in the error. */
export async function rowLockWaiters(s: SqlDb, n: number, what: string): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const r = await sql<{ c: number }>`SELECT count(*)::int AS c FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%for update%'`.execute(s.db);
    if (r.rows[0]!.c >= n) return;
    if (Date.now() > until) throw new Error(`${n} sessions did not wait for ${what} within 10 s (${r.rows[0]!.c} do)`);
    await new Promise((res) => setImmediate(res));
  }
}
