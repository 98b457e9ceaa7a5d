// Runs and workflows across hubs (docs/decisions.md "Runs, workflows and debates across hubs",
// docs/store-plan.md §3.4, §3.6): real hub processes (test/helpers/crewHub.ts: startTestHub with
// scripted children) on one PostgreSQL database. Hub one dispatches a run and starts a workflow;
// hubs two and three, started after, do not drive them (no child of theirs, every job hub one's);
// kill -9 of hub one → one of the others adopts both and they complete there, the other starts nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freshDatabase } from '../helpers/postgres.js';
import { openSql } from '../../src/store/sql/open.js';
import { startHubProc, type HubProc } from '../helpers/hubProcs.js';
import { makeTempDir } from '../helpers/claude.js';
import { initRepo } from '../helpers/git.js';
import { eventually } from '../helpers/wait.js';

const CREW_HUB = join(import.meta.dirname, '../helpers/crewHub.ts');
const BEAT_MS = 200;
const TIMEOUT_MS = 2000;

describe('runs and workflows across hubs (PostgreSQL)', { timeout: 240_000 }, () => {
  test('only the hub that drives a run or workflow moves it; when it is killed, exactly one other hub adopts both and finishes them', async (t) => {
    const pg = await freshDatabase();
    t.after(() => pg.drop());
    const dir = await makeTempDir('ovs-adopt');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const s = await openSql({ home: join(dir, 'reader'), databaseUrl: pg.url });
    t.after(() => s.close());
    const db = s.db;
    const project = join(dir, 'project');
    const repo = await initRepo(join(project, 'repo'));
    const procs: HubProc[] = [];
    t.after(async () => { for (const p of procs) { p.signal('SIGKILL'); await p.exited; } });
    const hub = async (name: string): Promise<{ p: HubProc; id: string }> => {
      const p = await startHubProc(60_000, CREW_HUB);
      procs.push(p);
      const r = await p.send({ op: 'start', dir: join(dir, name), project, url: pg.url, beatMs: BEAT_MS, timeoutMs: TIMEOUT_MS }, 60_000);
      return { p, id: r.hubId as string };
    };
    const call = async (h: { p: HubProc }, tool: string, args: Record<string, unknown>): Promise<any> => (await h.p.send({ op: 'call', tool, args }, 60_000)).result;
    const launched = async (h: { p: HubProc }): Promise<string[]> => (await h.p.send({ op: 'launched' })).jobs as string[];
    const runRow = () => db.selectFrom('runs').select(['status', 'hub_id']).where('id', '=', runId).executeTakeFirstOrThrow();
    const tasks = () => db.selectFrom('run_tasks').select(['task_id', 'job_id', 'job_ids_json']).where('run_id', '=', runId).orderBy('n').execute();
    const wf = () => db.selectFrom('workflows').select(['status', 'hub_id', 'state_json', 'approval_request']).where('id', '=', wfId).executeTakeFirstOrThrow();
    const jobHub = async (id: string) => (await db.selectFrom('jobs').select(['hub_id', 'status']).where('id', '=', id).executeTakeFirstOrThrow());

    const one = await hub('one');
    const content = ['[[task]]', 'id = "a"', 'prompt = "@gate:a first"', '[[task]]', 'id = "b"', 'prompt = "@gate:b second"', 'depends_on = ["a"]',
      '[[task]]', 'id = "c"', 'prompt = "third"', 'depends_on = ["b"]'].join('\n');
    const runId = (await call(one, 'dispatch', { format: 'toml', content })).run_id as string;
    const wfId = (await call(one, 'start_workflow', { task: 'add alpha', cwd: repo, approve_plan: true })).workflow_id as string;
    await eventually('the workflow waits for its plan approval', async () => (await wf()).status === 'waiting_approval', 60_000);
    const wfRunId = JSON.parse((await wf()).state_json).runId as string;
    const two = await hub('two');
    const three = await hub('three');

    // Hub one's run goes on: a ends, b starts — by hub one, while the others listen.
    await one.p.send({ op: 'open', gate: 'a' });
    const bJob = await eventually('task b has its job', async () => (await tasks())[1]!.job_id ?? undefined, 30_000);
    await eventually('b runs', async () => (await jobHub(bJob)).status === 'running', 30_000);
    assert.deepEqual(await runRow(), { status: 'running', hub_id: one.id });
    assert.equal((await wf()).hub_id, one.id);
    assert.equal((await db.selectFrom('runs').select('hub_id').where('id', '=', wfRunId).executeTakeFirstOrThrow()).hub_id, one.id);
    assert.deepEqual(await launched(two), [], 'hub two drove nothing');
    assert.deepEqual(await launched(three), [], 'hub three drove nothing');
    const before = await db.selectFrom('jobs').select(['id', 'hub_id']).execute();
    assert.ok(before.length >= 3, `a, b and the workflow's assess phase: ${JSON.stringify(before)}`);
    assert.deepEqual([...new Set(before.map((j) => j.hub_id))], [one.id], 'every job so far is hub one\'s');

    one.p.signal('SIGKILL');
    await one.p.exited;
    const adopter = await eventually('the run adopted', async () => { const h = (await runRow()).hub_id; return h && h !== one.id ? h : undefined; }, TIMEOUT_MS + 15_000, 20);
    const [by, other] = adopter === two.id ? [two, three] : [three, two];
    assert.equal(by.id, adopter, `adopted by a live hub: ${adopter}`);
    // b goes on in its session on the adopter (its scripted child there waits for the gate too).
    await Promise.all([two, three].map((h) => h.p.send({ op: 'open', gate: 'b' })));
    const run = await eventually('the run succeeded', async () => { const r = await runRow(); return r.status !== 'running' ? r : undefined; }, 60_000);
    assert.deepEqual(run, { status: 'succeeded', hub_id: adopter });
    const ts = await tasks();
    assert.deepEqual(ts.map((x) => (JSON.parse(x.job_ids_json) as string[]).length), [1, 1, 1], 'one job per task: nothing spawned twice');
    assert.equal(ts[1]!.job_id, bJob, 'b went on in its own job');
    assert.equal((await db.selectFrom('attempts').select('n').where('job_id', '=', bJob).execute()).length, 2, 'b: hub one\'s attempt and the adopter\'s');
    assert.equal((await jobHub(ts[2]!.job_id!)).hub_id, adopter, 'c was spawned by the adopter');

    // The workflow followed its script run to the adopter: the plan approval answered there takes effect.
    await eventually('the workflow adopted', async () => (await wf()).hub_id === adopter, 15_000);
    assert.equal((await db.selectFrom('runs').select('hub_id').where('id', '=', wfRunId).executeTakeFirstOrThrow()).hub_id, adopter);
    await call(by, 'respond', { request_id: (await wf()).approval_request, decision: 'approved' });
    await eventually('the workflow succeeded', async () => { const w = await wf(); return w.status === 'succeeded' ? w : w.status === 'blocked' || w.status === 'cancelled' ? assert.fail(JSON.stringify(w)) : undefined; }, 60_000);

    assert.deepEqual(await launched(other), [], 'the hub that did not adopt started nothing');
    const mine = await launched(by);
    assert.ok(mine.includes(bJob) && mine.includes(ts[2]!.job_id!), `the adopter ran b again and c: ${JSON.stringify(mine)}`);
    assert.equal(await db.selectFrom('hubs').select('id').where('dead_at', 'is not', null).execute().then((r) => r.map((x) => x.id).join()), one.id);
    await Promise.all([two, three].map((h) => h.p.send({ op: 'stop' }, 60_000)));
  });
});
