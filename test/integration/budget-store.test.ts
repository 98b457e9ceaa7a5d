// Reservations in the state database (src/store/sql/budgets.ts, src/money/budgets.ts) on real
// temp-file databases: what each budget's scope holds (live costs, the hub's own runs, live
// reservations shrinking as their job spends, a subtree's root left out of its own budget),
// release with the booked cost, strays swept, the estimate from finished jobs, the budgets line of
// `overseer status`, and check-and-reserve racing from separate connections in worker threads:
// exactly the allowed number pass — on SQLite and on PostgreSQL (spawn lock: advisory class 2).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { openDb, type Db } from '../../src/store/db.js';
import { openSql, sqlOver, type SqlDb } from '../../src/store/sql/open.js';
import { transact } from '../../src/store/sql/tx.js';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { addUsage } from '../../src/store/sql/usage.js';
import { finishedCostsOf, holdReservation, releaseReservation, reservationOf, strayReservations, useOf } from '../../src/store/sql/budgets.js';
import { BudgetExceededError } from '../../src/errors.js';
import { budgetsOn, budgetsOver, newJob } from '../helpers/budgetDb.js';
import { budgetsLine } from '../../src/cli/status.js';
import { openDialect } from '../helpers/sqlDialect.js';

let dir = '';
let n = 0;
before(() => { dir = mkdtempSync(join(tmpdir(), 'overseer-budgets-')); });
after(() => { rmSync(dir, { recursive: true, force: true }); });
const fresh = (): { db: Db; file: string } => {
  const file = join(dir, `state-${++n}.db`);
  return { db: openDb(file), file };
};
const near = (a: number, b: number): boolean => Math.abs(a - b) < 1e-9;

/** root (budget 5) → child (label tests) → grandchild, and an unrelated finished job, with what each spent. */
async function seedScopes(q: Parameters<typeof insertJob>[0]): Promise<void> {
  await insertJob(q, newJob('j-root', { budget_usd: 5, status: 'running' }), 1);
  await insertJob(q, newJob('j-child', { parent_id: 'j-root', depth: 2, labels_json: '["tests"]', status: 'running' }), 2);
  await insertJob(q, newJob('j-grand', { parent_id: 'j-child', depth: 3, status: 'queued' }), 3);
  await insertJob(q, newJob('j-other', { labels_json: '["tests"]', status: 'succeeded' }), 4);
  await updateJob(q, 'j-root', { cost_usd: 0.5 }, 5);
  await updateJob(q, 'j-child', { cost_usd: 0.25 }, 5);
  await updateJob(q, 'j-other', { cost_usd: 2 }, 5);
}

