// The provider limiter's breaker (src/limits/breaker.ts): open → half open → one probe → closed,
// the wait from retry-after vs a reset time vs backoff with jitter under its cap, stragglers
// that do not escalate, one probe at a time; driven by a fake clock (plain numbers).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { CLOSED, DEFAULT_SETTINGS, admit, backoffMs, nextWake, onLimit, onProbeGone, onSuccess, phaseAt, room, type BreakerSettings, type LimitHit } from '../../src/limits/breaker.js';
import { readLimit, readLimits, saveLimitState, stateOf } from '../../src/limits/store.js';
import { activeLimits } from '../../src/store/sql/limits.js';
import { sqlOver } from '../../src/store/sql/open.js';
import { claudeAccount, codexAccount } from '../../src/limits/account.js';
import { openDb } from '../../src/store/db.js';

const S: BreakerSettings = { backoffBaseMs: 1000, backoffCapMs: 10_000, probeLeaseMs: 5000 };
const rate = (o: Partial<LimitHit> = {}): LimitHit => ({ kind: 'rate_limit', status: 429, message: 'rate limited', ...o });

describe('limiter breaker', () => {
  test('closed admits everyone; a limit answer opens it until its retry-after; then one probe; its success closes it', () => {
    assert.equal(admit(CLOSED, 'a', 0, S).admission, 'go');
    let b = onLimit(CLOSED, rate({ retryAfterMs: 3000 }), 1000, S, 0.5);
    assert.equal(b.phase, 'open');
    assert.equal(b.until, 4000);
    assert.equal(b.basis, 'retry_after');
    assert.equal(b.failures, 1);
    assert.equal(b.openedAt, 1000);
    assert.equal(admit(b, 'a', 3999, S).admission, 'wait');
    assert.equal(room(b, 3999, S), 'none');
    assert.equal(phaseAt(b, 4000), 'half_open');
    assert.equal(room(b, 4000, S), 'one');
    const first = admit(b, 'a', 4000, S);
    assert.equal(first.admission, 'probe');
    b = first.state;
    assert.deepEqual(b.probe, { id: 'a', since: 4000 });
    assert.equal(admit(b, 'b', 4001, S).admission, 'wait', 'one probe at a time');
    assert.equal(room(b, 4001, S), 'none');
    assert.equal(admit(b, 'a', 4001, S).admission, 'probe', 'the probe asking again is still the probe');
    b = onSuccess(b, 4500);
    assert.equal(b, CLOSED);
    assert.equal(admit(b, 'b', 4501, S).admission, 'go');
  });

  test('a failed probe opens it again with the backoff one step longer; success resets the count', () => {
    let b = onLimit(CLOSED, rate(), 0, S, 0); // no wait named: backoff, failures 1 → [500, 1000]
    assert.equal(b.basis, 'backoff');
    assert.equal(b.until, 500);
    b = admit(b, 'p', 500, S).state;
    b = onLimit(b, rate(), 600, S, 0); // the probe failed: failures 2 → [1000, 2000]
    assert.equal(b.phase, 'open');
    assert.equal(b.failures, 2);
    assert.equal(b.until, 1600);
    assert.equal(b.probe, null);
    assert.equal(b.openedAt, 0, 'the episode keeps its start');
    b = admit(b, 'p', 1600, S).state;
    b = onLimit(b, rate(), 1700, S, 0.999999); // failures 3 → [2000, 4000]
    assert.equal(b.failures, 3);
    assert.equal(b.until, 1700 + 4000);
    b = onSuccess(admit(b, 'q', 5700, S).state, 5800);
    assert.equal(b, CLOSED);
    assert.equal(onLimit(b, rate(), 6000, S, 0).failures, 1);
  });

  test('stragglers while open: the wait only grows, the backoff does not escalate, hits are counted', () => {
    let b = onLimit(CLOSED, rate({ retryAfterMs: 2000 }), 0, S, 0);
    for (let i = 1; i <= 5; i++) b = onLimit(b, rate({ retryAfterMs: 1000 }), i * 10, S, 0);
    assert.equal(b.failures, 1);
    assert.equal(b.hits, 6);
    assert.equal(b.until, 2000, 'a shorter retry-after does not shorten the wait');
    b = onLimit(b, { kind: 'usage_limit', status: 429, resetAt: 9000, message: 'usage limit reached' }, 100, S, 0);
    assert.equal(b.until, 9000, 'a later reset time extends it');
    assert.equal(b.basis, 'reset');
    assert.equal(b.kind, 'usage_limit');
    assert.equal(b.failures, 1);
  });

  test('a reset time beats a retry-after, which beats the backoff; a reset time already past does not count', () => {
    const both = onLimit(CLOSED, { kind: 'usage_limit', resetAt: 50_000, retryAfterMs: 1000, message: 'x' }, 0, S, 0);
    assert.deepEqual([both.until, both.basis], [50_000, 'reset']);
    const past = onLimit(CLOSED, { kind: 'usage_limit', resetAt: 10, retryAfterMs: 1000, message: 'x' }, 100, S, 0);
    assert.deepEqual([past.until, past.basis], [1100, 'retry_after']);
    const none = onLimit(CLOSED, { kind: 'overloaded', status: 529, message: 'Overloaded' }, 100, S, 0);
    assert.equal(none.basis, 'backoff');
    assert.equal(none.kind, 'overloaded');
  });

  test('backoff: doubles per opening, jitter within [half, all] of it, never past the cap', () => {
    assert.equal(backoffMs(1, S, 0), 500);
    assert.equal(backoffMs(1, S, 1), 1000);
    assert.equal(backoffMs(2, S, 0), 1000);
    assert.equal(backoffMs(4, S, 0.5), 6000);
    for (let n = 1; n < 60; n++) {
      for (const r of [0, 0.3, 0.999]) {
        const ms = backoffMs(n, S, r);
        assert.ok(ms <= S.backoffCapMs && ms >= Math.min(S.backoffCapMs, S.backoffBaseMs * 2 ** (n - 1)) / 2, `n=${n} r=${r}: ${ms}`);
      }
    }
    assert.equal(backoffMs(1000, DEFAULT_SETTINGS, 1), DEFAULT_SETTINGS.backoffCapMs);
  });

  test('a probe that ends without a verdict, or whose lease runs out, lets another go', () => {
    let b = onLimit(CLOSED, rate({ retryAfterMs: 100 }), 0, S, 0);
    b = admit(b, 'a', 100, S).state;
    assert.equal(admit(b, 'b', 200, S).admission, 'wait');
    assert.equal(nextWake(b, S), 100 + S.probeLeaseMs);
    assert.equal(admit(b, 'b', 100 + S.probeLeaseMs, S).admission, 'probe', 'lease ran out');
    assert.equal(onProbeGone(b, 'x'), b, 'not the probe: unchanged');
    const gone = onProbeGone(b, 'a');
    assert.equal(gone.probe, null);
    assert.equal(admit(gone, 'b', 300, S).admission, 'probe');
  });

  test('a success while still open changes nothing (a late answer is no proof the limit passed)', () => {
    const b = onLimit(CLOSED, rate({ retryAfterMs: 5000 }), 0, S, 0);
    assert.equal(onSuccess(b, 1000), b);
    assert.equal(nextWake(b, S), 5000);
    assert.equal(nextWake(CLOSED, S), null);
  });
});

