// `overseer worker` and `overseer hosts` as real processes on a real PostgreSQL (issue 30, first
// step): two workers register with their capacity, labels and the agent CLIs they found; hosts
// lists them; one killed with -9 shows its heartbeat growing old and then `lost` once its lease ran
// out, while the other stays live; SIGTERM marks a worker stopped; a worker paused past its lease
// is fenced and registers again under the next epoch; several started under one name at once: one
// registers, the others are refused naming it. Bad input changes nothing: an unknown flag, capacity
// 0, a SQLite state, a database without Overseer's schema.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSql } from '../../src/store/sql/open.js';
import { MAIN, buildCli, cliEnv, overseer, type CliRun } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/postgres.js';
import { eventually } from '../helpers/wait.js';
import type { HostJson } from '../../src/cli/hosts.js';

interface WorkerProc {
  child: ChildProcess;
  pid: number;
  /** The line it printed when it registered (or the failure if it exited first). */
  registered: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

describe('overseer worker and overseer hosts (PostgreSQL)', () => {
  let home = '';
  let url = '';
  let drop = async (): Promise<void> => undefined;
  const procs: ChildProcess[] = [];
  const env = (): NodeJS.ProcessEnv => ({ OVERSEER_HOME: home, OVERSEER_DATABASE_URL: url, OVERSEER_LOG_LEVEL: 'warn' });

  before(async () => {
    buildCli();
    home = mkdtempSync(join(tmpdir(), 'overseer-workers-'));
    const d = await freshDatabase();
    url = d.url;
    drop = d.drop;
    const s = await openSql({ home, databaseUrl: url }); // a hub's start creates the schema
    await s.close();
  });
  after(async () => {
    for (const c of procs) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await drop();
    rmSync(home, { recursive: true, force: true });
  });

  let homes = 0;
  /** Each worker on a state directory of its own (a worker is a hub in worker mode: one per state directory). */
  function startWorker(args: string[], extraEnv: NodeJS.ProcessEnv = {}): WorkerProc {
    const own = join(home, 'workers', String(++homes));
    const child = spawn(process.execPath, [MAIN, 'worker', ...args], { cwd: home, env: cliEnv({ ...env(), OVERSEER_HOME: own, ...extraEnv }), stdio: ['ignore', 'pipe', 'pipe'] });
    procs.push(child);
    let stdout = '';
    let stderr = '';
    let onLine: ((line: string) => void) | undefined;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const line = stdout.split('\n').find((l) => l.includes(' registered: '));
      if (line) onLine?.(line);
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
    const registered = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker ${args.join(' ')} did not register within 30 s: ${stdout}${stderr}`)), 30_000);
      onLine = (l) => { clearTimeout(timer); resolve(l); };
      void exited.then((e) => { clearTimeout(timer); reject(new Error(`worker ${args.join(' ')} exited (${e.code ?? e.signal}) before it registered: ${e.stdout}${e.stderr}`)); });
    });
    registered.catch(() => undefined);
    return { child, pid: child.pid!, registered, exited };
  }

  async function hosts(): Promise<HostJson[]> {
    const r = await overseer(home, ['hosts', '--json'], env());
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as HostJson[];
  }
  const byName = async (name: string): Promise<HostJson | undefined> => (await hosts()).find((h) => h.name === name);

  test('two workers register; hosts lists them; kill -9 of one: its heartbeat ages and it is lost after its lease; SIGTERM: stopped', async () => {
    // alpha's lease is long enough for two `hosts` runs (a process each) inside it on a loaded machine.
    const a = startWorker(['--name', 'alpha', '--capacity', '4', '--labels', 'gpu,big-disk', '--lease', '6']);
    const b = startWorker(['--name', 'beta', '--capacity', '2', '--lease', '2']);
    assert.match(await a.registered, /^worker alpha registered: epoch 1, capacity 4, labels big-disk,gpu, lease 6 s; CLIs: .*claude /);
    await b.registered;

    const listed = await hosts();
    assert.deepEqual(listed.map((h) => [h.name, h.capacity, h.running, h.labels, h.state, h.epoch, h.lease_s]), [
      ['alpha', 4, 0, ['big-disk', 'gpu'], 'live', 1, 6],
      ['beta', 2, 0, [], 'live', 1, 2],
    ]);
    assert.match(listed[0]!.clis.claude ?? '', /\d+\.\d+\.\d+/, 'the bundled claude and its version');
    assert.equal(listed[0]!.pid, a.pid);
    const text = await overseer(home, ['hosts'], env());
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^NAME +HOST +CAPACITY +RUNNING +HEARTBEAT +LABELS +STATE\nalpha .* 4 +0 +\d+\.\ds ago +big-disk,gpu +live\nbeta .* 2 +0 .* - +live\n$/);

    a.child.kill('SIGKILL');
    await a.exited;
    // Its hub's liveness lock went with the process, so beta's hub finds it dead at its next beats
    // (the fast path: no need to wait out the 6 s lease) and marks the worker lost.
    const lost = await eventually('alpha lost', async () => {
      const h = (await byName('alpha'))!;
      return h.state === 'lost' && h;
    }, 20_000);
    assert.ok(lost.heartbeat_age_s < 6, `lost at ${lost.heartbeat_age_s} s: before its lease, by its free liveness lock`);
    const beta = (await byName('beta'))!;
    assert.equal(beta.state, 'live', 'the other worker kept beating');
    assert.ok(beta.heartbeat_age_s < 2, `beta's heartbeat is ${beta.heartbeat_age_s} s old`);

    b.child.kill('SIGTERM');
    const end = await b.exited;
    assert.equal(end.code, 0, end.stderr);
    assert.match(end.stdout, /worker beta stopped \(SIGTERM\)\n$/);
    assert.equal((await byName('beta'))!.state, 'stopped');
  });

  test('a worker paused past its lease is fenced: it exits 1; started again, it registers under the next epoch', async () => {
    const w = startWorker(['--name', 'paused', '--capacity', '1', '--lease', '1']);
    await w.registered;
    w.child.kill('SIGSTOP');
    await eventually('the paused worker lost', async () => (await byName('paused'))?.state === 'lost', 15_000);
    w.child.kill('SIGCONT');
    const end = await w.exited;
    assert.equal(end.code, 1, 'fenced: it exits for its service manager to start it again');
    assert.match(end.stdout + end.stderr, /fenced|found dead/);
    assert.equal((await byName('paused'))!.state, 'lost', 'it records nothing after its lease');
    // Started again (a longer lease: a 1 s one can run out on a loaded machine and fence it again).
    const again = startWorker(['--name', 'paused', '--capacity', '1', '--lease', '6']);
    assert.match(await again.registered, /^worker paused registered: epoch 2,/);
    await eventually('the restarted worker live under epoch 2', async () => { const h = await byName('paused'); return h?.state === 'live' && h.epoch === 2; }, 15_000);
    again.child.kill('SIGTERM');
    const stopped = await again.exited;
    assert.deepEqual([stopped.code, stopped.signal], [0, null], stopped.stdout + stopped.stderr);
  });

  test('four workers started under one name at once: one registers, the others are refused naming it', async () => {
    const ws = [1, 2, 3, 4].map(() => startWorker(['--name', 'same', '--capacity', '1', '--lease', '5']));
    const outcomes = await Promise.all(ws.map((w) => w.registered.then(() => 'registered', () => 'refused')));
    assert.deepEqual(outcomes.filter((o) => o === 'registered').length, 1, outcomes.join(','));
    const winner = ws[outcomes.indexOf('registered')]!;
    for (const [i, w] of ws.entries()) {
      if (w === winner) continue;
      const e = await w.exited;
      assert.equal(e.code, 1, `loser ${i}: ${e.stderr}`);
      assert.match(e.stderr, new RegExp(`a worker named same is live on host .* \\(pid ${winner.pid}, .*give this one another --name`));
    }
    assert.deepEqual((await hosts()).filter((h) => h.name === 'same').map((h) => [h.pid, h.epoch, h.state]), [[winner.pid, 1, 'live']]);
    winner.child.kill('SIGTERM');
    assert.equal((await winner.exited).code, 0);
  });

  test('on SQLite, hosts lists none: every agent runs on its hub\'s machine', async () => {
    const lite = mkdtempSync(join(tmpdir(), 'overseer-workers-lite-'));
    try {
      const s = await openSql({ home: lite }); // a hub's start creates the state
      await s.close();
      const r = await overseer(lite, ['hosts'], { OVERSEER_HOME: lite, OVERSEER_LOG_LEVEL: 'warn' });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, 'No worker hosts: every agent runs on its hub\'s machine. Start one with `overseer worker` (it needs OVERSEER_DATABASE_URL).\n');
      const j = await overseer(lite, ['hosts', '--json'], { OVERSEER_HOME: lite, OVERSEER_LOG_LEVEL: 'warn' });
      assert.deepEqual(JSON.parse(j.stdout), []);
    } finally {
      rmSync(lite, { recursive: true, force: true });
    }
  });

