// The live usage meter: each model call counted once by id (Claude repeats a message's usage on
// every content block), priced as it arrives, and replaced by the provider's own figure when the
// result settles it; an unpriced model is cost unknown, never $0.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageMeter } from '../../src/money/meter.js';
import { claudeCostOf } from '../../src/launch/claude/prices.js';
import { oneShotUsage } from '../../src/money/oneShot.js';
import { Throttle } from '../../src/money/throttle.js';
import { ClaudeLauncher } from '../../src/launch/claude/launcher.js';

const claude = (): UsageMeter => new UsageMeter((m, t) => claudeCostOf(m, t), 'claude-opus-5-5');
const call = (input: number, output: number, cachedInput = 0, cacheCreation = 0) => ({ input, output, cachedInput, cacheCreation });

describe('UsageMeter', () => {
  test('a message id repeated for each content block counts once; its latest usage wins', () => {
    const m = claude();
    assert.equal(m.observe('msg_1', 'claude-opus-5-5', call(100, 1)), true);
    assert.equal(m.observe('msg_1', 'claude-opus-5-5', call(100, 1)), false, 'same block usage again: no change');
    assert.equal(m.observe('msg_1', 'claude-opus-5-5', call(100, 20)), true, 'a later block of the same message carries the final output count');
    m.observe('msg_2', 'claude-opus-5-5', call(100, 20));
    const s = m.snapshot();
    assert.equal(s.calls, 2);
    assert.deepEqual(s.tokens, { input: 200, output: 40, cachedInput: 0, cacheCreation: 0 });
    // claude-opus-5-5: $4 in / $20 out per 1M (what claude 2.1.330 charges): 2 × (100×4 + 20×20) / 1e6
    assert.ok(Math.abs(s.costUsd - 0.0016) < 1e-12, `cost ${s.costUsd}`);
    assert.equal(s.costUnknown, false);
  });

  test('cache reads and writes are kept and priced (0.1× / 1.25× input)', () => {
    const m = claude();
    m.observe('a', 'claude-sonnet-4-5', call(10, 10, 1000, 100));
    const s = m.snapshot();
    assert.deepEqual(s.tokens, { input: 10, output: 10, cachedInput: 1000, cacheCreation: 100 });
    assert.ok(Math.abs(s.costUsd - (10 * 3 + 10 * 15 + 1000 * 0.3 + 100 * 3.75) / 1e6) < 1e-12);
  });

  test('the result reconciles: its cost and tokens replace the estimate of the calls it covers', () => {
    const m = claude();
    m.observe('msg_1', undefined, call(100, 20));
    m.observe('msg_2', undefined, call(100, 20));
    m.settle({ costUsd: 0.005, tokens: call(210, 45, 7, 3) });
    let s = m.snapshot();
    assert.equal(s.costUsd, 0.005);
    assert.deepEqual(s.tokens, { input: 210, output: 45, cachedInput: 7, cacheCreation: 3 });
    // A block of an already-settled message arriving late is not counted again.
    assert.equal(m.observe('msg_2', undefined, call(100, 20)), false);
    // The next invocation's calls add on top of the settled figure.
    m.observe('msg_3', undefined, call(100, 20));
    s = m.snapshot();
    assert.ok(Math.abs(s.costUsd - (0.005 + 0.0008)) < 1e-12);
    assert.equal(s.tokens.input, 310);
    assert.equal(s.calls, 3);
  });

  test('a result without money keeps the estimate; an unpriced model is cost unknown, never $0', () => {
    const m = claude();
    m.observe('x', undefined, call(100, 20));
    m.settle({});
    assert.ok(Math.abs(m.snapshot().costUsd - 0.0008) < 1e-12);
    const u = new UsageMeter(() => null);
    u.observe('y', 'mystery-model', call(5, 5));
    assert.equal(u.snapshot().costUnknown, true);
    u.settle({ costUsd: null, tokens: call(5, 5) });
    assert.deepEqual([u.snapshot().costUnknown, u.snapshot().tokens.input], [true, 5]);
  });
});

describe('prices and one-shot runs', () => {
  test('dated and [1m] model ids price as their base model; unknown models have no price', () => {
    assert.equal(claudeCostOf('claude-sonnet-4-5-20250929', call(1_000_000, 0)), 3);
    assert.equal(claudeCostOf('claude-opus-4-6[1m]', call(0, 1_000_000)), 25);
    assert.equal(claudeCostOf('claude-nonexistent-9', call(1, 1)), null);
    assert.equal(claudeCostOf(undefined, call(1, 1)), null);
  });

  test('a one-shot JSON result gives its tokens and cost; no result is cost unknown', () => {
    const u = oneShotUsage(JSON.stringify({ type: 'result', total_cost_usd: 0.0008, modelUsage: { 'claude-opus-5-5': { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 3, cacheCreationInputTokens: 4, costUSD: 0.0008 } } }));
    assert.deepEqual(u, { model: 'claude-opus-5-5', costUsd: 0.0008, tokens: { input: 100, output: 20, cachedInput: 3, cacheCreation: 4 } });
    assert.deepEqual(oneShotUsage('', 'claude-haiku-4-5'), { model: 'claude-haiku-4-5', costUsd: null, tokens: { input: 0, output: 0 } });
  });
});

describe('Throttle', () => {
  test('reports at once, merges pokes within the window, and flush never drops the last state', () => {
    let now = 0;
    const seen: number[] = [];
    let state = 0;
    const t = new Throttle(250, () => seen.push(state), () => now);
    state = 1; t.poke();
    state = 2; t.poke();
    state = 3; t.poke();
    assert.deepEqual(seen, [1], 'pokes within 250 ms wait for the trailing report');
    t.flush();
    assert.deepEqual(seen, [1, 3], 'flush reports the latest state');
    t.flush();
    assert.deepEqual(seen, [1, 3], 'nothing owed: no report');
    now = 1000;
    state = 4; t.poke();
    assert.deepEqual(seen, [1, 3, 4]);
    t.cancel();
  });
});

describe('Claude stream usage per call', () => {
  test('message_start gives the input, assistant events repeat it, message_delta brings the final output; content deltas are transient', () => {
    const parser = new ClaudeLauncher({}).newParser();
    const line = (o: unknown) => parser.line(JSON.stringify(o));
    const start = line({ type: 'stream_event', event: { type: 'message_start', message: { id: 'msg_1', model: 'claude-opus-5-5', usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 7, cache_creation_input_tokens: 3 } } } });
    assert.deepEqual(start, { kind: 'usage', callId: 'msg_1', model: 'claude-opus-5-5', usage: { input: 100, output: 1, cachedInput: 7, cacheCreation: 3 }, transient: true });
    assert.deepEqual(line({ type: 'stream_event', event: { type: 'content_block_delta', delta: { type: 'text_delta', text: 'hi' } } }), { kind: 'noise', transient: true });
    const turn = line({ type: 'assistant', message: { id: 'msg_1', model: 'claude-opus-5-5', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 100, output_tokens: 1 } } });
    assert.deepEqual((turn as { usage: unknown }).usage, { input: 100, output: 1, cachedInput: 7, cacheCreation: 3 }, 'a later block never lowers what is known');
    const delta = line({ type: 'stream_event', api_message_id: 'msg_1', event: { type: 'message_delta', usage: { output_tokens: 45 } } });
    assert.deepEqual((delta as { usage: unknown }).usage, { input: 100, output: 45, cachedInput: 7, cacheCreation: 3 });
  });
});
