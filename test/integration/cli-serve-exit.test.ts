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

test('serve with a PostgreSQL URL it cannot run on yet: one line that masks the password and says how to go on, exit 2, no state file; a URL of another scheme is said so', { timeout: 60_000 }, async () => {
  buildCli();
  const dir = await makeTempDir('ovs-serve-pg');
  try {
    const env = { OVERSEER_HOME: join(dir, 'state'), OVERSEER_DATABASE_URL: 'postgres://crew:hunter2-secret@127.0.0.1:5432/overseer' };
    const r = await overseer(dir, ['serve', '-p', '0'], env);
    assert.equal(r.code, 2, r.stderr); // a configuration error, like a bad --port
    assert.match(r.stderr, /postgres:\/\/crew:\*\*\*@127\.0\.0\.1:5432\/overseer/);
    assert.match(r.stderr, /cannot run on yet.*Unset it to keep the state in SQLite/s);
    assert.doesNotMatch(r.stderr, /hunter2-secret/);
    assert.doesNotMatch(r.stderr, /^\s+at /m);
    assert.equal(existsSync(join(dir, 'state', 'state.db')), false, 'nothing was created');
    const mysql = await overseer(dir, ['serve', '-p', '0'], { ...env, OVERSEER_DATABASE_URL: 'mysql://root:pw@h/db' });
    assert.equal(mysql.code, 2);
    assert.match(mysql.stderr, /the scheme "mysql:" is not supported/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
