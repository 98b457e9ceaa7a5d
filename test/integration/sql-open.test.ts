// The Kysely layer's open (src/store/sql/open.ts): SQLite on the state file by default, PostgreSQL
// from databaseUrl / OVERSEER_DATABASE_URL; a wrong URL fails at open with the password masked and
// what to check, against a real server (wrong port, wrong password, missing database).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openSql } from '../../src/store/sql/open.js';
import { maskUrl, scrub, sqlTarget } from '../../src/store/sql/url.js';
import { loadConfig } from '../../src/config.js';
import { InvalidInputError } from '../../src/errors.js';
import { deadPort } from '../helpers/net.js';
import { freshDatabase, postgres, postgresTls } from '../helpers/postgres.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'overseer-sql-open-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** The URL with its password replaced by `password` (and optionally its port or database). */
function variant(url: string, change: { password?: string; port?: number; database?: string }): string {
  const u = new URL(url);
  if (change.password !== undefined) u.password = change.password;
  if (change.port !== undefined) u.port = String(change.port);
  if (change.database !== undefined) u.pathname = `/${change.database}`;
  return u.toString();
}

async function openFails(url: string, password: string): Promise<string> {
  let caught: unknown;
  try {
    const s = await openSql({ home: tmp(), databaseUrl: url });
    await s.close();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof InvalidInputError, `expected InvalidInputError, got ${String(caught)}`);
  const msg = caught.message;
  assert.ok(!msg.includes(password), `the password shows in: ${msg}`);
  assert.match(msg, /:\*\*\*@127\.0\.0\.1:/, `the URL with its password masked: ${msg}`);
  assert.match(msg, /Check: the host and port are reachable/);
  return msg;
}

describe('the database URL', () => {
  test('masked: the password (even with @ or : in it) becomes ***, nothing else changes', () => {
    assert.equal(maskUrl('postgres://overseer:s3cret@db.example:5432/crew?sslmode=require'), 'postgres://overseer:***@db.example:5432/crew?sslmode=require');
    assert.equal(maskUrl('postgres://overseer:p@ss:w0rd@host/db'), 'postgres://overseer:***@host/db');
    assert.equal(maskUrl('postgres://host/db'), 'postgres://host/db');
    assert.equal(maskUrl('postgres://only-user@host/db'), 'postgres://only-user@host/db');
    assert.equal(scrub('login p%40ss failed for p@ss', 'postgres://u:p%40ss@h/d'), 'login *** failed for ***');
  });

  test('none: SQLite in <home>/state.db; another scheme or a malformed URL is refused before any connection, password masked', () => {
    assert.deepEqual(sqlTarget({ home: '/s' }), { dialect: 'sqlite', file: '/s/state.db' });
    assert.throws(() => sqlTarget({ home: '/s', databaseUrl: 'mysql://root:hunter22@h/db' }), (e: Error) =>
      e instanceof InvalidInputError && /"mysql:" is not supported/.test(e.message) && e.message.includes('mysql://root:***@h/db') && !e.message.includes('hunter22'));
    assert.throws(() => sqlTarget({ home: '/s', databaseUrl: 'postgres://u:hunter22@[::zz/db' }), (e: Error) =>
      e instanceof InvalidInputError && /not a valid URL/.test(e.message) && !e.message.includes('hunter22'));
    assert.throws(() => sqlTarget({ home: '/s', databaseUrl: 'postgres://u:hunter22@host' }), /names no database/);
    assert.equal(sqlTarget({ home: '/s', databaseUrl: 'postgresql://u:p@h:5433/d' }).dialect, 'postgres');
  });

  test('config: databaseUrl from config.json, OVERSEER_DATABASE_URL wins over it', () => {
    const home = tmp();
    writeFileSync(join(home, 'config.json'), JSON.stringify({ databaseUrl: 'postgres://file@h/a' }));
    assert.equal(loadConfig({ OVERSEER_HOME: home }, home).databaseUrl, 'postgres://file@h/a');
    assert.equal(loadConfig({ OVERSEER_HOME: home, OVERSEER_DATABASE_URL: 'postgres://env@h/b' }, home).databaseUrl, 'postgres://env@h/b');
    assert.equal(loadConfig({ OVERSEER_HOME: tmp() }, home).databaseUrl, undefined);
  });
});

