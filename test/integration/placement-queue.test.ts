// Issue 30 step 2 (docs/workers-plan.md §2, §4): a real hub places jobs at spawn from the `workers`
// rows and sends a job placed in the worker queue into pg-boss in the transaction that makes it
// queued — spawn, a retry (the runner's requeue), a dependent whose dependency ended — and withdraws
// it on cancel; the hub never starts such a job itself. Refused placements (unknown label or host)
// name the workers and write nothing. With no worker registered everything runs on the hub as
// before; on SQLite a host is refused and nothing else changes. Real PostgreSQL, real git (a bare
// origin on disk), a registered worker row (no worker process: step 3 runs those), and a second
// pg-boss on the database fetching as a worker would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { freshDatabase } from '../helpers/postgres.js';
import { gitOut, initRepo, makeBareRemote } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';
import { waitForJob } from '../helpers/wait.js';
import { count, job } from '../helpers/state.js';
import { registerWorker } from '../../src/store/sql/workers.js';
import { claimAttempt } from '../../src/store/sql/jobs.js';
import { openAttemptQueue } from '../../src/store/sql/queue.js';
import { queueName } from '../../src/domain/placement.js';
import type { Runner } from '../../src/services/runner.js';

const log = pino({ level: 'silent' });

/** The hub's runner: it plays the worker's own runner here, ending an attempt a "worker" claimed (step 3 runs real workers). */
const runnerOf = (h: TestHub): Runner => (h.hub as unknown as { runner: Runner }).runner;

/** A repository with an `origin` remote (a bare repository on disk), main pushed. */
async function repoWithOrigin(dir: string): Promise<{ repo: string; origin: string }> {
  const origin = await makeBareRemote(join(dir, 'origin.git'));
  const repo = await initRepo(join(dir, 'repo'));
  await gitOut(repo, ['remote', 'add', 'origin', origin]);
  await gitOut(repo, ['push', '-q', 'origin', 'main']);
  return { repo, origin };
}

async function hubOn(databaseUrl: string | undefined, project: string, launcher: ScriptedLauncher): Promise<TestHub> {
  return startTestHub({ config: { databaseUrl }, processes: launcher, project });
}

/** pg-boss jobs of our job `jobId`, any state. */
const queueJobs = (h: TestHub, jobId: string) => count(h.hub, sql`SELECT count(*) AS n FROM pgboss.job WHERE data->>'jobId' = ${jobId}`);
const allQueueJobs = (h: TestHub) => count(h.hub, sql`SELECT count(*) AS n FROM pgboss.job`);
const jobCount = (h: TestHub) => count(h.hub, sql`SELECT count(*) AS n FROM jobs`);

