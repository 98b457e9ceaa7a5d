// Worker hosts (issue 30, docs/workers-plan.md §8), on a fresh PostgreSQL database each part:
// (a) spawn_agent → the child's exec on a remote worker, against the same on the hub's machine.
//     A hub in this process (the build, as every hub bench) with a worktree repository whose origin
//     is a bare remote; the child is bench/fixtures/fake-agent.sh (the spawn benches' child), which
//     stamps $EPOCHREALTIME first thing: that stamp is "child start". First 20 spawns with no worker
//     registered (the hub's machine: its own worktree), then a real `overseer worker` process
//     (dist/, capacity 4, its poll at 10 min: woken by the hub's NOTIFY) and 20 more, which the hub
//     now places in the queue (a worktree job with a shared remote): send in the spawn's
//     transaction, NOTIFY, the worker's fetch and claim, its clone's worktree, the launch.
//     One spawn at a time, each waited to its end (wait_for_agents on the hub) before the next.
// (b) 200 queued jobs, a child that exits at once (test/helpers/fakeLauncher.ts ScriptedLauncher:
//     no process) through three in-process worker-mode hubs of capacity 4 (as src/worker/run.ts
//     builds one: drives: false, QueueWork, WorkerHost rows) against one hub of capacity 12 (no
//     worker: its own dispatch). Jobs are not worktree jobs on either side (the git work of a
//     worktree is bench/worktree.ts's figure): the workers' repo port does nothing. Wall time from
//     the 200 waiting (workers: the commit of the one transaction that inserts the rows and sends
//     the 200 queue jobs, with the NOTIFY; hub: hub.start() with the 200 rows already there) to the
//     last one succeeded; the median of 3 alternating rounds (workers, hub, workers, …), each on
//     fresh databases.
//     And pg-boss's own overhead per job on an idle queue, measured alone: send (in a transaction,
//     as a spawn sends), fetch of one, complete.
// Run alone: node --import tsx bench/workers.ts (after npm run build)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { sql } from 'kysely';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type PgBoss from 'pg-boss';
import { loadConfigFrom } from '../src/config.js';
import type { Hub } from '../src/hub.js';
import type { SqlDb } from '../src/store/sql/open.js';
import { freshDatabase } from '../test/helpers/postgres.js';
import { gitOut, initRepo, makeBareRemote } from '../test/helpers/git.js';
import { newJob } from '../test/helpers/budgetDb.js';
import { ScriptedLauncher } from '../test/helpers/fakeLauncher.js';
import { MAIN, cliEnv } from '../test/helpers/cli.js';
import { REPO_ROOT, builtHub, cleanEnv, f1, fixture, out, readStamps, removeDir, runAlone, stampOf, stats, tempDir, until, wallMs, type Stats } from './common.js';

const RUNS = Number(process.env.WORKERS_RUNS ?? 20);
const WARMUP = 2;
const JOBS = Number(process.env.WORKERS_JOBS ?? 200);
const OVERHEAD_N = 100;
const ROUNDS = Number(process.env.WORKERS_ROUNDS ?? 3);
const log = pino({ level: 'silent' });
/** Guard (not a goal): pg-boss's send + fetch + complete per job, median on an idle queue. Measured
 * 1.9 ms on the 2-core dev box (docs/performance.md "Worker hosts"); 10 ms is five times that: a
 * regression of that size (an index lost, a statement per job more) would be a tenth of a child's
 * start on the hub's machine, and it fails the run. */
export const QUEUE_GUARD_MS = 10;

/** The build's modules (the hub bench's rule: dist/, not the sources through tsx), typed as the sources. */
const dist = async <T>(rel: string): Promise<T> => (await import(pathToFileURL(path.join(REPO_ROOT, 'dist', rel)).href)) as T;
type Sql = typeof import('../src/store/sql/open.js');
type Queue = typeof import('../src/store/sql/queue.js');
type Jobs = typeof import('../src/store/sql/jobs.js');
type Placement = typeof import('../src/domain/placement.js');
type Work = typeof import('../src/worker/queueWork.js');
type Host = typeof import('../src/worker/host.js');

