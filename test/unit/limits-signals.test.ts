// Reading provider limits out of what the CLIs print (src/limits/signals.ts): Claude Code's
// api_retry events and error results, Codex's reconnect and turn.failed messages, with the
// wait they state (retry-after, reset time) — the lines as the CLIs printed them against the fakes.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { limitKind, limitOfLine, limitOfText, resetAt, retryInMs } from '../../src/limits/signals.js';

const NOW = new Date(2026, 10, 28, 16, 0, 0).getTime(); // 16:00 local time

describe('limit signals: Claude Code', () => {
  test('api_retry for a 429: a retrying rate limit with the delay Claude will wait', () => {
    const line = '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":2181,"error_status":429,"error":"rate_limit","session_id":"s","uuid":"u"}';
    assert.deepEqual(limitOfLine('claude', line, NOW), { hit: { kind: 'rate_limit', status: 429, retryAfterMs: 2181, message: 'API 429 rate_limit' }, retrying: true });
  });

  test('api_retry for a 529: overloaded; for a 500: no limit (an ordinary server error)', () => {
    const l = limitOfLine('claude', '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":604,"error_status":529,"error":"overloaded"}', NOW);
    assert.equal(l?.hit.kind, 'overloaded');
    assert.equal(limitOfLine('claude', '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":1,"retry_delay_ms":604,"error_status":500,"error":"server_error"}', NOW), undefined);
  });

  test('other lines are not parsed and show no limit', () => {
    assert.equal(limitOfLine('claude', '{"type":"assistant","message":{"content":[{"type":"text","text":"rate limit api_retry"}]}}', NOW), undefined);
    assert.equal(limitOfLine('claude', 'not json "api_retry"', NOW), undefined);
  });

  test('the result of a usage limit Claude did not retry: usage_limit with the stated reset time', () => {
    const h = limitOfText('API Error: Request rejected (429) · usage limit reached, resets at 2026-11-28T17:01:49.140Z', 429, NOW);
    assert.deepEqual(h, { kind: 'usage_limit', status: 429, resetAt: Date.parse('2026-11-28T17:01:49.140Z'), message: 'API Error: Request rejected (429) · usage limit reached, resets at 2026-11-28T17:01:49.140Z' });
  });

  test('the results of a 429 and a 529 after Claude\'s last retry', () => {
    assert.equal(limitOfText('API Error: Request rejected (429) · scripted rate limit', 429, NOW)?.kind, 'rate_limit');
    assert.equal(limitOfText('API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.', 529, NOW)?.kind, 'overloaded');
    assert.equal(limitOfText('API Error: 400 scripted bad request', 400, NOW), undefined);
  });

  test('subscription wording: "You\'ve hit your session limit · resets 4:40pm", the old "…|<epoch>"', () => {
    const h = limitOfText("You've hit your session limit · resets 4:40pm", undefined, NOW);
    assert.equal(h?.kind, 'usage_limit');
    assert.equal(h?.resetAt, new Date(2026, 10, 28, 16, 40).getTime());
    assert.equal(limitOfText('Claude AI usage limit reached|1796000000', undefined, NOW)?.resetAt, 1796000000 * 1000);
  });
});

describe('limit signals: Codex', () => {
  test('a reconnect after a 429: a retrying rate limit', () => {
    const l = limitOfLine('codex', '{"type":"error","message":"Reconnecting... 1/2 (exceeded retry limit, last status: 429 Too Many Requests)"}', NOW);
    assert.deepEqual([l?.hit.kind, l?.hit.status, l?.retrying], ['rate_limit', 429, true]);
  });

  test('a reconnect after a 529 or 503: overloaded; the final "high demand" too', () => {
    assert.equal(limitOfLine('codex', '{"type":"error","message":"Reconnecting... 1/2 (unexpected status 529 <unknown status code>: Overloaded, url: http://127.0.0.1:1/v1/responses)"}', NOW)?.hit.kind, 'overloaded');
    assert.equal(limitOfLine('codex', '{"type":"error","message":"Reconnecting... 1/2 (unexpected status 503 Service Unavailable: x, url: http://h/v1/responses)"}', NOW)?.hit.kind, 'overloaded');
    const last = limitOfLine('codex', '{"type":"error","message":"We’re currently experiencing high demand, which may cause temporary errors."}', NOW);
    assert.deepEqual([last?.hit.kind, last?.retrying], ['overloaded', false]);
  });

  test('a usage limit: the reset clock time "try again at 5:02 PM", a dated one too', () => {
    const msg = 'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 5:02 PM.';
    const l = limitOfLine('codex', JSON.stringify({ type: 'error', message: msg }), NOW);
    assert.equal(l?.hit.kind, 'usage_limit');
    assert.equal(l?.hit.resetAt, new Date(2026, 10, 28, 17, 2).getTime());
    assert.equal(l?.retrying, false);
    assert.equal(resetAt('… or try again at Nov 29th, 2026 5:02 PM.', NOW), new Date(2026, 10, 29, 17, 2).getTime());
  });

  test('quota and billing are no limit that passes; an item that mentions a rate limit is no error event', () => {
    assert.equal(limitOfLine('codex', '{"type":"error","message":"Quota exceeded. Check your plan and billing details."}', NOW), undefined);
    assert.equal(limitOfLine('codex', '{"type":"item.completed","item":{"type":"agent_message","text":"rate limit \\"error\\""}}', NOW), undefined);
    assert.equal(limitKind(undefined, 'Your credit balance is too low'), undefined);
  });
});

describe('limit signals: stated waits', () => {
  test('retry-in phrases: seconds, milliseconds, compound, minutes', () => {
    assert.equal(retryInMs('Please try again in 6.5s.'), 6500);
    assert.equal(retryInMs('Please try again in 20ms'), 20);
    assert.equal(retryInMs('try again in 1m30s'), 90_000);
    assert.equal(retryInMs('retry in 5 minutes'), 300_000);
    assert.equal(retryInMs('try again in a moment'), undefined);
  });

  test('reset clock times: the next such time (today or tomorrow), 12-hour and 24-hour; only future times', () => {
    assert.equal(resetAt('resets 3pm', NOW), new Date(2026, 10, 29, 15, 0).getTime(), '3pm passed today: tomorrow');
    assert.equal(resetAt('resets at 16:40', NOW), new Date(2026, 10, 28, 16, 40).getTime());
    assert.equal(resetAt('resets 12am', NOW), new Date(2026, 10, 29, 0, 0).getTime());
    assert.equal(resetAt('resets at 2020-01-01T00:00:00Z', NOW), undefined, 'a time in the past');
    assert.equal(resetAt('resets 25:99', NOW), undefined);
    assert.equal(resetAt('try again in 4 minutes', NOW), undefined);
    assert.equal(resetAt('resets 7', NOW), undefined, 'a bare number is no time');
    const in16 = NOW + 25_000; // 16:00:25: "try again at 4:00 PM" was printed rounded down
    assert.equal(resetAt('try again at 4:00 PM.', in16), NOW + 60_000, 'within the stated minute: its end');
  });
});
