// End-to-end (issue 30 step 3, docs/workers-plan.md §3): a real `overseer worker` process (dist/) on a
// real PostgreSQL takes attempts from the queue and runs real `claude` children on the fake model.
// The test puts jobs in the queue itself, as a hub's spawn does (the job's row and its queue job in
// one transaction, a NOTIFY of the job queued). The worker polls only every 10 minutes here, so
// every start is the NOTIFY's or a job end's doing.
// - a job runs on the worker: confined as a hub confines (its state unreadable), its lock hook and its
//   MCP calls answered by the worker's own endpoint, its transcript on the worker, succeeded with
//   jobs.worker = the worker's name and its hub id = the worker's hub; its queue job completed;
// - a worker without codex never takes a job from att_codex (still waiting after it fetched);
// - capacity 1 and three queued jobs: never two at once (their attempts do not overlap);
// - a cancelled queued job whose queue job was left behind is not started (the queue job completed);
// - SIGTERM: the worker's running child ends interrupted and its job is queued again at once (a new
//   queue job for attempt 2, seeded as after a loss), the worker stopped.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { sql } from 'kysely';
import type PgBoss from 'pg-boss';
import { startFakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { insertJob } from '../../src/store/sql/jobs.js';
import { ensureQueue, openAttemptQueue, sendAttempt } from '../../src/store/sql/queue.js';
import { queueName } from '../../src/domain/placement.js';
import { claudeBin, claudeEnv, makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo, makeBareRemote } from '../helpers/git.js';
import { MAIN, buildCli, cliEnv } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/postgres.js';
import { newJob } from '../helpers/budgetDb.js';
import { watchProcess } from '../helpers/process.js';
import { eventually } from '../helpers/wait.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/** A path built one character at a time at run time, where no reading of the command's text sees it (the state guard). */
const js = (p: string): string => p.split('').map((c) => `'${c}'`).join('+');

interface Ground { dir: string; project: string; origin: string; url: string; db: SqlDb; boss: PgBoss; fakeUrl: string }

async function ground(scripts: Record<string, Script>): Promise<Ground> {
  buildCli();
  const pg = await freshDatabase();
  cleanups.push(() => pg.drop());
  const fake = await startFakeAnthropic({ scripts });
  cleanups.push(() => fake.close());
  const dir = await makeTempDir('ovs-worker');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  // The lead's repository and its shared remote: the worker clones the remote, never the lead's tree.
  const origin = await makeBareRemote(join(dir, 'origin.git'));
  const project = await initRepo(join(dir, 'project'));
  await gitOut(project, ['remote', 'add', 'origin', origin]);
  await gitOut(project, ['push', '-q', 'origin', 'main']);
  const db = await openSql({ home: join(dir, 'reader'), databaseUrl: pg.url }); // migrates, as a hub's start does
  cleanups.push(() => db.close());
  const boss = await openAttemptQueue({ url: pg.url, log: pino({ level: 'silent' }) });
  cleanups.push(() => boss.stop({ graceful: false, wait: true }));
  return { dir, project, origin, url: pg.url, db, boss, fakeUrl: fake.url };
}

/** A job queued for workers as a hub's spawn queues it: the row and its queue job in one transaction, with the NOTIFY. */
async function queueJob(g: Ground, id: string, o: { prompt: string; provider?: 'claude' | 'codex' }): Promise<{ queue: string; queueId: string }> {
  const queue = queueName(o.provider ?? 'claude', null, []);
  await ensureQueue(g.boss, queue);
  let queueId = '';
  await g.db.db.transaction().execute(async (trx) => {
    await insertJob(trx, newJob(id, { prompt: o.prompt, provider: o.provider ?? 'claude', cwd: g.project, placement: 'queue', queue_name: queue, worktree: 1, branch: `overseer/${id}`, repo_root: g.project, repo_remote: g.origin, work_dir: null } as never), Date.now());
    queueId = (await sendAttempt(trx, g.boss, queue, { jobId: id, attempt: 1 }, 600))!;
    await trx.updateTable('jobs').set({ queue_id: queueId }).where('id', '=', id).execute();
    await sql`SELECT pg_notify('overseer', ${JSON.stringify({ h: 'h-test', e: 'job', d: { jobId: id, status: 'queued' } })})`.execute(trx);
  });
  assert.ok(queueId, `${id} sent`);
  return { queue, queueId };
}

interface WorkerProc { proc: ChildProcess; home: string; out(): string; err(): string; exited: Promise<number | string | null> }

async function startWorker(g: Ground, name: string, args: string[], env: Record<string, string> = {}): Promise<WorkerProc> {
  const home = join(g.dir, `${name}-state`);
  const userHome = join(g.dir, `${name}-home`);
  mkdirSync(userHome, { recursive: true });
  const e = claudeEnv({ home: userHome, baseUrl: g.fakeUrl, extra: { CLAUDE_BIN: claudeBin(), ...env } });
  const proc = spawn(process.execPath, [MAIN, 'worker', '--name', name, ...args], {
    cwd: g.dir, env: cliEnv({ ...e, OVERSEER_HOME: home, OVERSEER_DATABASE_URL: g.url, OVERSEER_WORKER_POLL_MS: '600000', OVERSEER_LOG_LEVEL: 'info' }), stdio: ['ignore', 'pipe', 'pipe'],
  });
  const w = watchProcess(proc);
  cleanups.push(async () => { if (!w.gone()) { proc.kill('SIGKILL'); await w.exited; } });
  await eventually(`worker ${name} listening`, () => {
    if (w.gone()) throw new Error(`worker ${name} exited before it listened:\n${w.out()}${w.err()}`);
    return /listening on http:\/\/127\.0\.0\.1:\d+\/mcp/.test(w.out());
  }, 60_000);
  return { proc, home, out: w.out, err: w.err, exited: w.exited };
}

const jobRow = (g: Ground, id: string) => g.db.db.selectFrom('jobs').select(['status', 'worker', 'worker_epoch', 'hub_id', 'pid', 'status_message', 'error']).where('id', '=', id).executeTakeFirstOrThrow();
const workerRow = (g: Ground, name: string) => g.db.db.selectFrom('workers').selectAll().where('name', '=', name).executeTakeFirstOrThrow();
const attempts = (g: Ground, id: string) => g.db.db.selectFrom('attempts').select(['n', 'status', 'started_at', 'ended_at', 'transcript']).where('job_id', '=', id).orderBy('n').execute();
const queueState = async (g: Ground, queue: string, id: string): Promise<string | undefined> => (await g.boss.getJobById(queue, id))?.state;

describe('overseer worker runs agents from the queue (PostgreSQL, real claude children)', { timeout: 300_000 }, () => {
  test('it claims and runs queued jobs one at a time at capacity 1, confined and served by its own endpoint; never a codex job; never a cancelled one', async () => {
    let probe = '';
    const g = await ground({
      probe: (ctx) => ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'reporting from the worker' } }] }
        : ctx.step === 1 ? { tools: [{ name: 'Bash', input: { command: probe } }] }
          : { text: 'probe done' },
      short: (ctx) => ctx.step === 0 ? { delayMs: 500, text: 'short done' } : { text: 'short done' },
    });
    const home = join(g.dir, 'w1-state');
    probe = `node -e "try{require('fs').readFileSync(${js(join(home, 'lead.token'))});console.log('READ')}catch(e){console.log('DENIED '+e.code)}" > probe.txt 2>&1; true`;

    // Before the worker starts: a cancelled job whose queue job was left behind, and a codex job.
    const cancelled = await queueJob(g, 'j-cancelled', { prompt: '@script:short never run' });
    await g.db.db.updateTable('jobs').set({ status: 'cancelled', ended_at: Date.now() }).where('id', '=', 'j-cancelled').execute();
    const codex = await queueJob(g, 'j-codex', { prompt: 'a codex task', provider: 'codex' });

    const w = await startWorker(g, 'w1', ['--capacity', '1'], { CODEX_BIN: join(g.dir, 'no-codex-here') });
    assert.match(w.out(), /worker w1 registered: epoch 1, capacity 1, labels -, lease 30 s; CLIs: claude [^,]*\n/, 'claude only: its codex does not answer');
    const me = await workerRow(g, 'w1');
    assert.ok(me.hub_id, 'the worker\'s hub id is in its row');
    const hub = await g.db.db.selectFrom('hubs').selectAll().where('id', '=', me.hub_id).executeTakeFirstOrThrow();
    assert.equal(hub.pid, w.proc.pid, 'its own hubs row');
    assert.match(hub.url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, 'it listens on 127.0.0.1 only');

    // Its first round fetched both: the cancelled one is completed unstarted; the codex one was never fetched.
    await eventually('the cancelled job\'s queue job completed by the worker', async () => (await queueState(g, cancelled.queue, cancelled.queueId)) === 'completed', 30_000);
    assert.equal((await jobRow(g, 'j-cancelled')).status, 'cancelled');
    assert.deepEqual(await attempts(g, 'j-cancelled'), [], 'never started');

    const t0 = Date.now();
    await queueJob(g, 'j-probe', { prompt: '@script:probe look around' });
    await eventually('the probe job claimed (woken by the NOTIFY)', async () => (await jobRow(g, 'j-probe')).worker === 'w1', 30_000, 20);
    const wokeMs = Date.now() - t0;
    await queueJob(g, 'j-s1', { prompt: '@script:short one' });
    await queueJob(g, 'j-s2', { prompt: '@script:short two' });
    for (const id of ['j-probe', 'j-s1', 'j-s2']) {
      await eventually(`${id} succeeded`, async () => {
        const j = await jobRow(g, id);
        if (j.status === 'failed' || j.status === 'cancelled') throw new Error(`${id} ended ${j.status}: ${j.error}\nworker: ${w.err().slice(-2000)}`);
        return j.status === 'succeeded';
      }, 120_000, 50);
    }
    process.stdout.write(`# queued → claimed by the worker in ${wokeMs} ms (NOTIFY; its poll is 10 min)\n`);
    assert.ok(wokeMs < 30_000);

    for (const id of ['j-probe', 'j-s1', 'j-s2']) {
      const j = await jobRow(g, id);
      assert.deepEqual([j.worker, Number(j.worker_epoch), j.hub_id], ['w1', 1, me.hub_id], `${id} ran on w1 under epoch 1, owned by its hub`);
    }
    const p = await jobRow(g, 'j-probe');
    assert.equal(p.status_message, 'reporting from the worker', 'the child\'s MCP call reached the worker\'s endpoint (its token is good there only)');
    assert.ok(existsSync(join(home, 'lead.token')), 'the file the child tried is there, outside its jail');
    const seen = await gitOut(g.origin, ['show', 'overseer/j-probe:probe.txt']);
    assert.match(seen, /^DENIED/, `the child's Bash ran (the lock hook answered by the worker) and confined: the worker's state is not readable (${seen.trim()}); its work committed on its branch and pushed to the remote`);
    assert.ok(!existsSync(join(g.project, 'probe.txt')), 'nothing written in the lead\'s tree');
    const [pa] = await attempts(g, 'j-probe');
    assert.ok(pa!.transcript.startsWith(home), `the transcript is the worker's (${pa!.transcript})`);
    assert.ok(existsSync(pa!.transcript), 'and written there');

    // Capacity 1: the three attempts never overlapped.
    const spans = (await Promise.all(['j-probe', 'j-s1', 'j-s2'].map(async (id) => (await attempts(g, id))[0]!)))
      .map((a) => [Number(a.started_at), Number(a.ended_at)] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) assert.ok(spans[i]![0] >= spans[i - 1]![1], `attempt ${i} started at ${spans[i]![0]}, before the one before it ended (${spans[i - 1]![1]})`);

    // Queue jobs of what it ran are completed (just after each job's end is written: wait for the last); the codex job still waits, untouched.
    const sent = await g.db.db.selectFrom('jobs').select(['id', 'queue_name', 'queue_id']).where('id', 'in', ['j-probe', 'j-s1', 'j-s2']).execute();
    for (const s of sent) await eventually(`${s.id}'s queue job completed`, async () => (await queueState(g, s.queue_name!, s.queue_id!)) === 'completed', 10_000);
    assert.equal(await queueState(g, codex.queue, codex.queueId), 'created', 'the codex queue job is still waiting');
    const cx = await jobRow(g, 'j-codex');
    assert.deepEqual([cx.status, cx.worker], ['queued', null]);

    w.proc.kill('SIGTERM');
    assert.equal(await w.exited, 0, w.err());
    assert.equal((await workerRow(g, 'w1')).state, 'stopped');
  });

  test('SIGTERM: the worker stops fetching, its running child ends interrupted and its job is queued again at once for another worker, the worker stopped', async () => {
    const g = await ground({
      long: (ctx) => ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'working' } }] } : { delayMs: 120_000, text: 'never' },
    });
    const w = await startWorker(g, 'w2', ['--capacity', '2']);
    const sent = await queueJob(g, 'j-long', { prompt: '@script:long a long task' });
    const pid = await eventually('the child working', async () => {
      const j = await jobRow(g, 'j-long');
      return j.status_message === 'working' && j.pid !== null && j.pid;
    }, 90_000, 50);
    cleanups.push(() => { try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ } });
    w.proc.kill('SIGTERM');
    assert.equal(await w.exited, 0, w.err());
    assert.match(w.out(), /worker w2 stopped \(SIGTERM\)\n$/);
    // Its job goes back to the queue at once (another worker takes it; no lease wait), seeded as after a loss.
    const j = await jobRow(g, 'j-long');
    assert.deepEqual([j.status, j.worker, j.pid, j.hub_id], ['queued', null, null, null]);
    const [a1] = await attempts(g, 'j-long');
    assert.equal(a1!.status, 'interrupted');
    assert.match((await g.db.db.selectFrom('attempts').select('error').where('job_id', '=', 'j-long').executeTakeFirstOrThrow()).error ?? '', /^worker_lost: worker w2 .* was stopped cleanly \(SIGTERM\)/);
    assert.ok(['completed', 'failed'].includes((await queueState(g, sent.queue, sent.queueId)) ?? ''), 'the stopped attempt\'s queue job is done with');
    const next = await g.boss.fetch<{ jobId: string; attempt: number }>(sent.queue, { batchSize: 5 });
    assert.deepEqual(next.map((n) => n.data), [{ jobId: 'j-long', attempt: 2 }], 'one queue job waits for the next attempt');
    assert.equal((await workerRow(g, 'w2')).state, 'stopped');
    assert.equal((await g.db.db.selectFrom('hubs').select('stopped_at').where('pid', '=', w.proc.pid!).executeTakeFirstOrThrow()).stopped_at !== null, true, 'its hub stopped cleanly');
  });
});
