// End-to-end: model auto-choice for a Codex child (docs/models.md). The classifier always runs
// on Claude (the fake Anthropic API, small model); the Codex child then runs on the model the
// chosen tier maps to for provider codex, as its Responses requests show.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FAKE_MODEL } from '../helpers/codex.js';
import { codexHubs } from '../helpers/codexHub.js';

const { codexHub } = codexHubs();

describe('model auto-choice for codex', () => {
  test('a codex job with model "auto" is classified on claude and runs on the codex model of its tier', async () => {
    const { h, openai } = await codexHub({ cx: [{ text: 'done' }] }, {
      scripts: { cx: [{ tools: [{ name: 'StructuredOutput', input: { tier: 'small', reason: 'a one-line change' } }], usage: { input_tokens: 500, output_tokens: 30 } }] },
      config: { modelTiers: { codex: { small: FAKE_MODEL, medium: 'fake-medium', large: 'fake-large' } } },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:cx fix the typo in README', provider: 'codex', model: 'auto' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.model, FAKE_MODEL);
    assert.deepEqual([a.model_choice.tier, a.model_choice.reason, a.model_choice.fallback], ['small', 'a one-line change', false]);
    const cls = h.fake.requests.filter((r) => r.script === 'cx');
    assert.equal(cls.length, 1);
    assert.equal(cls[0]!.body.model, 'claude-haiku-4-5');
    const child = openai.requests.filter((r) => r.script === 'cx');
    assert.ok(child.length >= 1);
    assert.deepEqual([...new Set(child.map((r) => r.body.model))], [FAKE_MODEL]);
    assert.deepEqual(a.hub_usage.map((u: any) => [u.kind, u.model, u.input_tokens]), [['classification', 'claude-haiku-4-5', 500]]);
  });
});