  describe('bad input changes nothing', () => {
    const refused = async (r: CliRun | Promise<CliRun>, code: number, msg: RegExp): Promise<void> => {
      const run = await r;
      assert.equal(run.code, code, `${run.stdout}${run.stderr}`);
      assert.match(run.stderr, msg);
      assert.doesNotMatch(run.stdout, /registered/);
    };
    const workerNames = async (): Promise<string[]> => (await hosts()).map((h) => h.name);

    test('an unknown flag, capacity 0, a bad label, a bad lease', async () => {
      const before = await workerNames();
      await refused(overseer(home, ['worker', '--name', 'x1', '--cpus', '3'], env()), 2, /unknown option '--cpus'/);
      await refused(overseer(home, ['worker', '--name', 'x2', '--capacity', '0'], env()), 2, /--capacity "0" must be a whole number from 1 to 1024/);
      await refused(overseer(home, ['worker', '--name', 'x3', '--capacity', 'four'], env()), 2, /--capacity "four" must be a whole number/);
      await refused(overseer(home, ['worker', '--name', 'x4', '--labels', 'gpu,Big Disk'], env()), 2, /--labels: "Big Disk" is not a label/);
      await refused(overseer(home, ['worker', '--name', 'x5', '--lease', '0'], env()), 2, /--lease "0" must be a number of seconds from 1 to 3600/);
      await refused(overseer(home, ['worker', '--name', 'bad name'], env()), 2, /--name "bad name" is not a worker name/);
      assert.deepEqual(await workerNames(), before, 'no worker row was written');
    });

    test('a SQLite state: workers need OVERSEER_DATABASE_URL', async () => {
      const r = await overseer(home, ['worker', '--name', 'lite'], { OVERSEER_HOME: home, OVERSEER_LOG_LEVEL: 'warn' });
      await refused(r, 1, /a worker needs the crew's PostgreSQL database: set OVERSEER_DATABASE_URL/);
    });

    test('a database without Overseer\'s schema: says so, creates nothing', async () => {
      const empty = await freshDatabase();
      try {
        const r = await overseer(home, ['worker', '--name', 'nowhere'], { ...env(), OVERSEER_DATABASE_URL: empty.url });
        await refused(r, 1, /overseer worker does not create or upgrade the schema: the database .* has no Overseer schema yet.*start a hub/);
        assert.doesNotMatch(r.stderr, new RegExp(new URL(empty.url).password), 'the password is masked');
        const s = await openSql({ home, databaseUrl: empty.url }, { migrate: false }).catch((err: Error) => err);
        assert.ok(s instanceof Error, 'still no schema');
        const { default: pg } = await import('pg');
        const c = new pg.Client({ connectionString: empty.url });
        await c.connect();
        try {
          const t = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = current_schema()`);
          assert.equal(t.rows[0]!.n, 0, 'no table was created');
        } finally {
          await c.end();
        }
      } finally {
        await empty.drop();
      }
    });
  });
});