describe('what a budget\'s scope holds', () => {
  test('a script run\'s budget covers its agents (label run:<id>) and what they spawn; a sub-agent of one reserves under it', async () => {
    const { db } = fresh();
    const { budgets, q } = budgetsOn(db, {}, () => 1_000, (id) => (id === 'r-1' ? { limitUsd: 1, title: 'review' } : undefined));
    await insertJob(q, newJob('j-agent', { labels_json: '["run:r-1"]', status: 'running' }), 1);
    await insertJob(q, newJob('j-sub', { parent_id: 'j-agent', depth: 2, status: 'running' }), 2);
    await insertJob(q, newJob('j-else', { labels_json: '["run:r-2"]', status: 'running' }), 3);
    await updateJob(q, 'j-agent', { cost_usd: 0.25 }, 4);
    await updateJob(q, 'j-sub', { cost_usd: 0.125 }, 4);
    await updateJob(q, 'j-else', { cost_usd: 7 }, 4);
    await holdReservation(q, 'j-sub', 0.5, 0, 'test', 5);
    const use = await useOf(q, { kind: 'run', key: 'r-1' });
    assert.ok(near(use.jobsUsd, 0.375) && near(use.reservedUsd, 0.375) && use.reservedJobs === 1, JSON.stringify(use));
    assert.deepEqual((await budgets.applicable(q, 'j-agent', [])).map((b) => [b.kind, b.key, b.limitUsd]), [['run', 'r-1', 1]], 'a sub-agent of a run\'s agent counts against the run');
    assert.deepEqual(await budgets.applicable(q, null, ['run:r-2']), [], 'a run without budget_usd adds no budget');
    await assert.rejects(transact(q, (trx) => budgets.check(trx, { parentId: 'j-agent', provider: 'claude', model: null, template: null, labels: [], budgetUsd: 0.5 }, 'agent')),
      (e: unknown) => e instanceof BudgetExceededError && /the budget of script run r-1 "review" \(run_script's budget_usd/.test(e.message) && /finish and report that the run's budget is spent/.test(e.message));
  });

  test('house, label and subtree: spent is jobs + the hub\'s runs, reserved is what live jobs have not spent of their reservation', async () => {
    const { db } = fresh();
    const { q } = budgetsOn(db, { budgetUsd: 100, labelBudgets: { tests: 10 } });
    // root (budget 5) → child (label tests) → grandchild; and an unrelated finished job.
    await seedScopes(q);
    await holdReservation(q, 'j-root', 1, 0, 'test', 5);
    await holdReservation(q, 'j-child', 1, 0, 'test', 5);
    await holdReservation(q, 'j-grand', 0.75, 0, 'test', 5);
    await holdReservation(q, 'j-other', 3, 0, 'test', 5); // settled: its reservation counts for nothing
    await addUsage(q, { jobId: 'j-child', kind: 'diagnosis', usage: { costUsd: 0.125, tokens: { input: 1, output: 1 } }, now: 6 });
    await addUsage(q, { jobId: null, kind: 'triage', usage: { costUsd: 0.0625, tokens: { input: 1, output: 1 } }, now: 6 });

    const house = await useOf(q, { kind: 'house', key: 'house' });
    assert.ok(near(house.jobsUsd, 2.75), `house jobs ${house.jobsUsd}`);
    assert.ok(near(house.hubUsd, 0.1875), 'the house counts hub runs that served no job too');
    // root: 1 - 0.5; child: 1 - 0.25; grand: 0.75; other: settled.
    assert.ok(near(house.reservedUsd, 0.5 + 0.75 + 0.75), `house reserved ${house.reservedUsd}`);
    assert.equal(house.reservedJobs, 3);

    const label = await useOf(q, { kind: 'label', key: 'tests' });
    assert.ok(near(label.jobsUsd, 2.25) && near(label.hubUsd, 0.125) && near(label.reservedUsd, 0.75) && label.reservedJobs === 1, JSON.stringify(label));

    const sub = await useOf(q, { kind: 'subtree', key: 'j-root' });
    assert.ok(near(sub.jobsUsd, 0.75) && near(sub.hubUsd, 0.125), JSON.stringify(sub));
    assert.ok(near(sub.reservedUsd, 0.75 + 0.75) && sub.reservedJobs === 2, `the root's own reservation is not in its subtree budget: ${JSON.stringify(sub)}`);

    // A job that spent more than it reserved holds nothing more (never a negative reservation).
    await updateJob(q, 'j-child', { cost_usd: 3 }, 7);
    assert.ok(near((await useOf(q, { kind: 'subtree', key: 'j-root' })).reservedUsd, 0.75));
    db.close();
  });

  test('release books what the job spent since its reservation; a resumed job reserves again from its cost then; strays are swept', async () => {
    const { db } = fresh();
    const { budgets, q } = budgetsOn(db, { budgetUsd: 10 });
    await insertJob(q, newJob('j-a', { status: 'running' }), 1);
    await holdReservation(q, 'j-a', 1, 0, 'test', 1);
    await updateJob(q, 'j-a', { cost_usd: 0.4, status: 'succeeded' }, 2);
    assert.equal(await releaseReservation(q, 'j-a', 3), true);
    assert.equal(await releaseReservation(q, 'j-a', 4), false, 'released once');
    const r = (await reservationOf(q, 'j-a'))!;
    assert.equal(r.released_at, 3);
    assert.ok(near(r.booked_usd!, 0.4));
    // Resumed: reserved again with its cost so far as the base.
    await updateJob(q, 'j-a', { status: 'queued' }, 5);
    await holdReservation(q, 'j-a', 0.5, 0.4, 'again', 5);
    assert.ok(near((await useOf(q, { kind: 'house', key: 'house' })).reservedUsd, 0.5));
    await updateJob(q, 'j-a', { cost_usd: 0.6 }, 6);
    assert.ok(near((await useOf(q, { kind: 'house', key: 'house' })).reservedUsd, 0.3), 'what it spends after the resume counts against the new reservation');
    // Settled while no hub listened (reconcile): swept at start.
    await updateJob(q, 'j-a', { status: 'interrupted' }, 7);
    assert.deepEqual(await strayReservations(q), ['j-a']);
    await budgets.sweep();
    assert.deepEqual(await strayReservations(q), []);
    assert.ok(near((await reservationOf(q, 'j-a'))!.booked_usd!, 0.2));
    db.close();
  });

  test('the estimate: the median of finished jobs of the model (and template), unfinished and unpriced ones left out, capped by budget_usd', async () => {
    const { db } = fresh();
    const { budgets, q } = budgetsOn(db, { budgetUsd: 10 });
    const finished = async (id: string, cost: number, over: Parameters<typeof newJob>[1] = {}): Promise<void> => {
      await insertJob(q, newJob(id, { model: 'claude-sonnet-4-5', status: 'succeeded', ...over }), 1);
      await updateJob(q, id, { cost_usd: cost, turns: 3, ended_at: 2 }, 2);
    };
    const spec = { provider: 'claude', model: 'claude-sonnet-4-5', template: null, budgetUsd: null };
    const typical = await budgets.estimate(spec);
    assert.ok(near(typical.usd, (250_000 * 3 + 25_000 * 15) / 1e6), `before any finished: a typical job at sonnet 4.5 prices (${typical.usd})`);
    await finished('j-1', 0.2);
    await finished('j-2', 0.6, { status: 'failed' });
    await finished('j-3', 0.4);
    await finished('j-4', 9, { status: 'cancelled' });
    await finished('j-5', 9, { model: 'claude-haiku-4-5' });
    await finished('j-6', 0.3, { template: 'tests' });
    await updateJob(q, 'j-6', { cost_unknown: 1 }, 3);
    assert.equal((await budgets.estimate(spec)).usd, 0.4, 'median of 0.2, 0.6, 0.4 (cancelled, other model and unpriced left out)');
    await finished('j-7', 0.1, { template: 'tests' });
    assert.equal((await budgets.estimate({ ...spec, template: 'tests' })).usd, 0.1, 'the template\'s own jobs first');
    assert.ok(near((await budgets.estimate({ ...spec, template: 'other' })).usd, 0.3), 'an unknown template: the model\'s jobs (0.2, 0.6, 0.4, 0.1)');
    assert.equal((await budgets.estimate({ ...spec, budgetUsd: 0.05 })).usd, 0.05);
    assert.equal((await budgets.estimate({ ...spec, model: null })).usd, 2, 'the unnamed default model: the flat fallback');
    db.close();
  });

  test('check refuses over a budget with the numbers and writes nothing; no applicable budget reserves nothing', async () => {
    const { db } = fresh();
    const { budgets, q } = budgetsOn(db, { labelBudgets: { tests: 1 } });
    assert.equal(await transact(q, (trx) => budgets.check(trx, { parentId: null, provider: 'claude', model: null, template: null, labels: ['other'], budgetUsd: null }, 'lead')), undefined);
    await insertJob(q, newJob('j-a', { labels_json: '["tests"]', status: 'running' }), 1);
    await updateJob(q, 'j-a', { cost_usd: 0.7 }, 1);
    let err: unknown;
    try {
      await transact(q, (trx) => budgets.check(trx, { parentId: null, provider: 'claude', model: null, template: null, labels: ['tests'], budgetUsd: 0.5 }, 'lead'));
    } catch (e) { err = e; }
    assert.ok(err instanceof BudgetExceededError);
    assert.equal(err.code, 'budget_exceeded');
    assert.match(err.message, /budget of label "tests".*limit \$1\.0000; spent \$0\.7000, reserved \$0\.0000 by 0 queued or running job\(s\), asked \$0\.5000/);
    assert.deepEqual(err.details.budget, { kind: 'label', key: 'tests', limit_usd: 1, spent_usd: 0.7, hub_usd: 0, reserved_usd: 0, reserved_jobs: 0 });
    assert.equal(err.details.asked_usd, 0.5);
    assert.equal((db.prepare('SELECT COUNT(*) AS c FROM budget_reservations').get() as { c: number }).c, 0);
    db.close();
  });
});

describe('overseer status', () => {
  test('under the totals: each configured budget with what is spent, reserved and left; nothing without budgets; an old database says so', async () => {
    const { db } = fresh();
    const { q } = budgetsOn(db);
    await insertJob(q, newJob('j-a', { labels_json: '["tests"]', status: 'running' }), 1);
    await updateJob(q, 'j-a', { cost_usd: 1.25 }, 1);
    await holdReservation(q, 'j-a', 2, 0, 'test', 1);
    assert.equal(await budgetsLine(sqlOver(db).db, { labelBudgets: {} }), undefined);
    assert.equal(await budgetsLine(sqlOver(db).db, { budgetUsd: 10, labelBudgets: { tests: 1, docs: 2 } }),
      'budgets: house $10.00: $1.25 spent, $0.75 reserved, $8.00 left · label tests $1.00: $1.25 spent, $0.75 reserved, $0.00 left · label docs $2.00: $0.00 spent, $0.00 reserved, $2.00 left');
    db.exec('DROP TABLE budget_reservations');
    assert.match((await budgetsLine(sqlOver(db).db, { budgetUsd: 10, labelBudgets: {} }))!, /^budgets: \(not readable here: no such table: budget_reservations\)$/);
    db.close();
  });
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`the budget decisions on ${dialect}, through the layer`, () => {
    const open = (t: { after: (fn: () => Promise<void> | void) => void }) => openDialect(dialect, t);

    test('house, label and subtree: what each scope spent and holds; release books once; strays', async (t) => {
      const { s } = await open(t);
      const q = s.db;
      const { budgets } = budgetsOver(s, { budgetUsd: 100, labelBudgets: { tests: 10 } });
      await seedScopes(q);
      for (const [id, usd] of [['j-root', 1], ['j-child', 1], ['j-grand', 0.75], ['j-other', 3]] as const) await holdReservation(q, id, usd, 0, 'test', 5);
      await addUsage(q, { jobId: 'j-child', kind: 'diagnosis', usage: { costUsd: 0.125, tokens: { input: 1, output: 1 } }, now: 6 });
      await addUsage(q, { jobId: null, kind: 'triage', usage: { costUsd: 0.0625, tokens: { input: 1, output: 1 } }, now: 6 });
      const house = await useOf(q, { kind: 'house', key: 'house' });
      assert.ok(near(house.jobsUsd, 2.75) && near(house.hubUsd, 0.1875) && near(house.reservedUsd, 2) && house.reservedJobs === 3, JSON.stringify(house));
      const label = await useOf(q, { kind: 'label', key: 'tests' });
      assert.ok(near(label.jobsUsd, 2.25) && near(label.hubUsd, 0.125) && near(label.reservedUsd, 0.75) && label.reservedJobs === 1, JSON.stringify(label));
      const sub = await useOf(q, { kind: 'subtree', key: 'j-root' });
      assert.ok(near(sub.jobsUsd, 0.75) && near(sub.hubUsd, 0.125) && near(sub.reservedUsd, 1.5) && sub.reservedJobs === 2, JSON.stringify(sub));
      assert.deepEqual((await budgets.applicable(q, 'j-grand', ['tests'])).map((b) => [b.kind, b.key]), [['subtree', 'j-root'], ['label', 'tests'], ['house', 'house']]);
      assert.deepEqual(await strayReservations(q), ['j-other']);
      await updateJob(q, 'j-other', { cost_usd: 2.5 }, 7);
      assert.equal(await releaseReservation(q, 'j-other', 8), true);
      assert.equal(await releaseReservation(q, 'j-other', 9), false, 'released once');
      assert.ok(near((await reservationOf(q, 'j-other'))!.booked_usd!, 2.5));
      // The estimate reads finished jobs of the same model on both databases (model NULL matches NULL).
      await insertJob(q, newJob('j-done', { status: 'succeeded' }), 10);
      await updateJob(q, 'j-done', { cost_usd: 0.3, turns: 2, ended_at: 11 }, 11);
      assert.deepEqual(await finishedCostsOf(q, 10, 'claude', null), [0.3]);
      assert.deepEqual(await finishedCostsOf(q, 10, 'claude', null, null), [0.3]);
    });

    test('a job that ends while a check reads is counted once: reserved before, spent after (one snapshot)', async (t) => {
      const { s, home, url } = await open(t);
      const other = await openSql({ home, databaseUrl: url });
      t.after(() => other.close());
      await insertJob(s.db, newJob('j-flip', { status: 'running' }), 1);
      await holdReservation(s.db, 'j-flip', 0.2, 0, 'test', 1);
      // Another connection ends the job (its cost booked with its status, as an attempt's end does) and
      // starts it again, over and over; every read of the house must see 0.2 in one place or the other.
      let flipping = true;
      const flips = (async () => {
        for (let i = 0; i < 300; i++) {
          await transact(other.db, (trx) => updateJob(trx, 'j-flip', { cost_usd: 0.2, status: 'succeeded' }, 2));
          await transact(other.db, (trx) => updateJob(trx, 'j-flip', { cost_usd: 0, status: 'running' }, 3));
        }
        flipping = false;
      })();
      const seen: number[] = [];
      let reads = 0;
      while (flipping) {
        const u = await useOf(s.db, { kind: 'house', key: 'house' });
        reads++;
        if (!near(u.jobsUsd + u.reservedUsd, 0.2)) seen.push(u.jobsUsd + u.reservedUsd);
      }
      await flips;
      assert.ok(reads > 20, `the reads ran alongside the flips (${reads})`);
      assert.deepEqual(seen, [], `of ${reads} reads, these saw the job nowhere or twice`);
    });

    test('8 workers, each with its own connection, race for a house budget that allows 3: exactly 3 pass', { timeout: 90_000 }, async (t) => {
      const { s, home, url } = await open(t);
      const q = s.db;
      // Nearly exhausted: a running job has spent 0.3 of its 1.0 reservation; 1.0 + 3 × 0.5 = 2.5.
      await insertJob(q, newJob('j-first', { status: 'running' }), 1);
      await holdReservation(q, 'j-first', 1, 0, 'test', 1);
      await updateJob(q, 'j-first', { cost_usd: 0.3 }, 1);
      const start = new SharedArrayBuffer(4);
      const racer = pathToFileURL(join(import.meta.dirname, '..', 'helpers', 'budgetRacer.ts')).href;
      const code = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(racer)}); });`;
      const N = 8;
      const workers = Array.from({ length: N }, (_, i) => new Worker(code, { eval: true, workerData: { home, url, id: `j-race-${i}`, houseUsd: 2.6, askUsd: 0.5, start } }));
      const results: { id: string; passed: boolean; error: string }[] = [];
      const exited = workers.map((w) => new Promise((r) => w.on('exit', r)));
      await Promise.all(workers.map((w) => new Promise<void>((resolve, reject) => {
        let ready = false;
        w.on('message', (m: { ready?: boolean; id?: string; passed?: boolean; error?: string }) => {
          if (m.ready) { ready = true; resolve(); } else results.push(m as { id: string; passed: boolean; error: string });
        });
        w.on('error', reject);
        w.on('exit', (c) => { if (!ready) reject(new Error(`worker exited ${c} before it was ready`)); });
      })));
      Atomics.store(new Int32Array(start), 0, 1);
      Atomics.notify(new Int32Array(start), 0);
      await Promise.all(exited);
      assert.equal(results.length, N);
      const passed = results.filter((r) => r.passed);
      assert.equal(passed.length, 3, JSON.stringify(results));
      for (const r of results.filter((x) => !x.passed)) assert.match(r.error, /house budget .*limit \$2\.6000; spent \$0\.3000, reserved \$2\.2000 by 4 queued or running job\(s\), asked \$0\.5000/);
      const rows = await q.selectFrom('jobs').select('id').where('id', 'like', 'j-race-%').execute();
      assert.equal(rows.length, 3, 'a refused spawn left no row');
      assert.equal((await q.selectFrom('budget_reservations').select('job_id').execute()).length, 4);
    });
  });
}