test('PostgreSQL with a worker registered: labels place a job in the worker queue, one queue job per queuing, withdrawn on cancel; refusals write nothing', async (t) => {
  const dir = await makeTempDir('ovs-placement');
  const { repo, origin } = await repoWithOrigin(dir);
  const d = await freshDatabase();
  t.after(() => d.drop());
  const launcher = new ScriptedLauncher(() => ({ resultText: 'done' }));
  const h = await hubOn(d.url, repo, launcher);
  t.after(() => h.stop());
  const q = h.hub.ctx.sql.db;
  const reg = await registerWorker(q, 'postgres', { name: 'gpu-box', host: 'gpu-box', pid: 4242, capacity: 2, labels: ['gpu'], clis: { claude: '2.0.0' }, version: 'test', leaseMs: 60_000 });
  assert.equal(reg.ok, true);
  const worker = await openAttemptQueue({ url: d.url, log });
  t.after(() => worker.stop({ graceful: false, wait: true }));
  const gpuQueue = queueName('claude', null, ['gpu']);

  // A worktree job in a repository with an origin, labels ["gpu"]: the queue, exactly one queue job.
  const t0 = Date.now();
  const a = await h.call('spawn_agent', { prompt: 'on the gpu', worktree: true, labels: ['gpu', 'team:ml'] });
  t.diagnostic(`first spawn into the queue (opens the hub's pg-boss, creates its schema and the queue): ${Date.now() - t0} ms`);
  assert.equal(a.status, 'queued');
  const rowA = await job(h.hub, a.job_id);
  assert.equal(rowA.placement, 'queue');
  assert.equal(rowA.queue_name, gpuQueue);
  assert.equal(rowA.place_labels_json, '["gpu"]', 'the placement labels: those without ":"');
  assert.equal(rowA.repo_remote, origin, 'origin\'s URL recorded for the worker');
  assert.equal(rowA.hub_id, null, 'nobody owns it until a worker claims it');
  assert.ok(rowA.queue_id);
  const fetched = await worker.fetch(gpuQueue, { batchSize: 10 });
  assert.deepEqual(fetched.map((j) => [j.id, j.data]), [[rowA.queue_id, { jobId: a.job_id, attempt: 1 }]], 'exactly one queue job, after the commit');
  // The hub never starts it: spawn_agent returns after the dispatch round it ran, which left it queued and launched nothing.
  assert.equal((await job(h.hub, a.job_id)).status, 'queued');
  assert.equal(launcher.spawned.length, 0, 'the hub launched no child for a job of the queue');

  // Refused: a label no worker has, a host that is not registered. The error names the workers; nothing written.
  const jobsBefore = await jobCount(h);
  const queueBefore = await allQueueJobs(h);
  await assert.rejects(h.call('spawn_agent', { prompt: 'tpu please', worktree: true, labels: ['tpu'] }), (e: Error) => {
    assert.match(e.message, /no registered worker has the label "tpu"/);
    assert.match(e.message, /gpu-box \(live; labels gpu; CLIs claude\)/);
    return true;
  });
  await assert.rejects(h.call('spawn_agent', { prompt: 'there', worktree: true, host: 'nope' }), /host "nope" is not a registered worker; the workers are: gpu-box/);
  // A job that asks for a worker but cannot leave the hub's machine (no worktree) is refused too.
  await assert.rejects(h.call('spawn_agent', { prompt: 'in place', labels: ['gpu'] }), /worktree: true in a git repository whose origin remote/);
  assert.equal(await jobCount(h), jobsBefore, 'no job written');
  assert.equal(await allQueueJobs(h), queueBefore, 'no queue job sent');

  // Cancel of a queued job of the queue withdraws its queue job in the same transaction.
  const t1 = Date.now();
  const b = await h.call('spawn_agent', { prompt: 'to cancel', worktree: true, labels: ['gpu'] });
  t.diagnostic(`a later spawn into the same queue: ${Date.now() - t1} ms`);
  const rowB = await job(h.hub, b.job_id);
  await h.call('cancel_agent', { job_id: b.job_id });
  assert.equal((await job(h.hub, b.job_id)).status, 'cancelled');
  assert.equal(await count(h.hub, sql`SELECT count(*) AS n FROM pgboss.job WHERE id = ${rowB.queue_id} AND state = 'cancelled'`), 1, 'its queue job is cancelled');
  assert.deepEqual(await worker.fetch(gpuQueue, { batchSize: 10 }), [], 'a fetch gets nothing');

  // A retry: as a worker would, fetch, claim, and end the attempt with a retryable failure; the
  // runner's requeue sends attempt 2 in the transaction that queues the job again.
  const c = await h.call('spawn_agent', { prompt: 'flaky', worktree: true, labels: ['gpu'], retry: 'same' });
  const [qc] = await worker.fetch(gpuQueue);
  assert.deepEqual(qc?.data, { jobId: c.job_id, attempt: 1 });
  await worker.complete(gpuQueue, qc!.id);
  const claimed = await claimAttempt(q, { jobId: c.job_id, now: Date.now(), tokenHash: null, files: (n) => ({ transcript: join(dir, `c-${n}.jsonl`), stderr: join(dir, `c-${n}.stderr`) }) });
  assert.equal(claimed?.n, 1);
  await runnerOf(h).endAttempt(c.job_id, 1, { ok: false, failureClass: 'crashed', error: 'the child died' });
  const rowC = await job(h.hub, c.job_id);
  assert.equal(rowC.status, 'queued', 'retried');
  const again = await worker.fetch(gpuQueue, { batchSize: 10 });
  assert.deepEqual(again.map((j) => [j.id, j.data]), [[rowC.queue_id, { jobId: c.job_id, attempt: 2 }]], 'one queue job for the retry');
  assert.equal(await queueJobs(h, c.job_id), 2, 'attempt 1\'s and attempt 2\'s');

  // A dependent: waiting sends nothing; when its dependency ends it becomes queued with one queue job.
  const e = await h.call('spawn_agent', { prompt: 'first', worktree: true, labels: ['gpu'] });
  const dep = await h.call('spawn_agent', { prompt: 'after first', worktree: true, labels: ['gpu'], depends_on: [e.job_id] });
  assert.equal(dep.status, 'waiting');
  assert.equal(await queueJobs(h, dep.job_id), 0, 'a waiting job has no queue job');
  const [qe] = await worker.fetch(gpuQueue);
  assert.equal((qe?.data as { jobId: string }).jobId, e.job_id);
  await claimAttempt(q, { jobId: e.job_id, now: Date.now(), tokenHash: null, files: (n) => ({ transcript: join(dir, `e-${n}.jsonl`), stderr: join(dir, `e-${n}.stderr`) }) });
  await runnerOf(h).endAttempt(e.job_id, 1, { ok: true, resultText: 'done' });
  await waitForJob(h.hub, dep.job_id, (j) => j.status === 'queued');
  const depQueued = await worker.fetch(gpuQueue, { batchSize: 10 });
  assert.deepEqual(depQueued.map((j) => j.data), [{ jobId: dep.job_id, attempt: 1 }], 'one queue job for the dependent');
  // A resume of the ended job queues it again: one queue job for its next attempt.
  await h.call('resume_agent', { job_id: e.job_id, message: 'one more thing' });
  const resumed = await job(h.hub, e.job_id);
  assert.equal(resumed.status, 'queued');
  const qr = await worker.fetch(gpuQueue, { batchSize: 10 });
  assert.deepEqual(qr.map((j) => [j.id, j.data]), [[resumed.queue_id, { jobId: e.job_id, attempt: 2 }]], 'one queue job for the resume');
  assert.equal(launcher.spawned.length, 0, 'still nothing launched on the hub');

  // A schedule's occurrence: waiting until its time, then queued by the schedules' tick with one queue job.
  const at = new Date(Date.now() + 1500).toISOString();
  const later = await h.call('spawn_agent', { prompt: 'at its time', worktree: true, labels: ['gpu'], at });
  assert.equal(later.status, 'waiting');
  assert.equal(await queueJobs(h, later.job_id), 0, 'nothing sent before its time');
  await waitForJob(h.hub, later.job_id, (j) => j.status === 'queued', 15_000);
  const due = await worker.fetch(gpuQueue, { batchSize: 10 });
  assert.deepEqual(due.map((j) => j.data), [{ jobId: later.job_id, attempt: 1 }], 'one queue job for the due occurrence');

  // A job that asks nothing and cannot leave (no worktree) runs on the hub even with workers registered.
  const plain = await h.call('spawn_agent', { prompt: 'here' });
  await waitForJob(h.hub, plain.job_id, (j) => j.status === 'succeeded');
  assert.equal((await job(h.hub, plain.job_id)).placement, 'hub');
});