export interface WorkersResult {
  spawn: { runs: number; hub: Stats; worker: Stats; workerCallReturn: Stats };
  throughput: { jobs: number; rounds: number; workers: { wallMs: number; perS: number; perWorker: Record<string, number> }; hub: { wallMs: number; perS: number }; workersWallMs: number[]; hubWallMs: number[] };
  overhead: { n: number; send: Stats; fetch: Stats; complete: Stats; total: Stats };
}

const ms = (t0: number): number => performance.now() - t0;

interface LeadHub { hub: Hub; call<T = any>(tool: string, args: Record<string, unknown>): Promise<T>; stop(): Promise<void> }

async function leadHub(o: { home: string; project: string; url: string; dir: string; stampFile: string }): Promise<LeadHub> {
  const config = loadConfigFrom({ home: o.home, claudeBin: fixture('fake-agent.sh'), killGraceMs: 2000, worktreesDir: path.join(o.dir, 'worktrees'), databaseUrl: o.url });
  const hub = await (await builtHub()).open({ config, projectDir: o.project, log, childEnv: cleanEnv({ HOME: path.join(o.dir, 'home'), BENCH_STAMP_FILE: o.stampFile }) });
  await hub.start();
  const [a, b] = InMemoryTransport.createLinkedPair();
  await hub.server({ role: 'lead' }).connect(a);
  const c = new Client({ name: 'bench-lead', version: '1.0.0' });
  await c.connect(b);
  return {
    hub,
    async call(tool, args) {
      const r = await c.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 });
      const text = (r.content as { type: string; text: string }[]).map((x) => x.text).join('\n');
      if (r.isError) throw new Error(`${tool} failed: ${text}`);
      return JSON.parse(text);
    },
    async stop() {
      await c.close().catch(() => undefined);
      await hub.stop().catch(() => undefined);
    },
  };
}

