// Benchmark 20: what the house budget costs a spawn (docs/budgets.md). Two in-process hubs in
// one run, each seeded with the same 2,000 finished jobs (half of them labelled `bench`) and 32
// live jobs holding reservations, children run by the fake agent binary: one without budgets,
// one with a house budget and a `bench` label budget (large enough never to refuse). Measured,
// interleaved: spawn_agent call → reply in the lead client (50 spawns each, one at a time, each
// job ended before the next spawn); and inside the hub with budgets on, the check-and-reserve
// transaction against a bare job insert, and the mid-run check a running job's progress costs
// (spent of its house, label and subtree budgets).
// Run alone: node --import tsx bench/budget.ts
import { performance } from 'node:perf_hooks';
import { awaitJob, f1, f2, fixture, out, runAlone, startBenchHub, statLine, stats, type BenchHub, type Stats } from './common.js';
import type { NewJob } from '../src/store/jobs.js';
import { transact, type Q } from '../src/store/sql/tx.js';
import { insertJob, updateJob } from '../src/store/sql/jobs.js';
import { sql } from 'kysely';
import { spentIn } from '../src/store/sql/budgets.js';

const RUNS = 50;
const WARMUP = 3;
const FINISHED = 2000;
const LIVE = 32;
const INNER = 2000;

export interface BudgetBenchResult {
  off: Stats;
  on: Stats;
  ratioP50: number;
  /** check + hold + insert in one transaction (µs), and a bare insert transaction (µs). */
  reserveUs: Stats;
  insertUs: Stats;
  /** One progress event's budget check: spent of the house, a label and a subtree (µs). */
  progressUs: Stats;
  finished: number;
  live: number;
}

function row(id: string, over: Partial<NewJob> = {}): NewJob {
  return {
    id, parent_id: null, depth: 1, title: `seed ${id}`, prompt: 'seed', provider: 'claude', model: null, cwd: '/tmp', work_dir: '/tmp', repo_root: null,
    worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
    checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'succeeded', session_id: `s-${id}`, token_hash: null,
    workflow_id: null, phase: null, cycle: null, json_schema: null, ...over,
  };
}

/** The same history in every hub: finished jobs with costs (the estimate's median), and live ones holding reservations. */
async function seed(h: BenchHub): Promise<void> {
  await transact(h.hub.ctx.sql.db, async (trx) => {
    for (let i = 0; i < FINISHED; i++) {
      const id = `j-seed${i}`;
      await insertJob(trx, row(id, { labels_json: i % 2 ? '["bench"]' : '[]' }), i);
      await updateJob(trx, id, { cost_usd: 0.01 + (i % 97) / 1000, turns: 5, ended_at: 1_000 + i }, 1_000 + i);
    }
    for (let i = 0; i < LIVE; i++) {
      const id = `j-live${i}`;
      // 'waiting' on a job that never ends: live, holding a reservation, never dispatched.
      await insertJob(trx, row(id, { status: 'waiting', labels_json: '["bench"]', depends_on_json: '["j-seed0"]' }), 5_000 + i);
      await sql`INSERT INTO budget_reservations (job_id, amount_usd, base_cost_usd, basis, reserved_at) VALUES (${id}, ${0.05}, ${0}, ${'seed'}, ${5_000 + i})`.execute(trx);
    }
  });
}

const us = (t0: number): number => (performance.now() - t0) * 1000;

export async function benchBudget(): Promise<BudgetBenchResult> {
  const bin = fixture('fake-agent.sh');
  const off = await startBenchHub({ claudeBin: bin, config: { maxAgents: 8 } });
  const on = await startBenchHub({ claudeBin: bin, config: { maxAgents: 8, budgetUsd: 1_000_000, labelBudgets: { bench: 1_000_000 } } });
  try {
    await seed(off);
    await seed(on);
    const lat = { off: [] as number[], on: [] as number[] };
    for (let i = -WARMUP; i < RUNS; i++) {
      for (const [name, h] of [['off', off], ['on', on]] as const) {
        const t0 = performance.now();
        const r = await h.call<{ job_id: string; reserved_usd?: number }>('spawn_agent', { prompt: `bench budget ${i}`, title: `budget ${i}`, labels: ['bench'] });
        const dt = performance.now() - t0;
        if (name === 'on' && r.reserved_usd === undefined) throw new Error('the hub with budgets reserved nothing');
        await awaitJob(h, r.job_id);
        if (i >= 0) lat[name].push(dt);
      }
    }

    // Inside the hub with budgets: check + hold with the job's insert, against the insert alone;
    // each transaction rolled back, so the tables stay as seeded.
    const { ctx, budgets } = on.hub;
    const reserve: number[] = [];
    const insert: number[] = [];
    const spec = { parentId: null, provider: 'claude', model: null, template: null, labels: ['bench'], budgetUsd: null };
    const undo = new Error('roll back');
    const rolledBack = async (fn: (trx: Q) => Promise<void>): Promise<void> => {
      try { await transact(ctx.sql.db, async (trx) => { await fn(trx); throw undo; }); } catch (err) { if (err !== undo) throw err; }
    };
    for (let i = 0; i < INNER; i++) {
      let t0 = performance.now();
      await rolledBack(async (trx) => {
        const r = await budgets.check(trx, spec, 'lead');
        await insertJob(trx, row('j-bench', { status: 'queued', labels_json: '["bench"]' }), 9_000);
        if (r) await budgets.hold(trx, 'j-bench', r, 9_000);
      });
      reserve.push(us(t0));
      t0 = performance.now();
      await rolledBack((trx) => insertJob(trx, row('j-bench', { status: 'queued', labels_json: '["bench"]' }), 9_000));
      insert.push(us(t0));
    }
    // A running job's progress: spent of its three budgets (a subtree of one parent and 10 children).
    await transact(ctx.sql.db, async (trx) => {
      await insertJob(trx, row('j-parent', { status: 'running', budget_usd: 100 }), 9_500);
      for (let i = 0; i < 10; i++) await insertJob(trx, row(`j-kid${i}`, { parent_id: 'j-parent', depth: 2, status: 'running' }), 9_500);
    });
    const progress: number[] = [];
    for (let i = 0; i < INNER; i++) {
      const t0 = performance.now();
      for (const b of [{ kind: 'house', key: 'house' }, { kind: 'label', key: 'bench' }, { kind: 'subtree', key: 'j-parent' }] as const) await spentIn(ctx.sql.db, b);
      progress.push(us(t0));
    }

    const r: BudgetBenchResult = {
      off: stats(lat.off), on: stats(lat.on), ratioP50: stats(lat.on).p50 / stats(lat.off).p50,
      reserveUs: stats(reserve), insertUs: stats(insert), progressUs: stats(progress), finished: FINISHED, live: LIVE,
    };
    out(
      `(${FINISHED} finished jobs, ${LIVE} live reservations in each hub; ${RUNS} spawns each, interleaved)\n` +
        statLine('spawn_agent → reply, no budgets', r.off) +
        statLine('spawn_agent → reply, house + label budget', r.on) +
        `ratio budgets on / off (p50): ${f2(r.ratioP50)}  (+${f1(r.on.p50 - r.off.p50)} ms)\n` +
        statLine('check + reserve + insert, one transaction', r.reserveUs, 'µs') +
        statLine('insert alone, one transaction', r.insertUs, 'µs') +
        statLine('a running job\'s progress: spent of 3 budgets', r.progressUs, 'µs'),
    );
    return r;
  } finally {
    await off.stop();
    await on.stop();
  }
}

runAlone(import.meta.url, benchBudget);
