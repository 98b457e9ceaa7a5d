// The tests' PostgreSQL (test/helpers/postgres.ts, issue 29): a real server started by the set-up,
// a database and role per test that sees only its own, a wrong password refused by the server,
// the cluster gone when the process that started it ends (normally, by an uncaught exception,
// by SIGTERM/SIGINT, and by SIGKILL through the watchdog), and a TLS-only server that verify-full accepts with the right CA and refuses
// with a wrong one or without TLS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freshDatabase, postgres, postgresTls } from '../helpers/postgres.js';
import { pgBinDir } from '../helpers/pgCluster.js';
import { makeCa } from '../helpers/pgTls.js';
import { eventually } from '../helpers/wait.js';

const CHILD = fileURLToPath(new URL('../helpers/pgChild.ts', import.meta.url));

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(sql)).rows;
  } finally {
    await c.end();
  }
}

/** The error connecting to `url` fails with (the test fails if it connects). */
async function refusal(url: string): Promise<Error & { code?: string }> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await c.connect();
  } catch (e) {
    await c.end().catch(() => undefined);
    return e as Error & { code?: string };
  }
  await c.end();
  throw new Error(`connecting to ${url.replace(/:[^:@/]*@/, ':***@')} was accepted; it should have been refused`);
}

function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(false); });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });
}

test('the set-up starts one server per process; postgres() gives its URLs (and the cost is measured)', async (t) => {
  const t0 = performance.now();
  const a = await postgres();
  t.diagnostic(`first postgres() (a copy of the initdb template, made once per machine, + start; or the given server): ${(performance.now() - t0).toFixed(0)} ms`);
  const b = await postgres();
  assert.deepEqual(b, a, 'a second call returns the same server');
  const [su] = await query<{ s: string; v: string }>(a.admin, "SELECT current_setting('is_superuser') AS s, current_setting('server_version_num') AS v");
  assert.equal(su?.s, 'on', 'admin is a superuser');
  assert.ok(Number(su?.v) >= 150000, `PostgreSQL 15 or newer, got ${su?.v}`);
  const [v] = await query<{ v: string }>(a.admin, 'SELECT version() AS v');
  t.diagnostic(`${v?.v} (binaries: ${process.env.OVERSEER_TEST_PG_URL ? 'the server OVERSEER_TEST_PG_URL names' : pgBinDir()})`);
  const [plain] = await query<{ s: string }>(a.url, "SELECT current_setting('is_superuser') AS s");
  assert.equal(plain?.s, 'off', 'url is an ordinary role');
});

test('two fresh databases are isolated: each role sees and reaches only its own', async (t) => {
  const t0 = performance.now();
  const one = await freshDatabase();
  t.diagnostic(`freshDatabase(): ${(performance.now() - t0).toFixed(0)} ms`);
  t.after(() => one.drop());
  const two = await freshDatabase();
  t.after(() => two.drop());
  assert.notEqual(new URL(one.url).pathname, new URL(two.url).pathname);
  await query(one.url, 'CREATE TABLE mine (x int); INSERT INTO mine VALUES (1)');
  const tables = await query<{ n: string }>(two.url, "SELECT count(*) AS n FROM pg_tables WHERE schemaname = 'public'");
  assert.equal(tables[0]?.n, '0', 'the second database is empty');
  // Role two, with its own password, on database one: refused by the server.
  const cross = new URL(two.url);
  cross.pathname = new URL(one.url).pathname;
  const e = await refusal(cross.toString());
  assert.equal(e.code, '42501', `insufficient privilege, got ${e.code}: ${e.message}`);
  assert.match(e.message, /permission denied for database/);
  const [who] = await query<{ u: string; d: string; n: string }>(one.url, 'SELECT current_user AS u, current_database() AS d, (SELECT count(*) FROM mine) AS n');
  assert.equal(who?.u, decodeURIComponent(new URL(one.url).username));
  assert.equal(who?.d, new URL(one.url).pathname.slice(1));
  assert.equal(who?.n, '1');
  // drop() removes the database and its role.
  await two.drop();
  const { admin } = await postgres();
  const left = await query<{ n: string }>(admin, `SELECT count(*) AS n FROM pg_database WHERE datname = '${new URL(two.url).pathname.slice(1)}'`);
  assert.equal(left[0]?.n, '0');
});

