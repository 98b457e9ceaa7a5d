// Unit: the decisions behind hub lifecycle limits, on an injected clock. IdleTimer fires only
// after a whole uninterrupted idle period (busy resets it; 0 disables it). SessionTable counts
// sessions per token against the cap, and a session is expired only when nothing is open on it
// and it has been inactive for the idle limit.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { IdleTimer } from '../../src/hubproc/idle.js';
import { SessionTable } from '../../src/server/sessions.js';

describe('IdleTimer', () => {
  test('fires after the grace period of continuous idleness; busy resets it', () => {
    let now = 1000;
    const t = new IdleTimer({ idleMs: 500, now: () => now });
    assert.equal(t.check(true), false);
    now += 499;
    assert.equal(t.check(true), false);
    now += 1;
    assert.equal(t.check(true), true);
    assert.equal(t.check(false), false, 'busy must reset');
    now += 400;
    assert.equal(t.check(true), false, 'a new idle period starts from zero');
    now += 499;
    assert.equal(t.check(true), false);
    now += 1;
    assert.equal(t.check(true), true);
  });

  test('idleMs 0 never fires', () => {
    let now = 0;
    const t = new IdleTimer({ idleMs: 0, now: () => now });
    for (let i = 0; i < 5; i++) { now += 1e9; assert.equal(t.check(true), false); }
  });
});

describe('SessionTable', () => {
  const fake = { session: {} as never, channel: {} as never };
  test('refuses past the per-token cap, counting only that token', () => {
    const s = new SessionTable({ maxPerToken: 2, idleMs: 1000 });
    s.add('a', { ...fake, token: 'A', caller: { role: 'lead' } });
    assert.equal(s.refusal('A'), undefined);
    s.add('b', { ...fake, token: 'A', caller: { role: 'lead' } });
    assert.match(s.refusal('A') ?? '', /already holds 2, the cap is 2/);
    assert.equal(s.refusal('B'), undefined, 'another token is not affected');
    s.delete('a');
    assert.equal(s.refusal('A'), undefined);
    assert.equal(s.count('lead'), 1);
    assert.equal(s.count('agent'), 0);
  });

  test('expires only sessions with nothing open, inactive for the idle limit', () => {
    let now = 0;
    const s = new SessionTable({ maxPerToken: 10, idleMs: 1000 }, () => now);
    s.add('idle', { ...fake, token: 'A', caller: { role: 'lead' } });
    s.add('streaming', { ...fake, token: 'A', caller: { role: 'lead' } });
    const done = s.busy(s.get('streaming')!);
    assert.equal(s.count('lead', true), 1, 'only the session with an open stream is connected');
    assert.equal(s.count('lead'), 2);
    now = 999;
    assert.deepEqual(s.expired(), []);
    now = 5000;
    assert.deepEqual(s.expired().map((x) => x), [s.get('idle')]);
    done();
    assert.deepEqual(s.expired(), [s.get('idle')], 'activity just ended: not idle yet');
    done(); // idempotent
    now = 6000;
    assert.equal(s.expired().length, 2);
  });
});
