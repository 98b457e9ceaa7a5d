// End-to-end (a real hub, real claude children on the fake model): the house budget with
// reservations (docs/budgets.md). Concurrent spawn_agent calls racing a nearly exhausted house
// budget — exactly the allowed number pass, the rest are refused with the numbers and leave no
// row; reservations are shown while held and released with the booked cost when jobs settle; a
// parent's budget_usd caps its subtree, and the child whose spending crosses it is stopped with
// failure_class budget, saying which budget and what is left running; budgets and reservations
// survive a hub restart.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { startTestHub } from '../helpers/hub.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { initRepo } from '../helpers/git.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { startFakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import type { Hub } from '../../src/hub.js';
import { sql, type RawBuilder } from 'kysely';
import { events, job, jobs, reopen, row } from '../helpers/state.js';

const { hubWith, cleanups } = scriptedHubs();

const status = (message: string, usage?: { input_tokens: number; output_tokens: number }) => ({ tools: [{ name: 'mcp__overseer__report_status', input: { message } }], ...(usage ? { usage } : {}) });
const count = async (hub: Hub, q: RawBuilder<{ c: number | string }>): Promise<number> => Number((await row(hub, q))!.c);
const reservation = (hub: Hub, id: string) => row(hub, sql<{ amount_usd: number; released_at: number | null; booked_usd: number | null }>`SELECT * FROM budget_reservations WHERE job_id = ${id}`);
const near = (a: number, b: number, eps = 1e-6): boolean => Math.abs(a - b) < eps;
/** The dollar figures of a refusal: limit, spent, reserved (and by how many jobs), asked. */
function figures(text: string): { limit: number; spent: number; reserved: number; jobs: number; asked: number } {
  const m = /limit \$([\d.]+); spent \$([\d.]+).*?, reserved \$([\d.]+) by (\d+) queued or running job\(s\), asked \$([\d.]+)/.exec(text);
  assert.ok(m, `no figures in: ${text}`);
  return { limit: Number(m[1]), spent: Number(m[2]), reserved: Number(m[3]), jobs: Number(m[4]), asked: Number(m[5]) };
}

