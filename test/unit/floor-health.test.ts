// The health rules (src/floor/health.ts) with an injected clock: when each warning fires, that
// time inside Overseer's tools is not idleness, and the watchdog's verdicts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assessHealth, idleSince, lostProcess, type HealthFacts } from '../../src/floor/health.js';
import { HealthSchema } from '../../src/config.js';
import { idsShown } from '../../src/floor/digest.js';
import { nudgeText } from '../../src/floor/monitor.js';

const cfg = HealthSchema.parse({ stalledS: 60, longRunningS: 600 });
const T0 = 1_000_000;
const facts = (f: Partial<HealthFacts> = {}): HealthFacts => ({
  status: 'running', turns: 0, maxTurns: null, costUsd: 0, budgetUsd: null, startedAt: T0, attemptStartedAt: T0,
  timeoutS: 3600, lastEventAt: T0, inOverseerCall: false, lastCallEndedAt: null, ...f,
});

describe('assessHealth', () => {
  test('stalled after stalledS without output, and not a moment before', () => {
    assert.equal(assessHealth(facts(), cfg, T0 + 59_999).stalled, undefined);
    assert.match(assessHealth(facts(), cfg, T0 + 60_000).stalled!, /no output for 60s \(threshold 60s\)/);
  });

  test('output resets the idle clock', () => {
    assert.equal(assessHealth(facts({ lastEventAt: T0 + 30_000 }), cfg, T0 + 80_000).stalled, undefined);
    assert.ok(assessHealth(facts({ lastEventAt: T0 + 30_000 }), cfg, T0 + 90_000).stalled);
  });

  test("time inside Overseer's own tools is not idleness; the clock restarts when the call ends", () => {
    assert.equal(assessHealth(facts({ inOverseerCall: true }), cfg, T0 + 3_600_000).stalled, undefined);
    assert.equal(assessHealth(facts({ lastCallEndedAt: T0 + 3_600_000 }), cfg, T0 + 3_630_000).stalled, undefined);
    assert.ok(assessHealth(facts({ lastCallEndedAt: T0 + 3_600_000 }), cfg, T0 + 3_660_000).stalled);
  });

  test('a job waiting for an answer (needs_input), frozen, queued or ended has no stall', () => {
    for (const status of ['needs_input', 'frozen', 'queued', 'succeeded', 'failed']) {
      assert.equal(assessHealth(facts({ status }), cfg, T0 + 3_600_000).stalled, undefined, status);
    }
    assert.equal(idleSince(facts({ status: 'needs_input' })), null);
  });

  test('turns_high, budget_high, time_high at 80 % by default', () => {
    assert.equal(assessHealth(facts({ turns: 7, maxTurns: 10 }), cfg, T0).turns_high, undefined);
    assert.equal(assessHealth(facts({ turns: 8, maxTurns: 10 }), cfg, T0).turns_high, '8 of max_turns 10 (80%)');
    assert.equal(assessHealth(facts({ costUsd: 0.79, budgetUsd: 1 }), cfg, T0).budget_high, undefined);
    assert.match(assessHealth(facts({ costUsd: 0.8, budgetUsd: 1 }), cfg, T0).budget_high!, /\$0\.8000 of budget_usd \$1 \(80%\)/);
    assert.equal(assessHealth(facts({ timeoutS: 100, lastEventAt: T0 + 79_000 }), cfg, T0 + 79_000).time_high, undefined);
    assert.match(assessHealth(facts({ timeoutS: 100, lastEventAt: T0 + 80_000 }), cfg, T0 + 80_000).time_high!, /running 80s of timeout_s 100 \(80%\)/);
  });

  test('frozen time does not count toward time_high', () => {
    assert.equal(assessHealth(facts({ timeoutS: 100, frozenMs: 30_000, lastEventAt: T0 + 90_000 }), cfg, T0 + 90_000).time_high, undefined);
  });

  test('long_running when configured, never with 0', () => {
    assert.match(assessHealth(facts({ lastEventAt: T0 + 600_000 }), cfg, T0 + 600_000).long_running!, /running for 10m/);
    assert.equal(assessHealth(facts({ lastEventAt: T0 + 600_000 }), HealthSchema.parse({}), T0 + 600_000).long_running, undefined);
  });

  test('a custom fraction', () => {
    const c = HealthSchema.parse({ highFraction: 0.5 });
    assert.ok(assessHealth(facts({ turns: 5, maxTurns: 10 }), c, T0).turns_high);
  });
});

describe('the watchdog', () => {
  test('a live pid is fine; a gone pid is watched for the grace period, then settled', () => {
    assert.equal(lostProcess({ pidAlive: true, settled: false, goneSince: null, now: T0, graceMs: 1000 }), 'ok');
    assert.equal(lostProcess({ pidAlive: false, settled: true, goneSince: null, now: T0, graceMs: 1000 }), 'ok');
    assert.equal(lostProcess({ pidAlive: false, settled: false, goneSince: null, now: T0, graceMs: 1000 }), 'watch');
    assert.equal(lostProcess({ pidAlive: false, settled: false, goneSince: T0, now: T0 + 999, graceMs: 1000 }), 'watch');
    assert.equal(lostProcess({ pidAlive: false, settled: false, goneSince: T0, now: T0 + 1000, graceMs: 1000 }), 'settle');
  });
});

describe('health config and texts', () => {
  test('bad health settings are refused with the key named', () => {
    assert.throws(() => HealthSchema.parse({ stalledS: 0 }));
    assert.throws(() => HealthSchema.parse({ reactions: { stalled: 'explode' } }), /Invalid enum value/);
    assert.throws(() => HealthSchema.parse({ reactions: { sleepy: 'notify' } }), /Unrecognized key/);
  });

  test('the nudge text names the warning and its detail', () => {
    assert.equal(nudgeText('{warning}! {detail}; {warning}', 'stalled', 'no output for 10m'), 'stalled! no output for 10m; stalled');
  });

  test('the digest leaves out what a result shows: job ids at the top, in done, agents and attention', () => {
    const ids = idsShown({ job_id: 'a', done: [{ job_id: 'b' }], agents: [{ job_id: 'c' }], attention: [{ request_id: 'r1', job_id: 'd' }], other: [{ job_id: 'z' }] });
    assert.deepEqual([...ids].sort(), ['a', 'b', 'c', 'd', 'r1']);
  });
});
