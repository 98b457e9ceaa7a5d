// End-to-end: model auto-choice (docs/models.md) with real claude children on the fake model.
// A job spawned with model "auto" is classified just before its first attempt by a one-shot
// claude run on the small classifier model (structured output); the child then runs on the
// model mapped from the tier, the choice and its reason are on the job, in its events and in
// get_agent, the classifier's cost is a usage row of the job that the usage report and the
// house budget count, the spawn's reservation (the dearest candidate) is lowered to the chosen
// model's estimate, and a retry keeps the model without classifying again. A classification
// that times out falls back to the configured default with the reason recorded; a job cancelled
// while it classifies never starts. "auto" for a provider without tiers is refused before
// anything is created.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { scriptedHubs } from '../helpers/scripted.js';
import { waitForJob } from '../helpers/wait.js';
import type { StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { usageReport } from '../../src/money/usageReport.js';
import { spentIn } from '../../src/store/sql/budgets.js';
import { ToolError } from '../helpers/hub.js';
import { events } from '../helpers/state.js';

const { hubWith } = scriptedHubs();

const near = (a: number, b: number): boolean => Math.abs(a - b) < 1e-9;
/** The classifier's request: our prompts/model-classify.md, with the task inside it. */
const isClassifier = (ctx: StepContext): boolean => ctx.prompt.includes('Decide which model tier');
/** claude-haiku-4-5: $1 in, $5 out per 1M tokens. */
const CLASSIFIER_COST = (700 * 1 + 40 * 5) / 1e6;

describe('model auto-choice', () => {
  test('auto model choice recorded with its reason: the classifier runs on the small model, the child on the mapped one, its cost counts; a retry keeps the model', async () => {
    const h = await hubWith({
      work: (ctx) => {
        if (isClassifier(ctx)) return { tools: [{ name: 'StructuredOutput', input: { tier: 'medium', reason: 'a focused change in a few files' } }], usage: { input_tokens: 700, output_tokens: 40 } };
        // The first attempt fails at its first call; the retry succeeds.
        if (!ctx.prompt.includes('Previous attempt')) return { error: { status: 400, message: 'scripted failure' } };
        return { text: 'done' };
      },
    }, { budgetUsd: 50, defaultModel: 'auto' });
    // No model named: the configured default "auto" applies.
    const spawned = await h.call('spawn_agent', { prompt: '@script:work add a --verbose flag to the CLI', retry: 'same' });
    // Before the model is known the reservation covers the dearest model auto may give it: the
    // fallback (the CLI's default, no known price: the $2 fallback) is dearer than opus-4-5's $1.875.
    assert.equal(spawned.reserved_usd, 2);
    const id = spawned.job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);

    const a = await h.call('get_agent', { job_id: id, events: true });
    assert.equal(a.model, 'claude-sonnet-4-5', 'medium maps to sonnet');
    assert.equal(a.model_choice.tier, 'medium');
    assert.equal(a.model_choice.reason, 'a focused change in a few files');
    assert.equal(a.model_choice.fallback, false);
    assert.equal(a.model_choice.classifier_model, 'claude-haiku-4-5');
    assert.equal(typeof a.model_choice.duration_ms, 'number');
    assert.ok(near(a.model_choice.cost_usd, CLASSIFIER_COST), `choice cost ${a.model_choice.cost_usd}`);
    assert.equal(a.attempts.length, 2, 'the first attempt failed and was retried');

    // Requests: exactly one classification, on the small model; every request of the child on sonnet.
    const mine = h.fake.requests.filter((r) => r.script === 'work');
    const cls = mine.filter((r) => String(r.body.messages?.[0]?.content?.at?.(-1)?.text ?? r.body.messages?.[0]?.content).includes('Decide which model tier'));
    assert.equal(cls.length, 1, 'classified once: the retry kept the model');
    assert.equal(cls[0]!.body.model, 'claude-haiku-4-5');
    const child = mine.filter((r) => !cls.includes(r));
    assert.ok(child.length >= 2, `both attempts called the model (${child.length})`);
    assert.deepEqual([...new Set(child.map((r) => r.body.model))], ['claude-sonnet-4-5']);

    // The classifier's usage row is the job's and counts in its total, the report and the house budget.
    const c = a.hub_usage.filter((u: any) => u.kind === 'classification');
    assert.equal(c.length, 1, JSON.stringify(a.hub_usage));
    assert.deepEqual([c[0].model, c[0].attempt, c[0].input_tokens, c[0].output_tokens], ['claude-haiku-4-5', 1, 700, 40]);
    assert.ok(near(a.total_cost_usd, a.cost_usd + CLASSIFIER_COST), `total ${a.total_cost_usd}`);
    const report = await usageReport(h.hub.ctx.sql.db);
    const byKind = report.by_kind.find((b) => b.key === 'classification');
    assert.ok(byKind && byKind.cost_usd !== null && near(byKind.cost_usd, CLASSIFIER_COST), JSON.stringify(report.by_kind));
    const house = await spentIn(h.hub.ctx.sql.db, { kind: 'house', key: 'house' });
    assert.ok(near(house.hubUsd, CLASSIFIER_COST), `house budget counts the classification: ${house.hubUsd}`);

    // The event, with the reservation lowered to sonnet's typical job (250k in, 25k out at $3/$15).
    const ev = a.events.find((e: any) => e.kind === 'model_chosen');
    assert.ok(ev, JSON.stringify(a.events.map((e: any) => e.kind)));
    assert.deepEqual([ev.data.model, ev.data.tier, ev.data.reason, ev.data.fallback], ['claude-sonnet-4-5', 'medium', 'a focused change in a few files', false]);
    assert.ok(near(ev.data.reserved_usd, 1.125), `lowered to ${ev.data.reserved_usd}`);
    assert.ok(near(a.reservation.reserved_usd, 1.125), JSON.stringify(a.reservation));
    assert.match(a.reservation.basis, /model "auto" chose claude-sonnet-4-5/);

    const listed = (await h.call('list_agents', {})).agents.find((x: any) => x.job_id === id);
    assert.equal(listed.model, 'claude-sonnet-4-5');
    assert.equal(listed.model_choice.tier, 'medium');
  });

  test('a classification that times out falls back to the configured default model, with why; "auto" without tiers is refused before anything is created', async () => {
    const h = await hubWith({
      slow: (ctx) => (isClassifier(ctx) ? { delayMs: 20_000, text: 'too late' } : { text: 'done' }),
    }, { defaultModel: 'claude-sonnet-5', classifierTimeoutS: 2 });
    const id = (await h.call('spawn_agent', { prompt: '@script:slow tidy the README', model: 'auto' })).job_id;
    const j = await waitForJob(h.hub, id, (r) => r.status === 'succeeded' || r.status === 'failed', 90_000);
    assert.equal(j.status, 'succeeded', j.error ?? '');
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.model, 'claude-sonnet-5', 'the configured default model');
    assert.equal(a.model_choice.fallback, true);
    assert.equal(a.model_choice.tier, null);
    assert.match(a.model_choice.reason, /timed out after 2 s/);
    assert.equal(a.model_choice.cost_usd, null, 'a run that printed no result cost something unknown, never $0');
    const child = h.fake.requests.filter((r) => r.script === 'slow' && !JSON.stringify(r.body.messages).includes('Decide which model tier'));
    assert.ok(child.length >= 1);
    assert.deepEqual([...new Set(child.map((r) => r.body.model))], ['claude-sonnet-5']);
    const row = (await events(h.hub, id, 50)).find((e) => e.kind === 'model_chosen');
    assert.ok(row && JSON.parse(row.data_json!).fallback === true);

    // Cancelled while it classifies: it ends cancelled without starting a child, and quickly. On a
    // hub whose classifier does not time out first (2 s raced the cancel on a loaded machine).
    const patient = await hubWith({
      slow: (ctx) => (isClassifier(ctx) ? { delayMs: 20_000, text: 'too late' } : { text: 'done' }),
    }, { defaultModel: 'claude-sonnet-5', classifierTimeoutS: 120 });
    const cid = (await patient.call('spawn_agent', { prompt: '@script:slow second task', model: 'auto' })).job_id;
    await patient.fake.waitForRequest((r) => r.script === 'slow' && JSON.stringify(r.body.messages).includes('second task'), 30_000);
    const t0 = Date.now();
    const cancelled = await patient.call('cancel_agent', { job_id: cid, reason: 'changed my mind' });
    assert.equal(cancelled.status, 'cancelled');
    assert.equal(cancelled.error, 'cancelled: changed my mind');
    assert.ok(Date.now() - t0 < 15_000, `cancel took ${Date.now() - t0} ms`);
    assert.equal(patient.fake.requests.filter((r) => JSON.stringify(r.body.messages).includes('second task') && !JSON.stringify(r.body.messages).includes('Decide which model tier')).length, 0, 'no child ran');

    // No tiers for claude: "auto" is refused and nothing is created.
    const none = await hubWith({}, { modelTiers: { claude: null } });
    await assert.rejects(none.call('spawn_agent', { prompt: 'x', model: 'auto', budget_usd: 1 }),
      (err: unknown) => err instanceof ToolError && /model "auto" needs model tiers for provider "claude"/.test(err.message) && /OVERSEER_MODEL_TIERS/.test(err.message));
    assert.equal((await none.call('list_agents', {})).agents.length, 0);
  });
});
