// A lost worker's attempts go back to the queue, once (issue 30 point 3; docs/workers-plan.md §5;
// src/services/workerLost.ts). Two real hubs (startTestHub) on one PostgreSQL database; the worker is
// simulated without its process, as the rows a worker in worker mode leaves: its `workers` row
// (registerWorker), its `hubs` row (a hub in worker mode: no liveness lock held, as after kill -9),
// and two jobs it runs from the queue (placement 'queue', worker, epoch, hub_id = its hub) with their
// attempts, the queue job it fetched and the transcript rows the search index holds. Its heartbeat
// ages past the timeout: exactly one hub reconciles it. The job with attempts left goes back to
// `queued` with exactly one queue job waiting for attempt 2 (its `retry: none` notwithstanding), the
// other (at maxAttempts) ends interrupted with none; the worker row is `lost`. Then a runner takes
// the queued job and its first prompt carries the seed: what the lost attempt said and did.
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdirSync, rmSync } from 'node:fs';
import PgBoss from 'pg-boss';
import { sql, type Kysely } from 'kysely';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { freshDatabase } from '../helpers/postgres.js';
import { makeTempDir } from '../helpers/claude.js';
import { eventually } from '../helpers/wait.js';
import { newJob } from '../helpers/budgetDb.js';
import { silentLogger } from '../../src/log.js';
import { registerWorker } from '../../src/store/sql/workers.js';
import { dbNow, type HubRegistry } from '../../src/store/sql/hubs.js';
import { insertAttempt, insertJob } from '../../src/store/sql/jobs.js';
import { ensureQueue, openAttemptQueue, sendAttempt } from '../../src/store/sql/queue.js';
import { transcriptIndex } from '../../src/search/sqlIndex.js';
import type { AttemptRow } from '../../src/store/jobs.js';
import type { Runner } from '../../src/services/runner.js';
import type { Schema } from '../../src/store/sql/schema.js';

const QUEUE = 'att_claude';
const WORKER_HUB = 'h-worker-box-w1';

const attempt = (jobId: string, n: number, o: Partial<AttemptRow> = {}): AttemptRow => ({
  job_id: jobId, n, kind: n === 1 ? 'initial' : 'retry', status: 'running', started_at: 1, ended_at: null, session_id: `sess-${jobId}-${n}`, pid: 999_999,
  exit_code: null, signal: null, turns: 3, cost_usd: 0, failure_class: null, error: null, diagnosis: null, transcript: `/lost/machine/attempt-${n}.jsonl`, ...o,
});

interface Ground { one: TestHub; two: TestHub; db: Kysely<Schema>; boss: PgBoss; prompts: string[]; dir: string; oldOfAgain: string; oldIds: Set<string> }