/** A real `overseer worker` (dist/cli/main.js) on the database; resolves once it listens. */
async function startWorkerProcess(o: { dir: string; url: string; name: string; stampFile: string }): Promise<{ proc: ChildProcess; stop(): Promise<void> }> {
  const home = path.join(o.dir, `${o.name}-home`);
  mkdirSync(home, { recursive: true });
  const env = cliEnv({
    ...cleanEnv({ HOME: home, BENCH_STAMP_FILE: o.stampFile }),
    OVERSEER_HOME: path.join(o.dir, `${o.name}-state`), OVERSEER_DATABASE_URL: o.url, OVERSEER_WORKER_POLL_MS: '600000',
    OVERSEER_LOG_LEVEL: 'warn', CLAUDE_BIN: fixture('fake-agent.sh'),
  });
  const proc = spawn(process.execPath, [MAIN, 'worker', '--name', o.name, '--capacity', '4'], { cwd: o.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => { text += d; });
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => { text += d; });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let gone = false;
  void exited.then(() => { gone = true; });
  await until(`worker ${o.name} listening`, 60_000, () => {
    if (gone) throw new Error(`worker ${o.name} exited before it listened:\n${text}`);
    return /listening on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(text) ? true : undefined;
  }, 20);
  return {
    proc,
    async stop() {
      if (gone) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** (a) spawn → child exec: on the hub's machine, then on a remote worker. */
async function spawnToStart(): Promise<WorkersResult['spawn']> {
  const dir = await tempDir('workers-a');
  const d = await freshDatabase();
  let lead: LeadHub | undefined;
  let worker: { stop(): Promise<void> } | undefined;
  try {
    const origin = await makeBareRemote(path.join(dir, 'origin.git'));
    const project = await initRepo(path.join(dir, 'project'));
    await gitOut(project, ['remote', 'add', 'origin', origin]);
    await gitOut(project, ['push', '-q', 'origin', 'main']);
    const stampFile = path.join(dir, 'stamps.txt');
    lead = await leadHub({ home: path.join(dir, 'hub-state'), project, url: d.url, dir, stampFile });
    const l = lead;
    const one = async (i: number, where: string): Promise<{ start: number; ret: number; placement: string }> => {
      const t0 = wallMs();
      const r = await l.call<{ job_id: string }>('spawn_agent', { prompt: `bench ${where} ${i}`, title: `${where} ${i}`, worktree: true });
      const ret = wallMs() - t0;
      const w = await l.call('wait_for_agents', { job_ids: [r.job_id], timeout_s: 60 });
      const done = w.done?.[0];
      if (done?.status !== 'succeeded') throw new Error(`job ${r.job_id} (${where}) did not succeed: ${JSON.stringify(w).slice(0, 400)}`);
      const stamp = stampOf(readStamps(stampFile), r.job_id, 'start');
      if (stamp === undefined) throw new Error(`no exec stamp from job ${r.job_id} (${where})`);
      const row = await l.hub.ctx.sql.db.selectFrom('jobs').select(['placement', 'worker']).where('id', '=', r.job_id).executeTakeFirstOrThrow();
      return { start: stamp - t0, ret, placement: row.worker ? `worker ${row.worker}` : (row.placement ?? 'hub') };
    };
    const hubLat: number[] = [];
    for (let i = -WARMUP; i < RUNS; i++) {
      const r = await one(i, 'hub');
      if (r.placement.startsWith('worker')) throw new Error('a job ran on a worker before any was started');
      if (i >= 0) hubLat.push(r.start);
    }
    worker = await startWorkerProcess({ dir, url: d.url, name: 'bench-w1', stampFile });
    const wLat: number[] = [];
    const wRet: number[] = [];
    for (let i = -WARMUP; i < RUNS; i++) {
      const r = await one(i, 'worker');
      if (r.placement !== 'worker bench-w1') throw new Error(`spawn ${i} ran on ${r.placement}, not on the worker`);
      if (i >= 0) { wLat.push(r.start); wRet.push(r.ret); }
    }
    return { runs: RUNS, hub: stats(hubLat), worker: stats(wLat), workerCallReturn: stats(wRet) };
  } finally {
    await worker?.stop();
    await lead?.stop();
    await d.drop().catch(() => undefined);
    await removeDir(dir);
  }
}

/** Wait until `n` jobs succeeded on `db` (any failed: an error); the wall time since t0. */
async function allDone(db: SqlDb, n: number, t0: number): Promise<number> {
  for (;;) {
    const rows = await db.db.selectFrom('jobs').select(['status', sql<number>`count(*)::int`.as('n')]).groupBy('status').execute();
    const by = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
    const bad = Object.entries(by).filter(([s]) => ['failed', 'cancelled', 'interrupted', 'timed_out'].includes(s));
    if (bad.length) throw new Error(`jobs ended badly: ${JSON.stringify(by)}`);
    if ((by.succeeded ?? 0) >= n) return ms(t0);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const repoPort = { prepare: async (): Promise<void> => undefined, publish: async (): Promise<void> => undefined };

/** (b) 200 queued jobs through three workers of capacity 4, and the queue's overhead per job. */
async function throughputWorkers(dir: string, project: string, measureOverhead: boolean): Promise<{ throughput: WorkersResult['throughput']['workers']; overhead: WorkersResult['overhead'] | undefined }> {
  mkdirSync(dir, { recursive: true });
  const [{ openSql }, { ensureQueue, openAttemptQueue, sendAttempt }, { insertJob }, { queueName }, { QueueWork }, { WorkerHost }] = await Promise.all([
    dist<Sql>('store/sql/open.js'), dist<Queue>('store/sql/queue.js'), dist<Jobs>('store/sql/jobs.js'), dist<Placement>('domain/placement.js'), dist<Work>('worker/queueWork.js'), dist<Host>('worker/host.js'),
  ]);
  const Hub = await builtHub();
  const d = await freshDatabase();
  const reader = await openSql({ home: path.join(dir, 'b-reader'), databaseUrl: d.url }); // migrates, as a hub's start does
  const boss = await openAttemptQueue({ url: d.url, log });
  const started: { hub: Hub; host: { stop(): Promise<boolean> }; boss: PgBoss }[] = [];
  try {
    // The queue's own overhead, alone, on an idle queue of its own.
    const idle = queueName('claude', null, ['idle']);
    await ensureQueue(boss, idle);
    const send: number[] = [];
    const fetch: number[] = [];
    const complete: number[] = [];
    const total: number[] = [];
    for (let i = -10; measureOverhead && i < OVERHEAD_N; i++) {
      const t0 = performance.now();
      await reader.db.transaction().execute((trx) => sendAttempt(trx, boss, idle, { jobId: `o-${i}`, attempt: 1 }, 600));
      const t1 = performance.now();
      const [m] = await boss.fetch(idle, { batchSize: 1 });
      if (!m) throw new Error('the queue job just sent was not fetched');
      const t2 = performance.now();
      await boss.complete(idle, m.id);
      const t3 = performance.now();
      if (i >= 0) { send.push(t1 - t0); fetch.push(t2 - t1); complete.push(t3 - t2); total.push(t3 - t0); }
    }
    const overhead = !measureOverhead ? undefined : { n: OVERHEAD_N, send: stats(send), fetch: stats(fetch), complete: stats(complete), total: stats(total) };

    // Three worker-mode hubs, idle, their wake-ups armed.
    for (const name of ['bench-b1', 'bench-b2', 'bench-b3']) {
      const config = loadConfigFrom({ home: path.join(dir, `${name}-state`), claudeBin: fixture('fake-agent.sh'), killGraceMs: 2000, databaseUrl: d.url });
      const wboss = await openAttemptQueue({ url: d.url, log });
      let host: import('../src/worker/host.js').WorkerHost | undefined;
      const hub = await Hub.open({
        config, projectDir: project, log, migrate: false, drives: false, processes: new ScriptedLauncher(() => ({})),
        work: ({ ctx }) => new QueueWork({ ctx, boss: wboss, seat: { name, labels: [], clis: { claude: 'bench' } }, capacity: 4, epoch: () => host?.epoch ?? 0, repos: repoPort, pollMs: 600_000 }),
      });
      host = await WorkerHost.start({
        sql: reader, log, hubId: hub.hubId, onLostName: () => undefined, onFenced: () => undefined,
        identity: { name, host: hostname(), pid: process.pid, capacity: 4, labels: [], clis: { claude: 'bench' }, version: 'bench', leaseMs: 30_000 },
      });
      await hub.start();
      started.push({ hub, host, boss: wboss });
    }
    const queue = queueName('claude', null, []);
    await ensureQueue(boss, queue);
    await reader.db.transaction().execute(async (trx) => {
      const now = Date.now();
      for (let i = 0; i < JOBS; i++) {
        const id = `jw-${i}`;
        await insertJob(trx, newJob(id, { prompt: `bench ${i}`, cwd: project, placement: 'queue', queue_name: queue } as never), now);
        const qid = await sendAttempt(trx, boss, queue, { jobId: id, attempt: 1 }, 600);
        await trx.updateTable('jobs').set({ queue_id: qid }).where('id', '=', id).execute();
      }
      await sql`SELECT pg_notify('overseer', ${JSON.stringify({ h: 'h-bench', e: 'job', d: { jobId: 'jw-0', status: 'queued' } })})`.execute(trx);
    });
    const t0 = performance.now();
    const wall = await allDone(reader, JOBS, t0);
    const per = await reader.db.selectFrom('jobs').select(['worker', sql<number>`count(*)::int`.as('n')]).groupBy('worker').execute();
    return { throughput: { wallMs: wall, perS: JOBS / (wall / 1000), perWorker: Object.fromEntries(per.map((r) => [r.worker ?? '-', Number(r.n)])) }, overhead };
  } finally {
    for (const s of started) {
      await s.hub.stop().catch(() => undefined);
      await s.host.stop().catch(() => undefined);
      await s.boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    }
    await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
    await reader.close();
    await d.drop().catch(() => undefined);
  }
}

/** (b) the same 200 jobs on one hub of capacity 12, no worker registered. */
async function throughputHub(dir: string, project: string): Promise<WorkersResult['throughput']['hub']> {
  const [{ openSql }, { insertJob }] = await Promise.all([dist<Sql>('store/sql/open.js'), dist<Jobs>('store/sql/jobs.js')]);
  const d = await freshDatabase();
  const reader = await openSql({ home: path.join(dir, 'c-reader'), databaseUrl: d.url });
  let hub: Hub | undefined;
  try {
    const config = loadConfigFrom({ home: path.join(dir, 'one-state'), claudeBin: fixture('fake-agent.sh'), killGraceMs: 2000, databaseUrl: d.url, maxAgents: 12 });
    hub = await (await builtHub()).open({ config, projectDir: project, log, processes: new ScriptedLauncher(() => ({})) });
    await reader.db.transaction().execute(async (trx) => {
      const now = Date.now();
      for (let i = 0; i < JOBS; i++) await insertJob(trx, newJob(`jh-${i}`, { prompt: `bench ${i}`, cwd: project } as never), now);
    });
    const t0 = performance.now();
    await hub.start();
    const wall = await allDone(reader, JOBS, t0);
    return { wallMs: wall, perS: JOBS / (wall / 1000) };
  } finally {
    await hub?.stop().catch(() => undefined);
    await reader.close();
    await d.drop().catch(() => undefined);
  }
}

export async function benchWorkers(): Promise<WorkersResult> {
  const spawnR = await spawnToStart();
  out(`spawn_agent → child exec (fake-agent.sh's first stamp), ${spawnR.runs} spawns each, one at a time, worktree: true, PostgreSQL\n`);
  out(`  on the hub's machine (no worker):   median ${f1(spawnR.hub.p50)} ms, p90 ${f1(spawnR.hub.p90)} ms\n`);
  out(`  on a worker (overseer worker):      median ${f1(spawnR.worker.p50)} ms, p90 ${f1(spawnR.worker.p90)} ms (spawn_agent's reply: median ${f1(spawnR.workerCallReturn.p50)} ms)\n`);
  const dir = await tempDir('workers-b');
  try {
    const project = await initRepo(path.join(dir, 'project'));
    // Alternating rounds, each on fresh databases (the machine is shared: one round alone swings by ×3).
    const ws: Awaited<ReturnType<typeof throughputWorkers>>[] = [];
    const hs: WorkersResult['throughput']['hub'][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      ws.push(await throughputWorkers(path.join(dir, `r${round}`), project, round === 0));
      hs.push(await throughputHub(path.join(dir, `r${round}`), project));
    }
    const mid = <T extends { wallMs: number }>(xs: T[]): T => [...xs].sort((a, b) => a.wallMs - b.wallMs)[Math.floor(xs.length / 2)]!;
    const w = mid(ws.map((x) => x.throughput));
    const h = mid(hs);
    const o = ws[0]!.overhead!;
    const r: WorkersResult = { spawn: spawnR, throughput: { jobs: JOBS, rounds: ROUNDS, workers: w, hub: h, workersWallMs: ws.map((x) => x.throughput.wallMs), hubWallMs: hs.map((x) => x.wallMs) }, overhead: o };
    const secs = (xs: number[]): string => xs.map((x) => (x / 1000).toFixed(2)).join(', ');
    out(`${JOBS} queued jobs, a child that exits at once (scripted launcher), PostgreSQL; median of ${ROUNDS} alternating rounds\n`);
    out(`  three workers of capacity 4: ${(w.wallMs / 1000).toFixed(2)} s, ${w.perS.toFixed(1)} jobs/s (per worker ${JSON.stringify(w.perWorker)}; rounds ${secs(r.throughput.workersWallMs)} s)\n`);
    out(`  one hub of capacity 12:      ${(h.wallMs / 1000).toFixed(2)} s, ${h.perS.toFixed(1)} jobs/s (rounds ${secs(r.throughput.hubWallMs)} s)\n`);
    out(`pg-boss per job on an idle queue (${o.n}): send (in a transaction) ${f1(o.send.p50)} ms, fetch ${f1(o.fetch.p50)} ms, complete ${f1(o.complete.p50)} ms; total median ${f1(o.total.p50)} ms, p90 ${f1(o.total.p90)} ms\n`);
    return r;
  } finally {
    await removeDir(dir);
  }
}

runAlone(import.meta.url, benchWorkers);
