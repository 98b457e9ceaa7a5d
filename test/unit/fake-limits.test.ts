// The fakes' provider-limit answers (src/fakemodel; the steps: test/helpers/fakeLimits.ts): the
// status, headers and body each CLI reads
// (docs/limits.md): retry-after on a 429, x-should-retry and the unified reset on a usage limit,
// Codex's usage_limit_reached with resets_at.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeAnthropic } from '../../src/fakemodel/fakeAnthropic.js';
import { startFakeOpenAI } from '../../src/fakemodel/fakeOpenAI.js';
import { codexRateLimited, codexUsageLimited, overloaded, rateLimited, usageLimited } from '../helpers/fakeLimits.js';

const closers: (() => Promise<void>)[] = [];
after(async () => { for (const c of closers) await c(); });

test('fake Anthropic: 429 with retry-after, 529 overloaded, a usage limit with its reset time in headers and message', async () => {
  const resetAt = Date.now() + 60_000;
  const steps = [rateLimited(3), overloaded(), usageLimited(resetAt)];
  const fake = await startFakeAnthropic({ scripts: { l: () => steps.shift() ?? { text: 'ok' } } });
  closers.push(() => fake.close());
  const post = () => fetch(`${fake.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ messages: [{ role: 'user', content: '@script:l' }] }) });
  const a = await post();
  assert.deepEqual([a.status, a.headers.get('retry-after'), ((await a.json()) as any).error.type], [429, '3', 'rate_limit_error']);
  const b = await post();
  assert.deepEqual([b.status, ((await b.json()) as any).error.type], [529, 'overloaded_error']);
  const c = await post();
  assert.equal(c.status, 429);
  assert.equal(c.headers.get('x-should-retry'), 'false');
  assert.equal(c.headers.get('anthropic-ratelimit-unified-reset'), String(Math.ceil(resetAt / 1000)));
  assert.match(((await c.json()) as any).error.message, new RegExp(`resets at ${new Date(resetAt).toISOString()}`));
});

test('fake OpenAI: 429 with retry-after, and a usage limit with resets_at', async () => {
  const resetAt = Date.now() + 60_000;
  const steps = [codexRateLimited(2), codexUsageLimited(resetAt)];
  const fake = await startFakeOpenAI({ scripts: { default: () => steps.shift() ?? { text: 'ok' } } });
  closers.push(() => fake.close());
  const post = () => fetch(`${fake.url}/responses`, { method: 'POST', body: JSON.stringify({ input: [] }) });
  const a = await post();
  assert.deepEqual([a.status, a.headers.get('retry-after')], [429, '2']);
  const b = await post();
  const e = ((await b.json()) as any).error;
  assert.deepEqual([b.status, e.type, e.resets_at], [429, 'usage_limit_reached', Math.ceil(resetAt / 1000)]);
});