/** Two hubs on a fresh database and a worker's rows as it leaves them when lost mid-job (the hubs row last: `heartbeatAgoMs` old). */
async function ground(t: TestContext, config: { hubBeatMs: number; hubTimeoutMs: number }, heartbeatAgoMs: number, leaseMs = config.hubTimeoutMs): Promise<Ground> {
  const pg = await freshDatabase();
  t.after(() => pg.drop());
  const dir = await makeTempDir('ovs-worker-lost');
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const prompts: string[] = [];
  const launcher = new ScriptedLauncher((prompt) => { prompts.push(prompt); return { resultText: 'redone' }; });
  const hubs: TestHub[] = [];
  t.after(async () => { for (const h of hubs.reverse()) await h.stop({ keep: true }).catch(() => undefined); });
  for (const name of ['one', 'two']) {
    hubs.push(await startTestHub({ dir: join(dir, name), project: dir, processes: launcher, config: { databaseUrl: pg.url, maxAttempts: 2, ...config } }));
  }
  const [one, two] = hubs as [TestHub, TestHub];
  const db = one.hub.ctx.sql.db;

  // The test's own pg-boss: the worker's fetch before it was lost, and the look at the queue after.
  const boss: PgBoss = await openAttemptQueue({ url: pg.url, log: silentLogger });
  t.after(() => boss.stop({ graceful: false, wait: true }));
  await ensureQueue(boss, QUEUE);

  // The worker's rows. Its jobs' directories were on its machine (not here): no hub here may start them.
  assert.equal((await registerWorker(db, 'postgres', { name: 'box-w1', host: 'box-w1.example', pid: 4242, capacity: 2, labels: [], clis: { claude: '2.0.0' }, version: 'test', leaseMs })).ok, true);
  const elsewhere = '/lost/machine/work';
  const onWorker = { placement: 'queue' as const, queue_name: QUEUE, worker: 'box-w1', worker_epoch: 1, hub_id: WORKER_HUB, status: 'running' as const, cwd: elsewhere, retry: 'none' as const };
  await insertJob(db, newJob('j-again', { ...onWorker, prompt: 'Fix the parser so that the last token is kept.' }), 1);
  await insertJob(db, newJob('j-spent', onWorker), 2);
  await insertAttempt(db, attempt('j-again', 1));
  await insertAttempt(db, attempt('j-spent', 1, { status: 'failed', ended_at: 2, failure_class: 'crashed', error: 'crashed' }));
  await insertAttempt(db, attempt('j-spent', 2, { kind: 'retry' }));
  for (const id of ['j-again', 'j-spent']) {
    const sent = await sendAttempt(db, boss, QUEUE, { jobId: id, attempt: 1 }, 600);
    await db.updateTable('jobs').set({ queue_id: sent }).where('id', '=', id).execute();
  }
  const fetched = await boss.fetch(QUEUE, { batchSize: 10 });
  assert.equal(fetched.length, 2, 'the worker fetched both queue jobs (active now)');
  await transcriptIndex('postgres').insert(db, [
    { jobId: 'j-again', attempt: 1, line: 1, at: 1_000, kind: 'text', text: 'Reading the parser first.' },
    { jobId: 'j-again', attempt: 1, line: 2, at: 1_001, kind: 'tool_call', tool: 'Read', text: '{"file_path":"src/parser.ts"}' },
    { jobId: 'j-again', attempt: 1, line: 3, at: 1_002, kind: 'tool_result', tool: 'Read', text: 'RESULT-NOT-IN-SEED' },
    { jobId: 'j-again', attempt: 1, line: 4, at: 1_003, kind: 'text', text: 'Found it: tokenize() stops one token early (i < n - 1).' },
  ]);
  // Last: the worker's hub row (as HubRegistry inserts it) and the link to it. From now on its heartbeat ages.
  const beat = sql<number>`${dbNow('postgres')} - ${heartbeatAgoMs}`;
  await db.insertInto('hubs').values({ id: WORKER_HUB, host: 'box-w1.example', pid: 4242, url: null, state_dir: '/lost/machine/state', version: 'test', started_at: beat, heartbeat_at: beat, stopped_at: null, dead_at: null }).execute();
  await db.updateTable('workers').set({ hub_id: WORKER_HUB, heartbeat_at: beat }).where('name', '=', 'box-w1').execute();
  const oldOfAgain = fetched.find((f) => (f.data as { jobId: string }).jobId === 'j-again')!.id;
  return { one, two, db, boss, prompts, dir, oldOfAgain, oldIds: new Set(fetched.map((f) => f.id)) };
}

/** What one reconciliation of the lost worker leaves: the row lost, one event per job, j-again queued with one queue job for attempt 2, j-spent interrupted. */
async function assertLostOnce(g: Ground): Promise<void> {
  const { db, boss } = g;
  const worker = await db.selectFrom('workers').selectAll().where('name', '=', 'box-w1').executeTakeFirstOrThrow();
  assert.equal(worker.state, 'lost');
  assert.ok(Number(worker.lost_at) > 0);
  assert.ok((await db.selectFrom('hubs').select('dead_at').where('id', '=', WORKER_HUB).executeTakeFirstOrThrow()).dead_at !== null);

  const lostEvents = await db.selectFrom('events').select(['job_id', 'data_json']).where('kind', '=', 'worker_lost').orderBy('id').execute();
  assert.deepEqual(lostEvents.map((e) => e.job_id), ['j-again', 'j-spent'], 'one reconciliation: one worker_lost event per job');
  const by = new Set(lostEvents.map((e) => (JSON.parse(e.data_json!) as { by: string }).by));
  assert.equal(by.size, 1);
  assert.ok([g.one.hub.hubId, g.two.hub.hubId].includes([...by][0]!), 'by one of the two hubs');

  const again = await db.selectFrom('jobs').selectAll().where('id', '=', 'j-again').executeTakeFirstOrThrow();
  assert.deepEqual([again.status, again.placement, again.hub_id, again.worker, again.worker_epoch], ['queued', 'queue', null, null, null], 'back in the queue, nobody\'s, retry none notwithstanding');
  const [a1] = await db.selectFrom('attempts').selectAll().where('job_id', '=', 'j-again').execute();
  assert.equal(a1!.status, 'interrupted');
  assert.match(a1!.error!, /^worker_lost: worker box-w1 \(host box-w1\.example, hub h-worker-box-w1\) stopped heartbeating; last heartbeat \d{4}-/);
  const spent = await db.selectFrom('jobs').selectAll().where('id', '=', 'j-spent').executeTakeFirstOrThrow();
  assert.deepEqual([spent.status, spent.hub_id, spent.worker], ['interrupted', null, null]);
  assert.match(spent.error!, /not queued again: it ran 2 attempt\(s\), the most a job gets \(maxAttempts 2\)/);

  // The queue: the requeued attempt's lost queue job failed, exactly one new one waiting, for attempt 2
  // of j-again (j-spent's, not requeued, is left to pg-boss's expiry: nothing decides by it).
  const waiting = await boss.fetch<{ jobId: string; attempt: number }>(QUEUE, { batchSize: 10 });
  assert.deepEqual(waiting.map((w) => w.data), [{ jobId: 'j-again', attempt: 2 }]);
  assert.equal(waiting[0]!.id, again.queue_id, 'the job row names its new queue job');
  assert.ok(!g.oldIds.has(waiting[0]!.id));
  assert.equal((await boss.getJobById(QUEUE, g.oldOfAgain))?.state, 'failed', 'the lost attempt\'s queue job failed');
  assert.deepEqual(await boss.fetch(QUEUE, { batchSize: 10 }), [], 'nothing else waits');
}

