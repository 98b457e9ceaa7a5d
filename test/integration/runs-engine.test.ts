// The run engine's rules (src/runs/runService.ts) on a real hub whose children are scripted in
// process (test/helpers/fakeLauncher.ts): a run's concurrency, its budget (no new task starts,
// the note says which budget and what is left running), its timeout (what is live is
// cancelled), and a hub restart in the middle of a run (the new hub continues it).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher, type TurnScript } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { count, job } from '../helpers/state.js';
import { sql } from 'kysely';
import { gate, type Gate } from '../helpers/gate.js';
import { getRun, runTasks } from '../../src/store/sql/runs.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

/** Each child waits for the gate named in its prompt ("@gate:<name>"), then succeeds. */
function gated(gates: Map<string, Gate>): TurnScript {
  return async (prompt) => {
    const name = /@gate:(\w+)/.exec(prompt)?.[1];
    if (name) await gates.get(name)!.wait;
    return { resultText: 'done' };
  };
}

async function setup(script: TurnScript, dir?: string): Promise<{ h: TestHub; fake: ScriptedLauncher }> {
  const fake = new ScriptedLauncher(script);
  const h = await startTestHub({ processes: fake, ...(dir ? { dir } : {}) });
  hubs.push(h);
  return { h, fake };
}

const toml = (rules: string[], tasks: string[][]): string => [...rules, ...tasks.flatMap((t) => ['[[task]]', ...t])].join('\n');
// Read synchronously inside a bus listener (the hub's connection; reads pass in the mixed period).
/** Tasks of the run whose job is live, counted in one statement (one consistent read). */
const liveJobs = (h: TestHub, runId: string): Promise<number> => count(h.hub, sql`SELECT COUNT(*) AS n FROM run_tasks t JOIN jobs j ON j.id = t.job_id
  WHERE t.run_id = ${runId} AND j.status IN ('queued', 'running', 'waiting')`);
const ended = (h: TestHub, runId: string, ms = 20_000) => eventually(`run ${runId} ended`, async () => { const r = await getRun(h.hub.ctx.sql.db, runId); return r && r.status !== 'running' ? r : undefined; }, ms);

describe('run engine', () => {
  test('concurrency 2: at most two tasks have a live job; the others start as slots free up', async () => {
    const gates = new Map(['g'].map((n) => [n, gate(20_000)]));
    const { h } = await setup(gated(gates));
    const r = await h.call('dispatch', { format: 'toml', content: toml(['concurrency = 2'], ['a', 'b', 'c', 'd'].map((id) => [`id = "${id}"`, `prompt = "@gate:g ${id}"`])) });
    assert.equal(r.tasks.filter((t: any) => t.job_id).length, 2);
    let most = 0;
    const reads: Promise<void>[] = [];
    const off = h.hub.ctx.bus.on('job', () => { reads.push(liveJobs(h, r.run_id).then((n) => { most = Math.max(most, n); })); });
    gates.get('g')!.open();
    const run = await ended(h, r.run_id);
    off();
    await Promise.all(reads);
    assert.equal(run.status, 'succeeded');
    assert.ok(most <= 2, `at most 2 live at once, saw ${most}`);
    assert.equal((await runTasks(h.hub.ctx.sql.db, r.run_id)).filter((t) => t.job_id).length, 4);
    // The dashboard's Runs panel reads the same views (lead token here; the page uses its session).
    const base = h.hub.http!.url.replace(/\/mcp$/, '');
    const get = async (path: string): Promise<any> => {
      const res = await fetch(`${base}${path}`, { headers: { Authorization: `Bearer ${h.hub.leadToken}` } });
      assert.equal(res.status, 200, await res.clone().text());
      return res.json();
    };
    const listed = await get('/api/web/runs');
    assert.deepEqual(listed.runs.map((x: any) => [x.run_id, x.status, x.counts]), [[r.run_id, 'succeeded', { succeeded: 4 }]]);
    const one = await get(`/api/web/runs/${r.run_id}`);
    assert.deepEqual(one.tasks.map((t: any) => t.task_id), ['a', 'b', 'c', 'd']);
  });

  test('budget: a task that would take the run over its budget_usd does not start; the note names the budget and what is left running', async () => {
    const gates = new Map(['g'].map((n) => [n, gate(20_000)]));
    const { h } = await setup(gated(gates));
    const r = await h.call('dispatch', { format: 'toml', content: toml(['budget = 1'], ['a', 'b', 'c'].map((id) => [`id = "${id}"`, `prompt = "@gate:g ${id}"`, 'budget_usd = 0.4'])) });
    assert.deepEqual(r.tasks.map((t: any) => t.status === 'not_started'), [false, false, true]);
    assert.match(r.note, /^run budget reached \(the run's budget_usd \$1\): spent or held by live jobs \$0\.8, task c would need about \$0\.4; no new task starts; left running: a \(j-\w+\), b \(j-\w+\)$/);
    gates.get('g')!.open();
    const run = await ended(h, r.run_id);
    assert.equal(run.status, 'stopped');
    assert.match(run.note!, /run budget reached .*; tasks never started: c$/);
    const v = await h.call('get_run', { run_id: r.run_id });
    assert.deepEqual(v.counts, { succeeded: 2, not_started: 1 });
  });

  test('timeout: when timeout_s passes, the live jobs are cancelled and the run says so', async () => {
    const gates = new Map(['never'].map((n) => [n, gate(60_000)]));
    const { h } = await setup(gated(gates));
    const r = await h.call('dispatch', { format: 'yaml', content: 'timeout_s: 1\ntasks:\n  - id: slow\n    prompt: "@gate:never slow"\n  - id: after\n    prompt: later\n    depends_on: [slow]\n' });
    const run = await ended(h, r.run_id, 15_000);
    assert.equal(run.status, 'timed_out');
    assert.match(run.note!, /^run timeout reached \(timeout_s 1\): cancelled slow \(j-\w+\); tasks never started: after$/);
    const slow = (await runTasks(h.hub.ctx.sql.db, r.run_id))[0]!;
    await eventually('the slow job is cancelled', async () => (await job(h.hub, slow.job_id!)).status === 'cancelled');
    gates.get('never')!.open();
  });

  test('a hub restart mid-run: the interrupted task continues on the new hub and the rest of the run follows', async () => {
    const gates = new Map(['hold'].map((n) => [n, gate(60_000)]));
    const first = await setup(gated(gates));
    const r = await first.h.call('dispatch', { format: 'toml', content: toml([], [['id = "a"', 'prompt = "@gate:hold a"'], ['id = "b"', 'prompt = "b"', 'depends_on = ["a"]']]) });
    const aJob = r.tasks[0].job_id;
    await eventually('a runs', async () => (await job(first.h.hub, aJob)).status === 'running');
    await first.h.stop({ keep: true });
    hubs.splice(hubs.indexOf(first.h), 1);
    gates.get('hold')!.open();
    const second = await setup(async () => ({ resultText: 'done' }), first.h.dir);
    const run = await ended(second.h, r.run_id);
    assert.equal(run.status, 'succeeded');
    const tasks = await runTasks(second.h.hub.ctx.sql.db, r.run_id);
    assert.equal(tasks[0]!.job_id, aJob, 'a continued its own job');
    assert.ok(second.fake.children.some((c) => c.messages.join('\n').includes('The hub that ran you stopped') || (c.prompt ?? '').includes('The hub that ran you stopped')), 'it was told why');
    assert.deepEqual(JSON.parse((await job(second.h.hub, tasks[1]!.job_id!)).depends_on_json), [aJob]);
  });
});
