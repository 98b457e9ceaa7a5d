// A worker on a network of its own (issue 30; docs/workers-plan.md §7): `overseer worker` runs
// inside a network namespace the test makes, reaching the crew's PostgreSQL only through a veth
// and a relay on this machine's end of it. Its link is cut without a word (the veth's host end
// set down): its heartbeats stop, `overseer hosts` shows it lost once its lease ran out; the link
// restored: the worker finds its lease gone (fenced) and exits 1; started again, it registers under
// the next epoch.
// Also: from inside the namespace, the host's 127.0.0.1 is not the database (nothing listens on
// the namespace's own loopback), so the relay is the only way out. Real processes, real PostgreSQL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSql } from '../../src/store/sql/open.js';
import type { HostJson } from '../../src/cli/hosts.js';
import { MAIN, buildCli, cliEnv, overseer } from '../helpers/cli.js';
import { makeNetns, relay, throughRelay } from '../helpers/netns.js';
import { freshDatabase } from '../helpers/postgres.js';
import { eventually } from '../helpers/wait.js';

test('a worker in its own network namespace: link cut → lost after its lease; link back → fenced, registered under the next epoch', async (t) => {
  buildCli();
  const home = mkdtempSync(join(tmpdir(), 'overseer-netns-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const d = await freshDatabase();
  t.after(() => d.drop());
  await (await openSql({ home, databaseUrl: d.url })).close(); // a hub's start creates the schema

  const ns = makeNetns(0);
  t.after(() => ns.remove());
  const pgPort = Number(new URL(d.url).port);
  const r = await relay(ns.hostAddr, pgPort);
  t.after(() => r.close());
  const inside = throughRelay(d.url, ns, r);

  // The namespace's own loopback has no database: the relay is the one way to it.
  const probe = (host: string, port: number) => spawnSync('ip', ['netns', 'exec', ns.name, process.execPath, '-e',
    `const s=require('net').connect(${port},'${host}');s.setTimeout(3000);s.on('connect',()=>{console.log('open');process.exit(0)});s.on('error',e=>{console.log(e.code);process.exit(0)});s.on('timeout',()=>{console.log('timeout');process.exit(0)})`], { encoding: 'utf8' }).stdout.trim();
  assert.equal(probe('127.0.0.1', pgPort), 'ECONNREFUSED');
  assert.equal(probe(ns.hostAddr, r.port), 'open');

  const env = cliEnv({ OVERSEER_HOME: home, OVERSEER_DATABASE_URL: inside, OVERSEER_LOG_LEVEL: 'warn' });
  const worker = spawn('ip', ['netns', 'exec', ns.name, process.execPath, MAIN, 'worker', '--name', 'w-ns', '--lease', '2', '--labels', 'net'], { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  t.after(() => { try { process.kill(-worker.pid!, 'SIGKILL'); } catch { /* gone */ } });
  let out = '';
  worker.stdout!.setEncoding('utf8').on('data', (s: string) => { out += s; });
  worker.stderr!.setEncoding('utf8').on('data', (s: string) => { out += s; });

  const hostEnv = { OVERSEER_HOME: home, OVERSEER_DATABASE_URL: d.url };
  const hosts = async (): Promise<HostJson | undefined> => {
    const res = await overseer(home, ['hosts', '--json'], hostEnv);
    assert.equal(res.code, 0, res.stderr);
    return (JSON.parse(res.stdout) as HostJson[]).find((h) => h.name === 'w-ns');
  };
  const first = await eventually('the worker registers through the relay', async () => { const h = await hosts(); return h?.state === 'live' && h; }, 30_000, 200);
  assert.equal(first.epoch, 1);
  assert.deepEqual(first.labels, ['net']);
  assert.ok(r.open() >= 1, 'its connection goes through the relay');

  ns.cut();
  const lost = await eventually('hosts shows the cut-off worker lost once its 2 s lease ran out', async () => { const h = await hosts(); return h?.state === 'lost' && h; }, 30_000, 250);
  assert.ok(lost.heartbeat_age_s >= 2, `heartbeat age ${lost.heartbeat_age_s} s`);
  const exited = new Promise<number | null>((r) => worker.once('exit', (c) => r(c)));
  ns.restore();
  assert.equal(await exited, 1, `back on the network, the worker finds its lease gone: fenced, it exits for its service manager to start it again\n${out}`);
  assert.match(out, /fenced/);
  assert.equal((await hosts())?.state, 'lost', 'it recorded nothing after its lease');
  // Started again (as systemd's Restart=always would), it registers under the next epoch.
  const second = spawn('ip', ['netns', 'exec', ns.name, process.execPath, MAIN, 'worker', '--name', 'w-ns', '--lease', '2', '--labels', 'net'], { cwd: home, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  t.after(() => { try { process.kill(-second.pid!, 'SIGKILL'); } catch { /* gone */ } });
  const again = await eventually('the worker started again registers under epoch 2', async () => { const h = await hosts(); return h?.state === 'live' && h.epoch >= 2 && h; }, 60_000, 250);
  assert.equal(again.epoch, 2);
});