describe('a lost worker (PostgreSQL, two hubs)', { timeout: 180_000 }, () => {
  test('its heartbeat ages past the timeout: one hub reconciles it — worker lost, attempt interrupted/worker_lost, the job queued with one queue job for attempt 2 whose first prompt carries the seed; at maxAttempts interrupted with none', async (t) => {
    const g = await ground(t, { hubBeatMs: 200, hubTimeoutMs: 1500 }, 0);
    const { db } = g;
    await eventually('the worker\'s hub found dead and reconciled', async () => (await db.selectFrom('jobs').select('status').where('id', '=', 'j-spent').executeTakeFirstOrThrow()).status === 'interrupted', 20_000);
    await assertLostOnce(g);

    // A runner takes attempt 2 (here a hub's: the launch path a worker runs too) in a directory it has.
    const work = join(g.dir, 'fresh-work');
    mkdirSync(work);
    await db.updateTable('jobs').set({ cwd: work, placement: 'hub' }).where('id', '=', 'j-again').execute();
    await (g.two.hub as unknown as { runner: Runner }).runner.dispatch();
    await eventually('attempt 2 succeeded', async () => (await db.selectFrom('jobs').select('status').where('id', '=', 'j-again').executeTakeFirstOrThrow()).status === 'succeeded', 20_000);
    const a2 = await db.selectFrom('attempts').selectAll().where('job_id', '=', 'j-again').where('n', '=', 2).executeTakeFirstOrThrow();
    assert.equal(a2.kind, 'retry');
    assert.notEqual(a2.session_id, 'sess-j-again-1', 'a new session');
    assert.equal(g.prompts.length, 1);
    const [first] = g.prompts;
    assert.match(first!, /^Fix the parser so that the last token is kept\./, 'the job\'s prompt first');
    assert.match(first!, /Attempt 1 of this task ran on worker `box-w1` \(host box-w1\.example\)/);
    assert.match(first!, /fresh from the base/);
    assert.match(first!, /- said: Found it: tokenize\(\) stops one token early/);
    assert.match(first!, /- called Read: \{"file_path":"src\/parser\.ts"\}/);
    assert.doesNotMatch(first!, /RESULT-NOT-IN-SEED/);
  });

  test('both hubs look for dead hubs at the same moment: one reconciles the worker, the other finds nothing', async (t) => {
    // Beats far apart, so nothing ticks by itself: the two detections below are the only ones.
    const g = await ground(t, { hubBeatMs: 60_000, hubTimeoutMs: 120_000 }, 10 * 60_000);
    const registry = (h: TestHub) => (h.hub as unknown as { registry: HubRegistry }).registry;
    const found = await Promise.all([registry(g.one).detect(), registry(g.two).detect()]);
    assert.deepEqual(found.map((f) => f.map((r) => r.id)).flat(), [WORKER_HUB], `one detection won: ${JSON.stringify(found.map((f) => f.length))}`);
    await assertLostOnce(g);
  });

  test('a worker is judged by its own lease, not the hubs\' timeout: a 3 s lease is found lost before the hubs\' fast path (10 s) or timeout (120 s) could', async (t) => {
    // The hubs beat every 5 s: their fast path (a free liveness lock, as here: the test's row holds
    // none) needs a heartbeat 2 beats = 10 s old, their timeout 120 s. The worker's 3 s lease is
    // found at the first tick after it ran out: 3–8 s after the heartbeat.
    const g = await ground(t, { hubBeatMs: 5_000, hubTimeoutMs: 120_000 }, 0, 3_000);
    const t0 = Date.now();
    await eventually('the worker\'s hub found dead by its lease', async () => (await g.db.selectFrom('jobs').select('status').where('id', '=', 'j-spent').executeTakeFirstOrThrow()).status === 'interrupted', 60_000);
    const took = Date.now() - t0;
    t.diagnostic(`a worker with a 3 s lease found lost ${took} ms after its last heartbeat (hubs: fast path 10 s, timeout 120 s)`);
    assert.ok(took < 9_500, `found after ${took} ms: by the hubs' own rule, not the lease`);
    await assertLostOnce(g);
  });
});