describe('openSql', () => {
  test('SQLite by default: the state file, WAL, the busy timeout, migrated', async () => {
    const home = tmp();
    const s = await openSql({ home });
    try {
      assert.equal(s.dialect, 'sqlite');
      const mode = await sql<{ journal_mode: string }>`PRAGMA journal_mode`.execute(s.db);
      assert.equal(mode.rows[0]?.journal_mode, 'wal');
      const busy = await sql<{ timeout: number }>`PRAGMA busy_timeout`.execute(s.db);
      assert.equal(busy.rows[0]?.timeout, 5000);
      await s.db.insertInto('notes').values({ key: 'k', value: 'v', version: 1, author: 'lead', updated_at: 1 }).execute();
      assert.deepEqual(await s.db.selectFrom('notes').select(['key', 'version']).execute(), [{ key: 'k', version: 1 }]);
    } finally {
      await s.close();
    }
  });

  test('PostgreSQL: connected and migrated when it returns; BIGINT columns read as numbers', async () => {
    const fresh = await freshDatabase();
    try {
      const s = await openSql({ home: tmp(), databaseUrl: fresh.url });
      try {
        assert.equal(s.dialect, 'postgres');
        await s.db.insertInto('notes').values({ key: 'k', value: 'v', version: 1, author: 'lead', updated_at: 1_764_000_000_000 }).execute();
        assert.deepEqual(await s.db.selectFrom('notes').select(['version', 'updated_at']).execute(), [{ version: 1, updated_at: 1_764_000_000_000 }]);
      } finally {
        await s.close();
      }
    } finally {
      await fresh.drop();
    }
  });

  test('PostgreSQL, nothing listening on the port: fails at open, says to check host and port, password masked', async () => {
    const { admin } = await postgres();
    const password = new URL(admin).password;
    const msg = await openFails(variant(admin, { port: await deadPort() }), password);
    assert.match(msg, /ECONNREFUSED/);
    assert.match(msg, /is PostgreSQL running/);
  });

  test('PostgreSQL, a wrong password: fails at open, says the credentials were refused, neither password shows', async () => {
    const { admin } = await postgres();
    const wrong = 'not-the-pw-4711';
    const msg = await openFails(variant(admin, { password: wrong }), wrong);
    assert.ok(!msg.includes(new URL(admin).password));
    assert.match(msg, /28P01/);
    assert.match(msg, /refused these credentials/);
  });

  test('PostgreSQL, TLS asked of a server without it: fails at open, says what to change in the URL, password masked', async () => {
    const { admin } = await postgres();
    const msg = await openFails(`${admin}?sslmode=verify-full`, new URL(admin).password);
    assert.match(msg, /does not support SSL/);
    assert.match(msg, /remove sslmode from the URL/);
  });

  test('PostgreSQL over TLS: the URL\'s sslmode=verify-full&sslrootcert opens it; without the CA, or without TLS, fails at open saying what to check, password masked', async () => {
    const tls = await postgresTls();
    const password = new URL(tls.url).password;
    const ok = await openSql({ home: tmp(), databaseUrl: `${tls.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(tls.certs.ca)}` });
    try {
      const r = await sql<{ ssl: boolean }>`SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()`.execute(ok.db);
      assert.equal(r.rows[0]?.ssl, true);
    } finally {
      await ok.close();
    }
    const noCa = await openFails(`${tls.url}?sslmode=verify-full`, password);
    assert.match(noCa, /certificate/);
    assert.match(noCa, /TLS handshake failed: check sslmode and sslrootcert/);
    const plain = await openFails(tls.url, password);
    assert.match(plain, /no encryption \[28000\]/);
    assert.match(plain, /only over TLS: add sslmode=verify-full&sslrootcert/);
  });

  test('PostgreSQL, a host name that does not resolve: fails at open, says to fix the host, password masked', async () => {
    const { admin } = await postgres();
    const url = admin.replace('@127.0.0.1:', '@no-such-host.invalid:');
    let caught: unknown;
    await openSql({ home: tmp(), databaseUrl: url }).then((s) => s.close(), (e: unknown) => (caught = e));
    assert.ok(caught instanceof InvalidInputError, String(caught));
    assert.ok(caught.message.includes('postgres://postgres:***@no-such-host.invalid:'), caught.message);
    assert.ok(!caught.message.includes(new URL(admin).password));
    assert.match(caught.message, /(ENOTFOUND|EAI_AGAIN).*(does not resolve)/);
  });

  test('PostgreSQL, a database that does not exist: fails at open, says to create it, password masked', async () => {
    const { admin } = await postgres();
    const msg = await openFails(variant(admin, { database: 'no_such_db' }), new URL(admin).password);
    assert.match(msg, /3D000/);
    assert.match(msg, /does not exist.*createdb/);
  });
});

describe('PostgreSQL connections the server ends', () => {
  test('the connection of an open transaction is terminated: the transaction fails with the reason, the process lives on, the next query gets a new connection', async () => {
    const fresh = await freshDatabase();
    const a = await openSql({ home: tmp(), databaseUrl: fresh.url });
    const b = await openSql({ home: tmp(), databaseUrl: fresh.url });
    try {
      let pid = 0;
      await assert.rejects(a.db.transaction().execute(async (trx) => {
        pid = (await sql<{ p: number }>`SELECT pg_backend_pid() AS p`.execute(trx)).rows[0]!.p;
        await sql`SELECT pg_terminate_backend(${pid})`.execute(b.db);
        // The server's message reaches the checked-out client while nothing of it is in flight;
        // the next statement of the transaction is the one that fails.
        const until = Date.now() + 10_000;
        while ((await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${pid}`.execute(b.db)).rows[0]!.n > 0) {
          if (Date.now() > until) throw new Error('the backend was not terminated within 10 s');
        }
        await sql`SELECT 1`.execute(trx);
      }), /connection error and is not queryable|terminat/i);
      const next = (await sql<{ p: number }>`SELECT pg_backend_pid() AS p`.execute(a.db)).rows[0]!.p;
      assert.notEqual(next, pid);
    } finally {
      await a.close();
      await b.close();
      await fresh.drop();
    }
  });
});
