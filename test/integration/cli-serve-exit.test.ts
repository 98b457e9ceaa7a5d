// Integration: `overseer serve` exits early without a stack trace. A second `serve` for the same
// state directory (a real hub already serves it) used to die with pino's "sonic boom is not ready
// yet" stack because it exited before its log file was open; now it prints one line and exits 1.
// A bad --port is one line too; the first hub stops cleanly (exit 0) on SIGTERM.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/claude.js';
import { buildCli, cliEnv, MAIN, overseer } from '../helpers/cli.js';
import { eventually } from '../helpers/wait.js';
import { deadPort } from '../helpers/net.js';
import { freshDatabase } from '../helpers/postgres.js';
import { sql } from 'kysely';
import { openSql } from '../../src/store/sql/open.js';

let tmp = '';
after(async () => { if (tmp) await rm(tmp, { recursive: true, force: true }); });

test('a second serve for a served state directory: one line, exit 1, no stack trace; bad --port likewise', { timeout: 120_000 }, async () => {
  buildCli();
  tmp = await makeTempDir('ovs-serve');
  const env = { OVERSEER_HOME: join(tmp, 'state') };
  const first = spawn(process.execPath, [MAIN, 'serve', '-p', '0'], { cwd: tmp, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  first.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  const firstExit = new Promise<number | null>((r) => first.on('exit', (c) => r(c)));
  try {
    await eventually('the first hub listening', () => /listening on http:\/\/127\.0\.0\.1:\d+/.test(out), 30_000);
    const second = await overseer(tmp, ['serve', '-p', '0'], env);
    assert.equal(second.code, 1);
    assert.match(second.stderr, /^A hub already runs for .*state: pid \d+, port \d+ \(http:\/\/127\.0\.0\.1:\d+\/mcp\), since \d{4}-/);
    assert.doesNotMatch(second.stderr, /sonic boom|^\s+at /m, `stack trace on an early exit:\n${second.stderr}`);
    assert.equal(second.stderr.trimEnd().split('\n').length, 1, second.stderr);

    const badPort = await overseer(tmp, ['serve', '-p', 'abc'], env);
    assert.equal(badPort.code, 2, 'a usage error');
    assert.match(badPort.stderr, /^overseer: --port "abc" is not a port number/);
    assert.doesNotMatch(badPort.stderr, /^\s+at /m);
  } finally {
    first.kill('SIGTERM');
  }
  assert.equal(await firstExit, 0);
});

test('serve with a PostgreSQL URL nothing answers at: one line that masks the password and says what to check, exit 2, no state file, the state directory free again; a URL of another scheme is said so', { timeout: 60_000 }, async () => {
  buildCli();
  const dir = await makeTempDir('ovs-serve-pg');
  try {
    const port = await deadPort();
    const env = { OVERSEER_HOME: join(dir, 'state'), OVERSEER_DATABASE_URL: `postgres://crew:hunter2-secret@127.0.0.1:${port}/overseer` };
    const r = await overseer(dir, ['serve', '-p', '0'], env);
    assert.equal(r.code, 2, r.stderr); // a configuration error, like a bad --port
    assert.match(r.stderr, new RegExp(`cannot open the database postgres://crew:\\*\\*\\*@127\\.0\\.0\\.1:${port}/overseer`));
    assert.match(r.stderr, /Nothing accepts connections at that host and port/);
    assert.doesNotMatch(r.stderr, /hunter2-secret/);
    assert.doesNotMatch(r.stderr, /^\s+at /m);
    assert.equal(existsSync(join(dir, 'state', 'state.db')), false, 'nothing was created');
    const again = await overseer(dir, ['serve', '-p', '0'], env);
    assert.doesNotMatch(again.stderr, /A hub already runs/, 'the failed start released the state directory');
    const mysql = await overseer(dir, ['serve', '-p', '0'], { ...env, OVERSEER_DATABASE_URL: 'mysql://root:pw@h/db' });
    assert.equal(mysql.code, 2);
    assert.match(mysql.stderr, /the scheme "mysql:" is not supported/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('serve on PostgreSQL: the hub keeps its state in the database (no state.db), listens, and stops cleanly', { timeout: 90_000 }, async (t) => {
  buildCli();
  const db = await freshDatabase();
  t.after(() => db.drop());
  const dir = await makeTempDir('ovs-serve-pg-up');
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = { OVERSEER_HOME: join(dir, 'state'), OVERSEER_DATABASE_URL: db.url };
  const hub = spawn(process.execPath, [MAIN, 'serve', '-p', '0'], { cwd: dir, env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  hub.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  hub.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
  const exit = new Promise<number | null>((r) => hub.on('exit', (c) => r(c)));
  try {
    await eventually('the hub on PostgreSQL listening', () => /listening on http:\/\/127\.0\.0\.1:\d+/.test(out), 30_000).catch((e: Error) => { throw new Error(`${e.message}\n${err}`); });
    assert.equal(existsSync(join(dir, 'state', 'state.db')), false, 'no SQLite state beside the database');
    const pg = await openSql({ home: join(dir, 'unused'), databaseUrl: db.url });
    try {
      const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM overseer_migration`.execute(pg.db);
      assert.ok(Number(rows[0]!.n) > 0, 'the hub migrated the database');
    } finally {
      await pg.close();
    }
  } finally {
    hub.kill('SIGTERM');
  }
  assert.equal(await exit, 0, err);
});