describe('the house budget with reservations', () => {
  test('8 concurrent spawn_agent calls race a nearly exhausted house budget: exactly 3 pass, 5 are refused with the numbers and leave nothing; reservations are released with the booked cost', { timeout: 180_000 }, async () => {
    const hold = gate(120_000);
    const h = await hubWith({
      first: async (ctx) => {
        if (ctx.step === 0) return status('spending', { input_tokens: 1000, output_tokens: 100 });
        if (ctx.step === 1) { await hold.wait; return finishStep('first done'); }
        return { text: 'done' };
      },
      racer: async (ctx) => {
        if (ctx.step === 0) { await hold.wait; return finishStep('raced'); }
        return { text: 'done' };
      },
    } satisfies Record<string, Script>, { budgetUsd: 2.6 });
    cleanups.push(async () => hold.open());
    const repo = await initRepo(join(h.dir, 'repo'));
    // Nearly exhausted: the first job reserves $1 (its budget_usd) and is spending it.
    const first = await h.call('spawn_agent', { prompt: '@script:first', title: 'first', budget_usd: 1 });
    assert.equal(first.reserved_usd, 1, 'spawn_agent says what it reserved');
    await eventually('the first job\'s live cost is in the database', async () => (await job(h.hub, first.job_id)).cost_usd > 0, 60_000);
    const shown = await h.call('get_agent', { job_id: first.job_id });
    assert.equal(shown.reservation.reserved_usd, 1);
    assert.ok(near(shown.reservation.left_usd, 1 - shown.cost_usd), `left of the reservation: ${JSON.stringify(shown.reservation)}`);
    assert.match(shown.reservation.basis, /budget_usd/);
    const jobsBefore = await count(h.hub, sql`SELECT COUNT(*) AS c FROM jobs`);

    // worktree: true makes each call await git before it creates its job, so the calls interleave.
    const N = 8;
    const results = await Promise.all(Array.from({ length: N }, (_, i) => h.callRaw('spawn_agent', { prompt: `@script:racer ${i}`, title: `racer ${i}`, cwd: repo, worktree: true, budget_usd: 0.5 })));
    const passed = results.filter((r) => !r.isError).map((r) => JSON.parse(r.text) as { job_id: string; reserved_usd: number });
    const refused = results.filter((r) => r.isError);
    assert.equal(passed.length, 3, results.map((r) => r.text.slice(0, 200)).join('\n'));
    assert.equal(refused.length, N - 3);
    for (const r of refused) {
      assert.match(r.text, /^budget_exceeded: Spawning this agent would exceed the house budget \(budgetUsd \/ OVERSEER_BUDGET_USD\)/);
      assert.match(r.text, /Nothing was started\. Raise it \(budgetUsd in \.overseer\/config\.json or OVERSEER_BUDGET_USD/);
      const f = figures(r.text);
      assert.equal(f.limit, 2.6);
      assert.equal(f.asked, 0.5);
      assert.equal(f.jobs, 4, 'the first job and the 3 that passed hold reservations');
      assert.ok(f.spent > 0, 'the first job\'s live cost counts as spent');
      assert.ok(near(f.spent + f.reserved, 2.5, 1e-4), `spent ${f.spent} + reserved ${f.reserved}: $1 of the first job (spent or still reserved) and 3 × $0.5`);
    }
    // No row of any kind for the refused.
    assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS c FROM jobs`), jobsBefore + 3);
    assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS c FROM events WHERE kind = 'spawned'`), 4);
    assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS c FROM budget_reservations WHERE released_at IS NULL`), 4);
    for (const p of passed) assert.equal(p.reserved_usd, 0.5);
    const listed = (await h.call('list_agents', {})).agents.find((a: any) => a.job_id === passed[0]!.job_id);
    assert.equal(listed.reservation.reserved_usd, 0.5, 'list_agents shows the reservation too');

    // Everyone finishes: each reservation is released and books what its job spent.
    hold.open();
    const ids = [first.job_id, ...passed.map((p) => p.job_id)];
    const w = await h.call('wait_for_agents', { job_ids: ids, timeout_s: 120 });
    for (const d of w.done) assert.equal(d.status, 'succeeded', JSON.stringify(d));
    for (const id of ids) {
      const r = await eventually(`the reservation of ${id} is released`, async () => { const x = await reservation(h.hub, id); return x?.released_at ? x : undefined; });
      assert.ok(near(r.booked_usd!, (await job(h.hub, id)).cost_usd), `booked ${r.booked_usd} = cost ${(await job(h.hub, id)).cost_usd}`);
    }
    const after = await h.call('get_agent', { job_id: first.job_id });
    assert.equal(after.reservation.released, true);
    assert.ok(near(after.reservation.booked_usd, after.cost_usd));
    // Released: $2.6 − what was spent is free again, so a $0.5 spawn passes once more.
    assert.ok((await h.call('spawn_agent', { prompt: '@script:racer again', budget_usd: 0.5 })).job_id);
    hold.open();
  });

  test('a parent\'s budget_usd caps its subtree: the child whose spending crosses it is stopped with failure_class budget, naming the budget and what is left running', { timeout: 180_000 }, async () => {
    const c2go = gate(120_000);
    const h = await hubWith({
      warm: [{ text: 'warmed up' }],
      parent: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:c1 spend a little', title: 'c1' } }] };
        if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:c2 spend more', title: 'c2' } }] };
        if (ctx.step === 2) {
          const ids = ctx.allToolResults.map((r) => (JSON.parse(r.text) as { job_id: string }).job_id);
          return { tools: [{ name: 'mcp__overseer__wait_for_agents', input: { job_ids: ids, timeout_s: 300 } }] };
        }
        if (ctx.step === 3) return finishStep('parent done');
        return { text: 'done' };
      },
      // $0.003 a call (opus 5.5: $4 in, $20 out per 1M): $0.009 in all.
      c1: (ctx) => (ctx.step === 0 ? status('c1 working', { input_tokens: 250, output_tokens: 100 }) : ctx.step === 1 ? { ...finishStep('c1 done'), usage: { input_tokens: 250, output_tokens: 100 } } : { text: 'done', usage: { input_tokens: 250, output_tokens: 100 } }),
      // $0.006 a call, after the test lets it go; 400 ms apart, so each call's cost is written
      // before the next (progress is written at most every 250 ms per job).
      c2: async (ctx) => {
        if (ctx.step === 0) await c2go.wait;
        return ctx.step < 12 ? { ...status(`c2 call ${ctx.step}`, { input_tokens: 500, output_tokens: 200 }), delayMs: 400 } : { text: 'done' };
      },
    });
    cleanups.push(async () => c2go.open());
    // A finished job of the default model: the children's estimate is its median ($0.0008), far below what they spend.
    const warm = (await h.call('spawn_agent', { prompt: '@script:warm' })).job_id;
    await h.call('wait_for_agents', { job_ids: [warm], timeout_s: 60 });
    const parent = (await h.call('spawn_agent', { prompt: '@script:parent', title: 'Budgeted parent', budget_usd: 0.02 })).job_id;
    const kids = await eventually('both children spawned', async () => { const k = (await jobs(h.hub, { parentId: parent, limit: 100 })); return k.length === 2 ? k : undefined; }, 60_000);
    const [c1, c2] = [kids.find((k) => k.title === 'c1')!, kids.find((k) => k.title === 'c2')!];
    const warmCost = (await job(h.hub, warm)).cost_usd;
    const [r1, r2] = [(await reservation(h.hub, c1.id))!, (await reservation(h.hub, c2.id))!];
    assert.ok(near(r1.amount_usd, warmCost), `c1 reserved the median of the finished jobs: ${r1.amount_usd}`);
    assert.ok(r2.amount_usd < 0.005, 'c2 too (with c1 among them if it had finished)');
    await waitForJob(h.hub, c1.id, (j) => j.status === 'succeeded', 60_000);
    c2go.open();
    const stopped = await waitForJob(h.hub, c2.id, (j) => j.status !== 'running' && j.status !== 'queued', 90_000);
    assert.equal(stopped.status, 'failed', stopped.error ?? '');
    assert.equal(stopped.failure_class, 'budget');
    const spent = (await Promise.all([parent, c1.id, c2.id].map((id) => job(h.hub, id)))).reduce((s, j) => s + j.cost_usd, 0);
    assert.ok(spent > 0.02, `the subtree spent ${spent}`);
    assert.ok((await job(h.hub, c2.id)).cost_usd < 0.02, 'c2 alone stayed under $0.02: the subtree\'s budget stopped it');
    assert.match(stopped.error!, new RegExp(`^stopped by the hub: the subtree budget of job ${parent} "Budgeted parent" \\(its budget_usd, covering it and everything it spawns\\) is spent — \\$0\\.0\\d+ of \\$0\\.0200 — and this job's spending \\(${c2.id}\\) crossed it\\.`));
    assert.match(stopped.error!, new RegExp(`Still running under that budget: ${parent} "Budgeted parent" \\(running\\)`));
    const ev = (await events(h.hub, c2.id)).find((e) => e.kind === 'budget_stop');
    assert.ok(ev, 'a budget_stop event');
    assert.deepEqual(JSON.parse(ev.data_json!).left_running, [parent]);
    const got = await h.call('get_agent', { job_id: c2.id });
    assert.equal(got.failure_class, 'budget');
    assert.equal((await job(h.hub, c1.id)).status, 'succeeded', 'c1 did not cross it');
    // The parent goes on past its wait; while its budget stays spent, its next model call stops it too.
    const p = await waitForJob(h.hub, parent, (j) => j.status !== 'running', 90_000);
    assert.ok(['failed', 'succeeded'].includes(p.status), p.status);
    for (const id of [c1.id, c2.id]) assert.ok((await reservation(h.hub, id))!.released_at, `${id}'s reservation is released`);
  });

  test('budgets and reservations survive a hub restart; a label budget refuses by name', { timeout: 180_000 }, async () => {
    const hold = gate(120_000);
    const fake = await startFakeAnthropic({
      scripts: {
        spend: [status('spending', { input_tokens: 1000, output_tokens: 100 }), { text: 'spent' }], // run on haiku: not the default model's median
        hold: async (ctx) => {
          if (ctx.step === 0) return status('holding', { input_tokens: 1000, output_tokens: 100 });
          await hold.wait;
          return { text: 'released' };
        },
        quick: [{ text: 'ok' }],
      },
    });
    const config = { budgetUsd: 1, labelBudgets: { docs: 0.1 } };
    cleanups.push(async () => { hold.open(); await fake.close(); });
    const h1 = await startTestHub({ fake, config });
    const spend = (await h1.call('spawn_agent', { prompt: '@script:spend', model: 'claude-haiku-4-5', budget_usd: 0.1 })).job_id;
    await h1.call('wait_for_agents', { job_ids: [spend], timeout_s: 60 });
    const held = (await h1.call('spawn_agent', { prompt: '@script:hold', budget_usd: 0.3 })).job_id;
    await eventually('the held job spent', async () => (await job(h1.hub, held)).cost_usd > 0, 60_000);
    const waiting = await h1.call('spawn_agent', { prompt: '@script:quick after it', depends_on: [held], budget_usd: 0.4 });
    assert.equal(waiting.status, 'waiting');
    assert.equal(waiting.reserved_usd, 0.4);
    await h1.stop({ keep: true });

    // Between hubs: the database keeps the waiting job's reservation; the interrupted one is released.
    const between = await reopen(h1.hub);
    const rows = await between.db.selectFrom('budget_reservations').select(['job_id', 'amount_usd', 'released_at']).orderBy('reserved_at').execute().finally(() => between.close());
    assert.deepEqual(rows.map((r) => [r.job_id, r.amount_usd, r.released_at === null]), [[spend, 0.1, false], [held, 0.3, false], [waiting.job_id, 0.4, true]]);

    const h2 = await startTestHub({ fake, config, dir: h1.dir });
    cleanups.push(() => h2.stop());
    const spent = (await Promise.all([spend, held].map((id) => job(h2.hub, id)))).reduce((s, j) => s + j.cost_usd, 0);
    const r = await h2.callRaw('spawn_agent', { prompt: '@script:quick', budget_usd: 0.7 });
    assert.equal(r.isError, true);
    const f = figures(r.text);
    assert.deepEqual([f.limit, f.jobs, f.asked], [1, 1, 0.7], r.text);
    assert.ok(near(f.spent, spent, 1e-4), `spent ${f.spent} = what the jobs before the restart spent (${spent})`);
    assert.equal(f.reserved, 0.4, 'the waiting job still holds its reservation');
    // A label's budget refuses by its name, before anything is created.
    const jobs = await count(h2.hub, sql`SELECT COUNT(*) AS c FROM jobs`);
    const l = await h2.callRaw('spawn_agent', { prompt: '@script:quick', labels: ['docs'], budget_usd: 0.2 });
    assert.match(l.text, /^budget_exceeded: Spawning this agent would exceed the budget of label "docs" \(labelBudgets \/ OVERSEER_LABEL_BUDGETS\): limit \$0\.1000; spent \$0\.0000, reserved \$0\.0000 by 0 queued or running job\(s\), asked \$0\.2000/);
    assert.equal(await count(h2.hub, sql`SELECT COUNT(*) AS c FROM jobs`), jobs);
    // What is left of the house budget fits a smaller one.
    const ok = await h2.call('spawn_agent', { prompt: '@script:quick', budget_usd: 0.5 });
    await h2.call('wait_for_agents', { job_ids: [ok.job_id], timeout_s: 60 });
    // Cancelling the waiting job releases what it held.
    await h2.call('cancel_agent', { job_id: waiting.job_id });
    const rel = await eventually('released', async () => { const x = await reservation(h2.hub, waiting.job_id); return x?.released_at ? x : undefined; });
    assert.equal(rel.booked_usd, 0);
  });
});
