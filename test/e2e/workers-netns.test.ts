// End-to-end, agents on worker hosts across a network (issue 30; docs/workers-plan.md §7): a lead's
// hub (`overseer serve`) on this machine and three `overseer worker` processes, each in a network
// namespace of its own whose only way out is a veth to relays for the crew's PostgreSQL and the
// fake model API (test/helpers/netns.ts). The repository's shared remote is a bare repository on
// disk. Real PostgreSQL, real `claude` children (confined as in CI), real git.
// 1. The lead fans out six worktree agents: they spread over the three workers (capacity 2 each;
//    each agent waits until all six are running, so all three must take two), succeed, and their
//    branches are on the remote with their files.
// 2. A job with a label only one worker has runs there.
// 3. kill -9 of a worker mid-job: its job finishes on another worker; one attempt succeeded, the
//    lost one interrupted (worker_lost); the killed worker is `lost` in `overseer hosts`.
// 4. A worker's link cut mid-job: its lease ends, the job moves to another worker and succeeds; the
//    link restored: the stale worker is fenced, its child is stopped, and nothing it did after the
//    cut is recorded (the job's attempts are as the mover left them). The child's agent token opens
//    nothing on the lead's hub (tokens are good on the worker that runs the agent only).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startFakeAnthropic, type FakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { MAIN, buildCli, cliEnv, overseer } from '../helpers/cli.js';
import { claudeBin, claudeEnv } from '../helpers/claude.js';
import { gitOut, initRepo, makeBareRemote } from '../helpers/git.js';
import { finishStep } from '../helpers/holder.js';
import { gate } from '../helpers/gate.js';
import { makeNetns, relay, throughRelay, type Netns } from '../helpers/netns.js';
import { watchProcess } from '../helpers/process.js';
import { crewGround, serveCrewHub } from '../helpers/serveHub.js';
import { alive, eventually } from '../helpers/wait.js';
import type { HostJson } from '../../src/cli/hosts.js';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c().catch(() => undefined); });

const LEASE_S = 3;

interface Worker { name: string; ns: Netns; proc: ChildProcess; out(): string; exited: Promise<number | string | null> }

