// The house budget's pure core (src/money/budget.ts): which budgets apply to a job, the
// estimate (median of finished jobs, its fallbacks and the job's own cap), the decision with
// its numbers, and the words of a refusal and of a job stopped mid-run.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applicableBudgets, crossedMessage, estimateCost, isCrossed, median, refusalMessage, refusals, spentOf, wouldExceed,
  UNPRICED_MODEL_USD, type BudgetState,
} from '../../src/money/budget.js';

const state = (o: Partial<BudgetState> & Pick<BudgetState, 'kind' | 'key' | 'limitUsd'>): BudgetState => ({ jobsUsd: 0, hubUsd: 0, reservedUsd: 0, reservedJobs: 0, ...o });

describe('applicableBudgets', () => {
  test('nearest budgeted ancestor first, then labels with a budget (once each), then the house; unbudgeted ancestors and labels add nothing', () => {
    const refs = applicableBudgets({
      houseUsd: 50,
      labelBudgets: { tests: 5, docs: 1.5 },
      labels: ['tests', 'misc', 'tests'],
      ancestors: [{ id: 'j-parent', title: 'Parent', budget_usd: 2 }, { id: 'j-mid', title: 'Mid', budget_usd: null }, { id: 'j-root', title: 'Root', budget_usd: 10 }],
    });
    assert.deepEqual(refs.map((r) => [r.kind, r.key, r.limitUsd]), [['subtree', 'j-parent', 2], ['subtree', 'j-root', 10], ['label', 'tests', 5], ['house', 'house', 50]]);
    assert.equal(refs[0]!.title, 'Parent');
  });

  test('no house budget, no labelled budget, no budgeted ancestor: nothing applies', () => {
    assert.deepEqual(applicableBudgets({ labelBudgets: {}, labels: ['x'], ancestors: [{ id: 'j-1', title: 't', budget_usd: null }] }), []);
  });

  test('a house budget of 0 applies (and refuses everything); a label named like an Object property is not a budget', () => {
    const refs = applicableBudgets({ houseUsd: 0, labelBudgets: {}, labels: ['constructor', 'toString'], ancestors: [] });
    assert.deepEqual(refs.map((r) => r.kind), ['house']);
    assert.equal(wouldExceed(state({ ...refs[0]!, jobsUsd: 0 }), 0.01), true);
  });
});

describe('median', () => {
  test('odd, even, one, none; order does not matter', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.equal(median([0.7]), 0.7);
    assert.equal(median([]), undefined);
    assert.equal(median([10, 0.1, 0.2]), 0.2, 'an outlier does not move it');
  });
});

describe('estimateCost', () => {
  const base = { provider: 'claude', model: 'claude-sonnet-4-5', template: 'tests', sameModelAndTemplate: [] as number[], sameModel: [] as number[], typicalUsd: 1.125 };

  test('the median of finished jobs of the same model and template comes first', () => {
    const e = estimateCost({ ...base, sameModelAndTemplate: [0.2, 0.4, 0.3], sameModel: [5, 5, 5] });
    assert.equal(e.usd, 0.3);
    assert.match(e.basis, /median of 3 finished claude claude-sonnet-4-5 job\(s\) of template tests/);
  });

  test('no finished job of that template: the same model with any template', () => {
    const e = estimateCost({ ...base, sameModel: [0.5, 0.9] });
    assert.equal(e.usd, 0.7);
    assert.match(e.basis, /median of 2 finished claude claude-sonnet-4-5 job\(s\)$/);
  });

  test('a job without a template uses the same model\'s jobs (its own template group is not asked)', () => {
    const e = estimateCost({ ...base, template: null, sameModelAndTemplate: [9], sameModel: [0.25] });
    assert.equal(e.usd, 0.25);
  });

  test('nothing like it finished yet: a typical job at the model\'s price; an unpriced or unnamed model: the flat fallback', () => {
    const priced = estimateCost(base);
    assert.equal(priced.usd, 1.125);
    assert.match(priced.basis, /no finished claude claude-sonnet-4-5 job yet: a typical job \(250k input, 25k output tokens\) at its price/);
    const unpriced = estimateCost({ ...base, model: null, typicalUsd: null });
    assert.equal(unpriced.usd, UNPRICED_MODEL_USD);
    assert.match(unpriced.basis, /claude \(default model\) job yet and no price known/);
  });

  test('never more than the job\'s own budget_usd, which caps it and all it spawns; never below 0', () => {
    const capped = estimateCost({ ...base, capUsd: 0.5 });
    assert.equal(capped.usd, 0.5);
    assert.match(capped.basis, /^its budget_usd \(no finished .*: \$1\.1250\)$/);
    assert.equal(estimateCost({ ...base, capUsd: 5 }).usd, 1.125, 'a cap above the estimate changes nothing');
    assert.equal(estimateCost({ ...base, capUsd: -0.2 }).usd, 0, 'a resumed job past its budget reserves nothing');
  });
});

