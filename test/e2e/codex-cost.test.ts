// End-to-end: limits and spending of REAL codex children (codex-cli 0.169.0) against the scripted
// fake Responses API. `codex exec` reports tokens only at turn.completed; the hub follows the
// thread's rollout file, one token_count per model response, so spending is live within a turn:
// a cancelled child keeps what its finished model calls cost, budget_usd stops a child in the
// middle of a turn, and max_turns (model calls per attempt, as Claude counts them) is enforced.
// A budget on a model without a price is refused at spawn. The child's stderr is kept on disk.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, waitEnded } from '../helpers/wait.js';
import { codexHubs } from '../helpers/codexHub.js';
import { gate } from '../helpers/gate.js';
import { FAKE_MODEL } from '../helpers/codex.js';
import type { CodexScript } from '../../src/fakemodel/fakeOpenAI.js';
import { job, jobs } from '../helpers/state.js';

const { codexHub } = codexHubs();

/** $1000 per 1M tokens either way: one default fake response (100 in / 10 out) costs $0.11. */
const PRICES = { [FAKE_MODEL]: { input: 1000, output: 1000 } };
const CALL_USD = 0.11;

/** A model that never ends its turn: every response (500 ms: a model takes time) is one more shell call. */
const endless: CodexScript = (ctx) => ({ delayMs: 500, calls: [{ shell: `echo call-${ctx.step}` }] });

describe('codex children: live spending and limits', () => {
  test('a codex child cancelled while the model hangs keeps what its finished calls cost (turn never completed)', async () => {
    const hang = gate();
    const { h, openai } = await codexHub({
      two: async (ctx) => {
        if (ctx.step < 2) return { calls: [{ shell: `echo ${ctx.step}` }], usage: { input_tokens: 100 + ctx.step, output_tokens: 10 } };
        await hang.wait;
        return { text: 'too late' };
      },
    }, { config: { codexPrices: PRICES } });
    const id = (await h.call('spawn_agent', { prompt: '@script:two work', provider: 'codex' })).job_id;
    await openai.waitForRequest((r) => r.script === 'two' && r.step === 2, 60_000);
    const live = await eventually('the running codex job shows its two calls', async () => {
      const j = await job(h.hub, id);
      return j.input_tokens === 201 ? j : undefined;
    }, 30_000);
    assert.equal(live.status, 'running');
    const res = await h.call('cancel_agent', { job_id: id, reason: 'test' });
    assert.equal(res.status, 'cancelled');
    hang.open();
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.input_tokens, 201);
    assert.equal(a.output_tokens, 20);
    assert.ok(Math.abs(a.cost_usd - (201 + 20) * 1000 / 1e6) < 1e-9, `cost ${a.cost_usd}`);
    const transcript = readFileSync(join(h.home, 'agents', id, 'attempt-1.jsonl'), 'utf8');
    assert.doesNotMatch(transcript, /turn\.completed/, 'the cost came from the calls, not from an end-of-turn total');
    // Whatever codex writes to stderr is kept beside the transcript (often nothing at all).
    assert.equal(a.stderr_path, join(h.home, 'agents', id, 'attempt-1.stderr'));
    assert.ok(existsSync(a.stderr_path));
  });

  test('budget_usd stops a codex child in the middle of a turn, from the usage of its calls', async () => {
    const { h, openai } = await codexHub({ endless }, { config: { codexPrices: PRICES } });
    const id = (await h.call('spawn_agent', { prompt: '@script:endless go', provider: 'codex', budget_usd: 0.25 })).job_id;
    const w = await waitEnded(h, [id], 120);
    const a = w.done[0];
    assert.equal(a.status, 'failed');
    assert.equal(a.failure_class, 'budget', a.error);
    // Stopped at the first call past $0.25 (the third); the fourth, in flight, was never answered.
    assert.ok(Math.abs(a.cost_usd - 3 * CALL_USD) < 1e-9, `cost ${a.cost_usd}`);
    assert.equal(a.turns, 3);
    assert.ok(openai.requests.filter((r) => r.script === 'endless').length <= 4, 'the child did not run on');
  });

  test('max_turns is enforced for codex: the child is stopped after max_turns model calls', async () => {
    const { h, openai } = await codexHub({ endless }, { config: { codexPrices: PRICES } });
    const id = (await h.call('spawn_agent', { prompt: '@script:endless go', provider: 'codex', max_turns: 2 })).job_id;
    const w = await waitEnded(h, [id], 120);
    const a = w.done[0];
    assert.equal(a.status, 'failed');
    assert.equal(a.failure_class, 'max_turns', a.error);
    assert.match(a.error, /max_turns/);
    const calls = openai.requests.filter((r) => r.script === 'endless').length;
    assert.ok(calls >= 3 && calls <= 4, `model calls ${calls}: stopped at the third response (the first past max_turns)`);
    assert.equal(a.turns, 3, 'three responses, the third the first past max_turns');
  });

  test('a budget on a codex model without a price is refused at spawn, and nothing is stored', async () => {
    const { h } = await codexHub({ endless });
    const before = (await jobs(h.hub, { limit: 100 })).length;
    const r = await h.callRaw('spawn_agent', { prompt: '@script:endless go', provider: 'codex', budget_usd: 1 });
    assert.equal(r.isError, true);
    assert.match(r.text, /budget_usd cannot be enforced/);
    assert.match(r.text, /no known price/);
    assert.match(r.text, /OVERSEER_CODEX_PRICES/);
    assert.equal((await jobs(h.hub, { limit: 100 })).length, before, 'no job was stored');
    // With a price configured, the same spawn is accepted.
    const { h: priced } = await codexHub({ endless }, { config: { codexPrices: PRICES } });
    const ok = await priced.call('spawn_agent', { prompt: 'say hi', provider: 'codex', budget_usd: 1, max_turns: 1 });
    assert.ok(ok.job_id);
    await priced.call('cancel_agent', { job_id: ok.job_id });
  });
});