test('PostgreSQL with no worker registered: labels are tags and the job runs on the hub as before; a host is refused', async (t) => {
  const dir = await makeTempDir('ovs-placement');
  const { repo } = await repoWithOrigin(dir);
  const d = await freshDatabase();
  t.after(() => d.drop());
  const launcher = new ScriptedLauncher(() => ({ resultText: 'done' }));
  const h = await hubOn(d.url, repo, launcher);
  t.after(() => h.stop());
  const a = await h.call('spawn_agent', { prompt: 'tagged', worktree: true, labels: ['gpu'] });
  const done = await waitForJob(h.hub, a.job_id, (j) => j.status === 'succeeded');
  assert.equal(done.placement, 'hub');
  assert.equal(done.queue_id, null);
  assert.equal(launcher.spawned.length, 1, 'run on the hub');
  const before = await jobCount(h);
  await assert.rejects(h.call('spawn_agent', { prompt: 'there', worktree: true, host: 'gpu-box' }), /no worker host is registered/);
  assert.equal(await jobCount(h), before, 'nothing written');
  const boss = await count(h.hub, sql`SELECT count(*) AS n FROM information_schema.schemata WHERE schema_name = 'pgboss'`);
  assert.equal(boss, 0, 'a crew without workers never opened pg-boss');
});

test('SQLite: a host is refused, labels are tags, everything else unchanged', async (t) => {
  const dir = await makeTempDir('ovs-placement');
  const { repo } = await repoWithOrigin(dir);
  const launcher = new ScriptedLauncher(() => ({ resultText: 'done' }));
  const h = await hubOn(undefined, repo, launcher);
  t.after(() => h.stop());
  assert.equal(h.hub.ctx.sql.dialect, 'sqlite');
  await assert.rejects(h.call('spawn_agent', { prompt: 'there', worktree: true, host: 'gpu-box' }), /no worker host is registered.*SQLite/s);
  assert.equal(await jobCount(h), 0, 'nothing written');
  const a = await h.call('spawn_agent', { prompt: 'tagged', worktree: true, labels: ['gpu'] });
  const done = await waitForJob(h.hub, a.job_id, (j) => j.status === 'succeeded');
  assert.equal(done.placement, null, 'no placement written on SQLite');
  assert.equal(launcher.spawned.length, 1);
  // A script's agent() takes labels and host too: the host refused the same way, the labels kept as tags beside run:<id>.
  const r = await h.call('run_script', { script: `let refused = ''
try { await agent('x', { host: 'gpu-box' }) } catch (e) { refused = String(e.message) }
const ok = await agent('tagged by a script', { labels: ['gpu'] })
return { refused, ok }` });
  const v = await h.call('get_run', { run_id: r.run_id, wait_s: 60 });
  assert.equal(v.status, 'succeeded', JSON.stringify(v));
  assert.match(v.result.refused, /no worker host is registered/);
  const tagged = (await h.call('list_agents', { label: 'gpu' })).agents.map((x: { title: string; labels: string[] }) => [x.title, [...x.labels].sort()]);
  assert.deepEqual(tagged.find((x: [string, string[]]) => x[0] === 'tagged by a script')?.[1], ['gpu', `run:${r.run_id}`]);
});