test('three workers in network namespaces: six agents spread and push; a label places; kill -9 and a cut link move a job, once', { timeout: 900_000 }, async () => {
  buildCli();
  const { url, dir } = await crewGround('ovs-netns', cleanups);
  const origin = await makeBareRemote(join(dir, 'origin.git'));
  const project = await initRepo(join(dir, 'repo'), { 'README.md': '# crew\n' });
  await gitOut(project, ['remote', 'add', 'origin', origin]);
  await gitOut(project, ['push', '-q', 'origin', 'main']);

  const release = { kill: gate(), cut: gate() };
  let fake!: FakeAnthropic;
  const fanning = new Set<string>();
  const writeAndFinish = (file: string, text: string): Script => (ctx) => ctx.step === 0
    ? { tools: [{ name: 'Bash', input: { command: `echo '${text}' > ${file}` } }] }
    : ctx.step === 1 ? finishStep(`wrote ${file}`) : { text: 'done' };
  const scripts: Record<string, Script> = {
    // Six at once: each waits until all six are running, so three workers of capacity 2 all take two.
    fan: async (ctx) => {
      const file = /write (f\d)\.txt/.exec(ctx.prompt)?.[1] ?? 'fx';
      if (ctx.step === 0) {
        fanning.add(file);
        await eventually('six fan agents running', () => fanning.size >= 6, 300_000, 100);
        return { tools: [{ name: 'Bash', input: { command: `echo ${file} > ${file}.txt` } }] };
      }
      return ctx.step === 1 ? finishStep(`wrote ${file}.txt`) : { text: 'done' };
    },
    gpu: writeAndFinish('gpu.txt', 'on the gpu box'),
    // Held at its first step until the test has killed (or cut off) its worker; a later attempt goes straight through.
    killme: async (ctx) => {
      const again = /previous attempt|ran on worker/i.test(ctx.prompt);
      if (ctx.step === 0 && !again) { await release.kill.wait; return { text: 'the lost attempt went on' }; }
      return ctx.step === 0 ? { tools: [{ name: 'Bash', input: { command: 'echo moved > moved.txt' } }] } : ctx.step === 1 ? finishStep('moved and done') : { text: 'done' };
    },
    cutme: async (ctx) => {
      const again = /previous attempt|ran on worker/i.test(ctx.prompt);
      if (ctx.step === 0 && !again) { await release.cut.wait; return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'STALE RESULT' } }] }; }
      return ctx.step === 0 ? { tools: [{ name: 'Bash', input: { command: 'echo cut > cut.txt' } }] } : ctx.step === 1 ? finishStep('cut and done') : { text: 'done' };
    },
  };
  fake = await startFakeAnthropic({ scripts });
  cleanups.push(() => fake.close());
  const fakePort = Number(new URL(fake.url).port);
  const pgPort = Number(new URL(url).port);

  const hub = await serveCrewHub('hub', { dir, project, url, fake }, cleanups);
  const db: SqlDb = await openSql({ home: join(dir, 'reader'), databaseUrl: url });
  cleanups.push(() => db.close());

  const workers: Worker[] = [];
  for (const [i, labels] of [[0, 'linux'], [1, 'linux'], [2, 'linux,gpu']] as const) {
    const name = `w${i + 1}`;
    const ns = makeNetns(i);
    cleanups.push(async () => ns.remove());
    const pg = await relay(ns.hostAddr, pgPort);
    const api = await relay(ns.hostAddr, fakePort);
    cleanups.push(() => pg.close(), () => api.close());
    const home = join(dir, `${name}-home`);
    mkdirSync(home, { recursive: true });
    const env = claudeEnv({ home, baseUrl: `http://${ns.hostAddr}:${api.port}`, extra: { CLAUDE_BIN: claudeBin() } });
    const proc = spawn(ns.exec[0]!, [...ns.exec.slice(1), process.execPath, MAIN, 'worker', '--name', name, '--capacity', '2', '--labels', labels, '--lease', String(LEASE_S)], {
      cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
      env: cliEnv({ ...env, OVERSEER_HOME: join(dir, `${name}-state`), OVERSEER_DATABASE_URL: throughRelay(url, ns, pg), OVERSEER_LOG_LEVEL: 'info' }),
    });
    const w = watchProcess(proc);
    cleanups.push(async () => { try { process.kill(-proc.pid!, 'SIGKILL'); } catch { /* gone */ } });
    workers.push({ name, ns, proc, out: () => w.out() + w.err(), exited: w.exited });
  }
  for (const w of workers) await eventually(`${w.name} listening`, () => /listening on http:\/\/127\.0\.0\.1/.test(w.out()) || (w.proc.exitCode !== null && Promise.reject(new Error(`${w.name} exited: ${w.out()}`))), 90_000, 100);

  const hosts = async (): Promise<HostJson[]> => {
    const r = await overseer(dir, ['hosts', '--json'], { OVERSEER_DATABASE_URL: url, OVERSEER_HOME: join(dir, 'reader') });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as HostJson[];
  };
  assert.deepEqual((await hosts()).map((h) => [h.name, h.state]), [['w1', 'live'], ['w2', 'live'], ['w3', 'live']]);
  const job = (id: string) => db.db.selectFrom('jobs').select(['id', 'status', 'worker', 'branch', 'placement', 'error']).where('id', '=', id).executeTakeFirstOrThrow();
  const attemptsOf = (id: string) => db.db.selectFrom('attempts').select(['n', 'status', 'error']).where('job_id', '=', id).orderBy('n').execute();
  const waitAll = async (ids: string[], s = 300) => {
    const r = await hub.call('wait_for_agents', { job_ids: ids, timeout_s: s });
    assert.equal(r.timed_out, false, JSON.stringify(r));
    return r;
  };

  // 1. Six worktree agents spread over the three workers, succeed, and push their branches.
  const six: string[] = [];
  for (let i = 1; i <= 6; i++) six.push((await hub.call('spawn_agent', { prompt: `@script:fan write f${i}.txt`, title: `fan ${i}`, worktree: true })).job_id as string);
  const fanned = await waitAll(six);
  assert.deepEqual(fanned.done.map((d: { status: string }) => d.status), Array(6).fill('succeeded'), JSON.stringify(fanned));
  const rows = await Promise.all(six.map(job));
  const per = new Map<string, number>();
  for (const r of rows) per.set(r.worker ?? 'hub', (per.get(r.worker ?? 'hub') ?? 0) + 1);
  assert.deepEqual([...per.entries()].sort(), [['w1', 2], ['w2', 2], ['w3', 2]], 'two on each worker, none on the hub');
  const remoteBranches = await gitOut(origin, ['for-each-ref', '--format=%(refname:short)', 'refs/heads']);
  for (const [i, r] of rows.entries()) {
    assert.ok(remoteBranches.split('\n').includes(r.branch!), `${r.branch} pushed to the remote (${remoteBranches})`);
    const tree = await gitOut(origin, ['ls-tree', '-r', '--name-only', r.branch!]);
    assert.ok(tree.split('\n').includes(`f${i + 1}.txt`), `${r.branch} holds f${i + 1}.txt: ${tree}; ${await gitOut(origin, ['log', '--stat', '-3', r.branch!])}`);
    assert.equal(await gitOut(origin, ['show', `${r.branch}:f${i + 1}.txt`]), `f${i + 1}`);
  }
  const listed = await hub.call('list_agents', {});
  assert.ok(listed.agents.filter((a: { job_id: string; host: string }) => six.includes(a.job_id)).every((a: { host: string }) => /^w[123]$/.test(a.host)), 'list_agents names each agent\'s host');

  // 2. A label only w3 has.
  const g = await hub.call('spawn_agent', { prompt: '@script:gpu on the gpu', title: 'gpu', worktree: true, labels: ['gpu'] });
  await waitAll([g.job_id]);
  assert.equal((await job(g.job_id)).worker, 'w3');
  const refused = await hub.lead.callTool({ name: 'spawn_agent', arguments: { prompt: 'nowhere', worktree: true, labels: ['tpu'] } });
  assert.equal(refused.isError, true);
  assert.match(JSON.stringify(refused.content), /no registered worker has the label \\"tpu\\".*w1/);

  // 3. kill -9 of the worker running a job: it finishes on another, recorded once.
  const k = await hub.call('spawn_agent', { prompt: '@script:killme hold on', title: 'killme', worktree: true });
  const killed = await eventually('killme running on a worker', async () => { const r = await job(k.job_id); return r.status === 'running' && r.worker; }, 120_000, 100);
  await fake.waitForRequest((r) => r.script === 'killme' && r.step === 0, 120_000);
  const kw = workers.find((w) => w.name === killed)!;
  const orphan = Number((await db.db.selectFrom('jobs').select('pid').where('id', '=', k.job_id).executeTakeFirstOrThrow()).pid);
  cleanups.push(async () => { try { process.kill(-orphan, 'SIGKILL'); } catch { /* gone */ } });
  process.kill(-kw.proc.pid!, 'SIGKILL'); // the worker and (its children are in their own groups) not its child
  const moved = await waitAll([k.job_id]);
  assert.equal(moved.done[0].status, 'succeeded', JSON.stringify(moved));
  const kr = await job(k.job_id);
  assert.notEqual(kr.worker, killed, 'finished on another worker');
  const ka = await attemptsOf(k.job_id);
  assert.deepEqual(ka.map((a) => a.status), ['interrupted', 'succeeded'], JSON.stringify(ka));
  assert.match(ka[0]!.error ?? '', /^worker_lost: worker /);
  assert.equal((await hosts()).find((h) => h.name === killed)?.state, 'lost');
  release.kill.open(); // the orphaned child's model call returns; nothing it does is recorded

  // 4. A worker's link cut mid-job: the job moves; back on the network, the stale worker is fenced.
  const c = await hub.call('spawn_agent', { prompt: '@script:cutme hold on', title: 'cutme', worktree: true });
  const cutOn = await eventually('cutme running on a worker', async () => { const r = await job(c.job_id); return r.status === 'running' && r.worker; }, 120_000, 100);
  await fake.waitForRequest((r) => r.script === 'cutme' && r.step === 0, 120_000);
  const cw = workers.find((w) => w.name === cutOn)!;
  const stalePid = Number((await db.db.selectFrom('jobs').select('pid').where('id', '=', c.job_id).executeTakeFirstOrThrow()).pid);
  // Its agent token is good on its worker only: the lead's hub refuses it.
  const token = readFileSync(`/proc/${stalePid}/environ`, 'utf8').split('\0').find((e) => e.startsWith('OVERSEER_TOKEN='))?.slice('OVERSEER_TOKEN='.length);
  assert.ok(token, 'the child was given a token');
  const elsewhere = await fetch(hub.url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
  assert.equal(elsewhere.status, 401, 'a worker\'s agent token opens nothing on the hub');
  cw.ns.cut();
  const done = await waitAll([c.job_id]);
  assert.equal(done.done[0].status, 'succeeded', JSON.stringify(done));
  assert.notEqual((await job(c.job_id)).worker, cutOn, 'finished on another worker');
  const before = await attemptsOf(c.job_id);
  assert.deepEqual(before.map((a) => a.status), ['interrupted', 'succeeded']);
  cw.ns.restore();
  release.cut.open(); // the stale child now tries to finish with STALE RESULT
  await eventually('the stale worker fenced: it exits and its child is gone', async () => cw.proc.exitCode !== null && !alive(stalePid), 120_000, 200);
  assert.deepEqual(await attemptsOf(c.job_id), before, 'nothing the stale worker did after the cut is recorded');
  const after = await db.db.selectFrom('jobs').select(['status', 'result']).where('id', '=', c.job_id).executeTakeFirstOrThrow();
  assert.equal(after.status, 'succeeded');
  assert.doesNotMatch(after.result ?? '', /STALE RESULT/);
  const count = await sql<{ n: string }>`SELECT count(*) AS n FROM attempts WHERE job_id = ${c.job_id} AND status = 'succeeded'`.execute(db.db);
  assert.equal(Number(count.rows[0]!.n), 1, 'recorded once');
});