describe('limiter store and accounts', () => {
  test('a breaker saved open is read back open with its wait; no probe survives; closed rows read as closed', async () => {
    const db = openDb(':memory:');
    const q = sqlOver(db).db;
    const acct = claudeAccount({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:1234/', ANTHROPIC_API_KEY: 'sk-secret-value', HOME: '/h' });
    let b = onLimit(CLOSED, rate({ retryAfterMs: 3000 }), 1000, S, 0);
    b = admit({ ...b, until: 1000 }, 'p', 1000, S).state;
    await saveLimitState(q, acct, b, ['j-1'], 1000);
    const row = (await readLimit(q, acct.id))!;
    assert.equal(row.provider, 'claude');
    assert.deepEqual(JSON.parse(row.paused_json), ['j-1']);
    assert.equal(row.endpoint, 'http://127.0.0.1:1234');
    assert.doesNotMatch(JSON.stringify(await readLimits(q)), /sk-secret-value/, 'the key is never stored');
    const back = stateOf(row);
    assert.equal(back.phase, 'half_open');
    assert.equal(back.probe, null);
    assert.equal(back.failures, 1);
    assert.equal((await activeLimits(q)).length, 1);
    await saveLimitState(q, acct, CLOSED, [], 2000);
    assert.equal(stateOf((await readLimit(q, acct.id))!), CLOSED);
    assert.equal((await activeLimits(q)).length, 0);
    db.close();
  });

  test('the account: provider, endpoint and a hash of the credential; another key or endpoint is another account', () => {
    const a = claudeAccount({ ANTHROPIC_API_KEY: 'k1', HOME: '/h' });
    assert.equal(a.endpoint, 'https://api.anthropic.com');
    assert.match(a.keyHash, /^[0-9a-f]{12}$/);
    assert.equal(a.id, `claude|https://api.anthropic.com|${a.keyHash}`);
    assert.notEqual(claudeAccount({ ANTHROPIC_API_KEY: 'k2', HOME: '/h' }).id, a.id);
    assert.notEqual(claudeAccount({ ANTHROPIC_API_KEY: 'k1', ANTHROPIC_BASE_URL: 'http://x', HOME: '/h' }).id, a.id);
    assert.notEqual(claudeAccount({ HOME: '/h' }).id, claudeAccount({ HOME: '/other' }).id, 'a login: its config directory');
    assert.match(claudeAccount({ CLAUDE_CODE_USE_BEDROCK: '1', AWS_REGION: 'us-east-1' }).endpoint, /^bedrock:us-east-1$/);
    const c = codexAccount({ FAKE_API_KEY: 'sk' }, { base_url: 'http://127.0.0.1:9/v1', env_key: 'FAKE_API_KEY' });
    assert.equal(c.endpoint, 'http://127.0.0.1:9/v1');
    assert.notEqual(c.id, codexAccount({ FAKE_API_KEY: 'other' }, { base_url: 'http://127.0.0.1:9/v1', env_key: 'FAKE_API_KEY' }).id);
    assert.equal(codexAccount({ OPENAI_API_KEY: 'o' }).endpoint, 'https://api.openai.com/v1');
  });
});
