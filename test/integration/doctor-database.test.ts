// `overseer doctor`'s database check against real PostgreSQL servers (src/doctor/database.ts):
// what it finds on a fresh and on a migrated database, without changing either; a wrong password
// said with the password masked; TLS seen on the connection; migrations a newer overseer ran;
// an empty or migrated database is fine; a password the hub holds while agents run unconfined is
// a warning.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { checkDatabase } from '../../src/doctor/database.js';
import { loadConfigFrom } from '../../src/config.js';
import { sql } from 'kysely';
import { openSql } from '../../src/store/sql/open.js';
import { PG_MIGRATIONS, PG_MIGRATION_TABLE } from '../../src/store/sql/migrate.js';
import { freshDatabase, postgresTls } from '../helpers/postgres.js';

const home = mkdtempSync(join(tmpdir(), 'overseer-doctor-db-'));
after(() => rmSync(home, { recursive: true, force: true }));
const config = (databaseUrl?: string, confine: 'auto' | 'off' = 'auto') => loadConfigFrom({ home, confine, ...(databaseUrl ? { databaseUrl } : {}) });
/** Children run confined (the probe says bubblewrap works): no exposure warning from the environment. */
const confined = { env: {}, probeConfine: () => ({ ok: true as const, bwrap: '/usr/bin/bwrap' }) };
const check = (c: ReturnType<typeof config>, deps: Parameters<typeof checkDatabase>[1] = confined) => checkDatabase(c, deps);

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
    assert.equal(await check(config()), undefined);
  });

  test('a fresh database: connected, version, no TLS on loopback, no schema yet (OK: a hub creates it) — and nothing written; then migrated: current, OK', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const known = Object.keys(PG_MIGRATIONS).length;
    const c = (await check(config(d.url)))!;
    assert.equal(c.name, 'database');
    assert.match(c.detail, /PostgreSQL 1\d[.\d]*.*connected in \d+ ms, no TLS; schema: none yet \(a hub creates it when it starts/);
    assert.doesNotMatch(c.detail, new RegExp(new URL(d.url).password));
    assert.equal(await tables(d.url), 0, 'the check changed nothing');
    assert.equal(c.status, 'ok', 'an empty database is fine: a hub creates the schema');

    const s = await openSql({ home, databaseUrl: d.url });
    const migrated0 = (await check(config(d.url)))!;
    assert.match(migrated0.detail, /; size \d+(\.\d)? (KB|MB); live hubs: none/, 'the state\'s size and no live hub');
    // A live hub (its heartbeat 3 s old on the database's clock) and a dead one: only the live one is listed.
    const now = Number((await sql<{ n: string }>`SELECT (extract(epoch from clock_timestamp()) * 1000)::bigint AS n`.execute(s.db)).rows[0]!.n);
    await s.db.insertInto('hubs').values([
      { id: 'hub-live', host: 'box-a', pid: 1, url: null, state_dir: home, version: 'x', started_at: now - 60_000, heartbeat_at: now - 3000, stopped_at: null, dead_at: null },
      { id: 'hub-dead', host: 'box-b', pid: 2, url: null, state_dir: home, version: 'x', started_at: now - 60_000, heartbeat_at: now - 60_000, stopped_at: null, dead_at: now - 1000 },
    ]).execute();
    await s.close();
    const migrated = (await check(config(d.url)))!;
    assert.match(migrated.detail, /live hubs: hub-live on box-a \(heartbeat [3-9] s ago\)$/);
    assert.match(migrated.detail, new RegExp(`schema: ${known} migrations? applied \\(current\\)`));
    assert.doesNotMatch(migrated.detail, /to apply|refused/);
    assert.equal(migrated.status, 'ok', 'a reachable, migrated database is OK');
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
    const r = (await check(config(d.url)))!;
    assert.equal(r.status, 'fail');
    assert.match(r.detail, /does not know \(9999-from-the-future\)/);
    assert.match(r.fix ?? '', /upgrade overseer-mcp/);
  });

  test('a wrong password: fail with the masked URL and what to check', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const u = new URL(d.url);
    u.password = 'not-the-password-9f3';
    const r = (await check(config(u.toString())))!;
    assert.equal(r.status, 'fail');
    assert.match(r.detail, /refused these credentials/);
    assert.match(r.detail, /:\*\*\*@/);
    assert.doesNotMatch(r.detail, /not-the-password-9f3/);
  });

  test('a password the hub holds (URL or PGPASSWORD) while agents run unconfined: a warning that says what they could read and how to fix it', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const u = new URL(d.url);
    assert.ok(u.password, 'the test server\'s URL carries a password');
    const noBwrap = (env: NodeJS.ProcessEnv) => ({ env, probeConfine: () => ({ ok: false as const, reason: 'bubblewrap is not installed (bwrap not on PATH)' }) });

    const off = (await check(config(d.url, 'off'), { env: {}, probeConfine: () => { throw new Error('confinement is off: no probe'); } }))!;
    assert.equal(off.status, 'warn');
    assert.match(off.detail, /the database password is in the URL and agents run unconfined \(switched off \(OVERSEER_CONFINE=off\)\): a program an agent runs can read the hub's environment .*docs\/security\.md/);
    assert.match(off.fix ?? '', /run agents confined: install bubblewrap .* OVERSEER_CONFINE at auto or require/);
    assert.doesNotMatch(`${off.detail} ${off.fix}`, new RegExp(u.password));

    const unavailable = (await check(config(d.url), noBwrap({})))!;
    assert.equal(unavailable.status, 'warn');
    assert.match(unavailable.detail, /agents run unconfined \(bubblewrap is not installed/);

    // No password in the URL, but PGPASSWORD in the hub's environment (which the driver reads to connect): the same exposure.
    const env = { PGPASSWORD: decodeURIComponent(u.password) };
    u.password = '';
    const before = process.env.PGPASSWORD;
    process.env.PGPASSWORD = env.PGPASSWORD;
    try {
      const viaEnv = (await check(config(u.toString()), noBwrap(env)))!;
      assert.equal(viaEnv.status, 'warn', viaEnv.detail);
      assert.match(viaEnv.detail, /the database password is in PGPASSWORD and agents run unconfined/);
      // Confined agents: nothing to warn about.
      assert.equal((await check(config(u.toString()), { env, probeConfine: confined.probeConfine }))!.status, 'ok');
    } finally {
      if (before === undefined) delete process.env.PGPASSWORD;
      else process.env.PGPASSWORD = before;
    }
    assert.equal((await check(config(d.url)))!.status, 'ok', 'confined agents: no warning');
  });

  test('over TLS: the connection\'s TLS version and the URL\'s sslmode are shown', async () => {
    const tls = await postgresTls();
    const r = (await check(config(`${tls.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(tls.certs.ca)}`)))!;
    assert.match(r.detail, /TLS ?TLSv1\.[23] \(sslmode=verify-full\)/);
  });
});
