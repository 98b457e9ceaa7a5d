// `overseer doctor`'s database check against real PostgreSQL servers (src/doctor/database.ts):
// what it finds on a fresh and on a migrated database, without changing either; a wrong password
// said with the password masked; TLS seen on the connection; migrations a newer overseer ran;
// and the plain fact that this version's hub does not run on PostgreSQL yet.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { checkDatabase } from '../../src/doctor/database.js';
import { loadConfigFrom } from '../../src/config.js';
import { openSql } from '../../src/store/sql/open.js';
import { PG_MIGRATIONS, PG_MIGRATION_TABLE } from '../../src/store/sql/migrate.js';
import { freshDatabase, postgresTls } from '../helpers/postgres.js';

const home = mkdtempSync(join(tmpdir(), 'overseer-doctor-db-'));
after(() => rmSync(home, { recursive: true, force: true }));
const config = (databaseUrl?: string) => loadConfigFrom({ home, ...(databaseUrl ? { databaseUrl } : {}) });

async function tables(url: string): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return Number((await c.query("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = 'public'")).rows[0].n);
  } finally {
    await c.end();
  }
}

describe('doctor: the database check', () => {
  test('without a URL there is nothing to check', async () => {
    assert.equal(await checkDatabase(config()), undefined);
  });

  test('a fresh database: connected, version, no TLS on loopback, every migration still to apply — and nothing written; then migrated: all applied', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const known = Object.keys(PG_MIGRATIONS).length;
    const c = (await checkDatabase(config(d.url)))!;
    assert.equal(c.name, 'database');
    assert.match(c.detail, /PostgreSQL 1\d[.\d]*.*connected in \d+ ms, no TLS; schema: 0 migrations applied, \d+ to apply when a hub starts/);
    assert.match(c.detail, new RegExp(`, ${known} to apply`));
    assert.doesNotMatch(c.detail, new RegExp(new URL(d.url).password));
    assert.equal(await tables(d.url), 0, 'the check changed nothing');
    assert.equal(c.status, 'fail', 'this version\'s hub refuses the URL, and doctor says so');
    assert.match(c.fix ?? '', /unset OVERSEER_DATABASE_URL/);

    const s = await openSql({ home, databaseUrl: d.url });
    await s.close();
    const migrated = (await checkDatabase(config(d.url)))!;
    assert.match(migrated.detail, new RegExp(`schema: ${known} migrations? applied;`));
    assert.doesNotMatch(migrated.detail, /to apply|refused/);
  });

  test('migrations a newer overseer ran: fail, upgrade', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const s = await openSql({ home, databaseUrl: d.url });
    await s.close();
    const c = new pg.Client({ connectionString: d.url });
    await c.connect();
    await c.query(`INSERT INTO ${PG_MIGRATION_TABLE} (name, timestamp) VALUES ('9999-from-the-future', now()::text)`);
    await c.end();
    const r = (await checkDatabase(config(d.url)))!;
    assert.equal(r.status, 'fail');
    assert.match(r.detail, /does not know \(9999-from-the-future\)/);
    assert.match(r.fix ?? '', /upgrade overseer-mcp/);
  });

  test('a wrong password: fail with the masked URL and what to check', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const u = new URL(d.url);
    u.password = 'not-the-password-9f3';
    const r = (await checkDatabase(config(u.toString())))!;
    assert.equal(r.status, 'fail');
    assert.match(r.detail, /refused these credentials/);
    assert.match(r.detail, /:\*\*\*@/);
    assert.doesNotMatch(r.detail, /not-the-password-9f3/);
  });

  test('over TLS: the connection\'s TLS version and the URL\'s sslmode are shown', async () => {
    const tls = await postgresTls();
    const r = (await checkDatabase(config(`${tls.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(tls.certs.ca)}`)))!;
    assert.match(r.detail, /TLS ?TLSv1\.[23] \(sslmode=verify-full\)/);
  });
});
