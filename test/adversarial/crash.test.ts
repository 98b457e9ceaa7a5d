// Adversarial: crash faults of a real hub process (`node dist/cli/main.js serve` in a temp repo
// with its own OVERSEER_HOME). kill -9 during concurrent note writes: every acknowledged write
// is readable after a restart. Then a deleted WAL (and shm) file, and a corrupt or empty
// hub.json: the next start serves, or refuses with a clear message — never a stack trace.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callTool, connectHttp } from './harness.js';
import { initRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';
import { Checks, printTally } from './tally.js';

const MAIN = resolve(fileURLToPath(import.meta.url), '..', '..', '..', 'dist', 'cli', 'main.js');
const STACK = /\n\s+at .+[:(].*\d+:\d+\)?/;

interface Served { child: ChildProcess; url?: string; code?: number | null; stderr: string; stdout: string }

describe('adversarial: crash faults of a real hub process', { timeout: 120_000 }, () => {
  let dir: string;
  let project: string;
  let home: string;
  const running: ChildProcess[] = [];

  before(async () => {
    assert.ok(existsSync(MAIN), `${MAIN} is missing: run npm run build first (npm test does)`);
    dir = await makeTempDir('ovs-crash');
    project = join(dir, 'repo');
    home = join(dir, 'state');
    await initRepo(project);
  });
  after(async () => {
    for (const c of running) if (c.exitCode === null && c.signalCode === null) process.kill(-c.pid!, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
    printTally('crash');
  });

  /** Starts `serve` in its own process group; resolves once it listens or exits (30 s deadline). */
  const serve = (): Promise<Served> => new Promise((resolveServe, reject) => {
    const env = { ...process.env, OVERSEER_HOME: home, OVERSEER_LOG_LEVEL: 'warn' };
    const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0'], { cwd: project, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(child);
    const s: Served = { child, stderr: '', stdout: '' };
    const timer = setTimeout(() => reject(new Error(`serve neither listened nor exited in 30 s: ${s.stdout} ${s.stderr}`)), 30_000);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => { s.stderr += d; });
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      s.stdout += d;
      const m = /listening on (\S+)/.exec(s.stdout);
      if (m && !s.url) { s.url = m[1]; clearTimeout(timer); resolveServe(s); }
    });
    child.on("exit", (code) => { s.code = code; clearTimeout(timer); resolveServe(s); });
  });

  const kill9 = async (s: Served): Promise<void> => {
    const gone = new Promise((r) => s.child.once('exit', r));
    process.kill(-s.child.pid!, 'SIGKILL');
    await gone;
  };
  const stopGracefully = async (s: Served): Promise<void> => {
    const gone = new Promise((r) => s.child.once('exit', r));
    process.kill(-s.child.pid!, 'SIGTERM');
    await gone;
  };
  const lead = (s: Served): Promise<Client> => connectHttp(s.url!, readFileSync(join(home, 'lead.token'), 'utf8').trim());

  /** Writes notes from `n` clients until `stopAt` writes are acknowledged, then kill -9s while writes are in flight. */
  const writeAndKill = async (s: Served, n: number, stopAt: number): Promise<Map<string, string>> => {
    const acked = new Map<string, string>();
    const clients = await Promise.all(Array.from({ length: n }, () => lead(s)));
    let killing: Promise<void> | undefined;
    await Promise.all(clients.map(async (c, i) => {
      for (let j = 0; !killing; j++) {
        const key = `crash/c${i}/w${j}`;
        const value = `v-${i}-${j}-${'x'.repeat(j % 7 * 100)}`;
        // A call in flight at the kill has no answer (the SDK waits to resume its stream): a deadline ends it.
        const r = await callTool(c, 'write_note', { key, value, expected_version: 0 }, killing ? 2000 : 10_000);
        if (!r.isError) acked.set(key, value);
        if (acked.size >= stopAt && !killing) killing = kill9(s);
      }
    }));
    await killing;
    for (const c of clients) await c.close().catch(() => undefined);
    return acked;
  };

  const servesOrRefusesClearly = (c: Checks, label: string, s: Served): boolean => c.check(label,
    (s.url !== undefined || (s.code !== 0 && s.code !== null && s.stderr.trim().length > 0)) && !STACK.test(s.stderr) && !STACK.test(s.stdout),
    `url ${s.url} exit ${s.code} stderr ${s.stderr.slice(0, 300)}`);

  test('kill -9 during concurrent note writes: every acknowledged write survives a restart', async () => {
    const c = new Checks('crash');
    const first = await serve();
    assert.ok(first.url, `serve did not start: ${first.stderr}`);
    const acked = await writeAndKill(first, 8, 150);
    assert.ok(acked.size >= 150);
    const second = await serve();
    servesOrRefusesClearly(c, 'restart after kill -9', second);
    assert.ok(second.url, `restart failed: ${second.stderr}`);
    const client = await lead(second);
    const lost: string[] = [];
    for (const [key, value] of acked) {
      const r = await callTool(client, 'read_note', { key });
      if (r.isError || (JSON.parse(r.text) as { value?: string }).value !== value) lost.push(key);
    }
    await client.close();
    c.check(`all ${acked.size} acknowledged writes readable after kill -9`, lost.length === 0, `lost ${lost.length}: ${lost.slice(0, 5).join(', ')}`);
    await kill9(second);
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  test('a deleted WAL, then a corrupt and an empty hub.json: serve or refuse clearly', async () => {
    // A hub.json naming some other live process (pid reuse after a kill -9) must not block a start:
    // only the holder of the kernel claim serves, and hub.json is believed only when /health agrees.
    const c = new Checks('crash', []);
    const s1 = await serve();
    assert.ok(s1.url, s1.stderr);
    await writeAndKill(s1, 4, 40);
    // About SQLite itself (its write-ahead log lost): there is no such file on PostgreSQL.
    for (const f of ['state.db-wal', 'state.db-shm']) rmSync(join(home, f), { force: true });
    const s2 = await serve();
    servesOrRefusesClearly(c, 'start after the WAL was deleted', s2);
    if (s2.url) {
      const client = await lead(s2);
      const r = await callTool(client, 'write_note', { key: 'after-wal', value: 'ok' });
      c.check('writes work after the WAL was deleted', !r.isError, r.text);
      await client.close();
    }
    // Stop cleanly so the next starts meet only the bad hub.json, not a stale lock (kill -9 + restart is the test above).
    if (s2.url) await stopGracefully(s2);
    for (const [label, content] of [['corrupt hub.json', '{"pid": 1, "url": '], ['empty hub.json', ''], ['hub.json of a live foreign pid', JSON.stringify({ pid: process.pid, port: 1, url: 'http://127.0.0.1:1/mcp', started_at: 'x', version: '' })]] as const) {
      writeFileSync(join(home, 'hub.json'), content);
      const s = await serve();
      servesOrRefusesClearly(c, `start with a ${label}`, s);
      if (s.url) await stopGracefully(s);
    }
    const s3 = await serve();
    assert.ok(s3.url, s3.stderr);
    await kill9(s3);
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ pid: process.pid, port: 1, url: 'http://127.0.0.1:1/mcp', started_at: new Date().toISOString(), version: '' }));
    const s4 = await serve();
    servesOrRefusesClearly(c, 'no stack trace after kill -9 with a hub.json naming a live process', s4);
    c.check('start after kill -9 with hub.json naming a live process that is no hub', s4.url !== undefined, `exit ${s4.code}: ${s4.stderr.trim()}`);
    if (s4.url) await stopGracefully(s4);
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });
});