test('a wrong password is refused with the server\'s message', async (t) => {
  const db = await freshDatabase();
  t.after(() => db.drop());
  const wrong = new URL(db.url);
  wrong.password = 'not-the-password';
  const e = await refusal(wrong.toString());
  assert.equal(e.code, '28P01', `invalid_password, got ${e.code}: ${e.message}`);
  assert.equal(e.message, `password authentication failed for user "${wrong.username}"`);
});

for (const how of ['exit', 'throw', 'SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
  test(`the cluster is stopped and removed when its process ends (${how})`, async () => {
    // The child always starts its own cluster, even where the tests are given a server.
    const env = { ...process.env };
    delete env.OVERSEER_TEST_PG_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, how.startsWith('SIG') ? 'wait' : how], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const exited = once(child, 'exit');
    const lines = createInterface({ input: child.stdout });
    const first = await Promise.race([
      once(lines, 'line').then(([l]) => l as string),
      exited.then(([code]) => { throw new Error(`child exited ${code} before reporting: ${stderr}`); }),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no report from the child within 60 s: ${stderr}`)), 60_000).unref()),
    ]);
    const info = JSON.parse(first) as { port: number; dataDir: string };
    assert.ok(existsSync(info.dataDir), 'the data dir exists while the child runs');
    assert.equal(await portRefuses(info.port), false, 'the server listens while the child runs');
    if (how === 'SIGTERM' || how === 'SIGINT' || how === 'SIGKILL') child.kill(how);
    const [code, signal] = await exited;
    if (how === 'exit') assert.equal(code, 0, stderr);
    if (how === 'throw') { assert.equal(code, 1); assert.match(stderr, /uncaught on purpose/); }
    if (how === 'SIGTERM') assert.equal(code, 143, `exit ${code} / ${signal}: ${stderr}`);
    if (how === 'SIGINT') assert.equal(code, 130, `exit ${code} / ${signal}: ${stderr}`);
    if (how === 'SIGKILL') {
      // No handler runs in the child: the watchdog notices it gone (it checks every second).
      assert.equal(signal, 'SIGKILL');
      await eventually('the watchdog to remove the cluster', () => !existsSync(dirname(info.dataDir)), 30_000, 100);
    }
    assert.equal(existsSync(dirname(info.dataDir)), false, `the cluster's dir ${dirname(info.dataDir)} is removed`);
    assert.equal(await portRefuses(info.port), true, `port ${info.port} refuses connections`);
  });
}

test('TLS: verify-full with the server\'s CA connects encrypted; a wrong CA and plain TCP are refused', async (t) => {
  const t0 = performance.now();
  const tls = await postgresTls();
  t.diagnostic(`postgresTls() (certificates, template copy, start): ${(performance.now() - t0).toFixed(0)} ms`);
  const withParams = (url: string, params: Record<string, string>): string => {
    const u = new URL(url);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    return u.toString();
  };
  const good = withParams(tls.url, { sslmode: 'verify-full', sslrootcert: tls.certs.ca });
  const [row] = await query<{ ssl: boolean; version: string }>(good, 'SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
  assert.equal(row?.ssl, true, 'the connection is encrypted');
  assert.match(row?.version ?? '', /^TLSv1\.[23]$/);
  t.diagnostic(`verify-full with the right CA: ${row?.version}`);

  const elsewhere = mkdtempSync(join(tmpdir(), 'overseer-wrong-ca-'));
  t.after(() => rmSync(elsewhere, { recursive: true, force: true }));
  const wrongCa = makeCa(elsewhere, 'wrong-ca');
  const untrusted = await refusal(withParams(tls.url, { sslmode: 'verify-full', sslrootcert: wrongCa.cert }));
  assert.ok(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY'].includes(untrusted.code ?? ''), `a certificate error, got ${untrusted.code}: ${untrusted.message}`);

  t.diagnostic(`wrong CA: ${untrusted.code} (${untrusted.message})`);
  const plain = await refusal(withParams(tls.url, { sslmode: 'disable' }));
  assert.equal(plain.code, '28000', `invalid_authorization_specification, got ${plain.code}: ${plain.message}`);
  assert.match(plain.message, /pg_hba\.conf rejects connection for host "127\.0\.0\.1", user "overseer_test", database "overseer_test", no encryption/);
});
