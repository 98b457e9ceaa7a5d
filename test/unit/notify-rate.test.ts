// Notification rate limits (src/floor/notify/rate.ts): at most perMinute per sliding minute, the
// same notice once per repeat window, and the drops counted onto the next notice that goes out.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SinkRate } from '../../src/floor/notify/rate.js';

describe('SinkRate', () => {
  test('at most perMinute in any 60 s: the next one goes when the oldest leaves the window', () => {
    const r = new SinkRate({ perMinute: 2, repeatMs: 0 });
    assert.deepEqual(r.admit('a', 0), { ok: true, suppressed: 0 });
    assert.deepEqual(r.admit('b', 10_000), { ok: true, suppressed: 0 });
    assert.deepEqual(r.admit('c', 59_999), { ok: false, why: 'rate' });
    // t=0 is out of the window at 60 000; t=10 000 is still in it.
    assert.deepEqual(r.admit('d', 60_000), { ok: true, suppressed: 1 });
    assert.deepEqual(r.admit('e', 60_001), { ok: false, why: 'rate' });
    assert.deepEqual(r.admit('f', 70_000), { ok: true, suppressed: 1 });
  });

  test('the same key is dropped within the repeat window, sent again after it; other keys are not held back', () => {
    const r = new SinkRate({ perMinute: 100, repeatMs: 300_000 });
    assert.equal(r.admit('failed|j-1', 0).ok, true);
    assert.deepEqual(r.admit('failed|j-1', 299_999), { ok: false, why: 'repeat' });
    assert.deepEqual(r.admit('failed|j-2', 1000), { ok: true, suppressed: 1 });
    assert.deepEqual(r.admit('failed|j-1', 300_000), { ok: true, suppressed: 0 });
  });

  test('drops of both kinds add up and ride on the next notice only', () => {
    const r = new SinkRate({ perMinute: 1, repeatMs: 120_000 });
    assert.equal(r.admit('x', 0).ok, true);
    assert.equal(r.admit('x', 1).ok, false); // repeat
    assert.equal(r.admit('y', 2).ok, false); // rate
    assert.equal(r.admit('z', 3).ok, false); // rate
    assert.equal(r.pendingDrops, 3);
    assert.deepEqual(r.admit('y', 60_000), { ok: true, suppressed: 3 });
    assert.equal(r.pendingDrops, 0);
    assert.deepEqual(r.admit('w', 120_001), { ok: true, suppressed: 0 });
  });

  test('repeatMs 0: repeats are not checked', () => {
    const r = new SinkRate({ perMinute: 10, repeatMs: 0 });
    for (let i = 0; i < 10; i++) assert.equal(r.admit('same', i).ok, true, `send ${i}`);
    assert.deepEqual(r.admit('same', 11), { ok: false, why: 'rate' });
  });

  test('a dropped notice does not take a place in the window', () => {
    const r = new SinkRate({ perMinute: 1, repeatMs: 0 });
    assert.equal(r.admit('a', 0).ok, true);
    for (let t = 1; t < 60_000; t += 5000) assert.equal(r.admit('b', t).ok, false);
    assert.equal(r.admit('c', 60_000).ok, true);
  });
});