describe('the decision', () => {
  test('spent (jobs + hub runs) + reserved + asked must stay within the limit; exactly at the limit passes', () => {
    const s = state({ kind: 'house', key: 'house', limitUsd: 2, jobsUsd: 0.4, hubUsd: 0.1, reservedUsd: 1 });
    assert.equal(spentOf(s), 0.5);
    assert.equal(wouldExceed(s, 0.5), false, '0.5 + 1 + 0.5 = 2: at the limit');
    assert.equal(wouldExceed(s, 0.5000001), true);
    // 0.1 + 0.2 style float sums at the limit are not a refusal.
    assert.equal(wouldExceed(state({ kind: 'house', key: 'house', limitUsd: 0.3, jobsUsd: 0.1, reservedUsd: 0.2 }), 0), false);
  });

  test('refusals lists every budget the reservation would exceed, nearest first', () => {
    const states = [
      state({ kind: 'subtree', key: 'j-p', limitUsd: 1, jobsUsd: 0.9 }),
      state({ kind: 'label', key: 'tests', limitUsd: 10 }),
      state({ kind: 'house', key: 'house', limitUsd: 3, jobsUsd: 2, reservedUsd: 0.8, reservedJobs: 2 }),
    ];
    assert.deepEqual(refusals(states, 0.3).map((s) => s.key), ['j-p', 'house']);
    assert.deepEqual(refusals(states, 0.1), []);
  });

  test('crossed: what was spent is past the limit (reservations never stop a running job)', () => {
    assert.equal(isCrossed({ kind: 'house', key: 'house', limitUsd: 1, jobsUsd: 0.9, hubUsd: 0.05 }), false);
    assert.equal(isCrossed({ kind: 'house', key: 'house', limitUsd: 1, jobsUsd: 0.9, hubUsd: 0.11 }), true, 'the hub\'s own runs count');
    assert.equal(isCrossed({ kind: 'house', key: 'house', limitUsd: 1, jobsUsd: 1, hubUsd: 0 }), false, 'at the limit is not past it');
  });
});

describe('the words', () => {
  test('a refusal names the budget, its limit, spent, reserved and asked, the total over, and what the lead can do', () => {
    const house = state({ kind: 'house', key: 'house', limitUsd: 2.6, jobsUsd: 1.0004, hubUsd: 0.05, reservedUsd: 1.2, reservedJobs: 3 });
    const m = refusalMessage([house], { usd: 0.5, basis: 'its budget_usd' }, 'lead');
    assert.match(m, /^Spawning this agent would exceed the house budget \(budgetUsd \/ OVERSEER_BUDGET_USD\): limit \$2\.6000; spent \$1\.0504 \(of which \$0\.0500 by the hub's diagnosis\/triage runs\), reserved \$1\.2000 by 3 queued or running job\(s\), asked \$0\.5000 \(its budget_usd\) — \$2\.7504 in all, \$0\.1504 over\. Nothing was started\./);
    assert.match(m, /Raise it \(budgetUsd in \.overseer\/config\.json or OVERSEER_BUDGET_USD.*\), wait for running jobs to end \(each releases what it reserved\), cancel some \(cancel_agent\), or pass a smaller budget_usd/);
  });

  test('an agent refused by its parent\'s subtree budget is told to do the work itself or report back, and the other budgets it would exceed are named', () => {
    const sub = state({ kind: 'subtree', key: 'j-abc', title: 'Parent', limitUsd: 0.02, jobsUsd: 0.019 });
    const lab = state({ kind: 'label', key: 'tests', limitUsd: 0.01, jobsUsd: 0.01 });
    const m = refusalMessage([sub, lab], { usd: 0.002, basis: 'median of 4 finished claude (default model) job(s)' }, 'agent');
    assert.match(m, /would exceed the subtree budget of job j-abc "Parent" \(its budget_usd, covering it and everything it spawns\): limit \$0\.0200/);
    assert.match(m, /It would also exceed the budget of label "tests"/);
    assert.match(m, /Do the work yourself/);
    assert.doesNotMatch(m, /config\.json/, 'an agent cannot change the configuration');
  });

  test('a resume says so', () => {
    const m = refusalMessage([state({ kind: 'label', key: 'x', limitUsd: 0 })], { usd: 0.1, basis: 'b' }, 'lead', 'resuming this job');
    assert.match(m, /^Resuming this job would exceed the budget of label "x"/);
  });

  test('a job stopped mid-run: which budget, what was spent of it, and what is left running under it (capped)', () => {
    const left = Array.from({ length: 12 }, (_, i) => ({ id: `j-${i}`, title: `job ${i}`, status: i ? 'running' : 'queued' }));
    const m = crossedMessage({ kind: 'subtree', key: 'j-p', title: 'Parent', limitUsd: 0.02, jobsUsd: 0.021, hubUsd: 0 }, 'j-c2', left);
    assert.match(m, /^stopped by the hub: the subtree budget of job j-p "Parent" .* is spent — \$0\.0210 of \$0\.0200 — and this job's spending \(j-c2\) crossed it\./);
    assert.match(m, /Still running under that budget: j-0 "job 0" \(queued\), j-1 "job 1" \(running\)/);
    assert.match(m, /and 2 more\./);
    const alone = crossedMessage({ kind: 'house', key: 'house', limitUsd: 1, jobsUsd: 1.5, hubUsd: 0 }, 'j-x', []);
    assert.match(alone, /Nothing else is running under that budget\./);
  });
});
