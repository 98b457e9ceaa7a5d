// waitUntil over the in-process Bus: immediate satisfaction, wakeups by events, the
// subscribe-before-check race, timeout, abort, progress ticks, and cleanup after settling.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { EventEmitter } from 'node:events';
import { Bus } from '../../src/services/bus.js';
import { waitUntil, type WaitResult } from '../../src/services/wait.js';

/** Rejects if `p` does not settle within `ms` (a deadline, not a sleep). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** Total listeners on the bus's private emitter, over all event names. */
function listenerTotal(bus: Bus): number {
  const ee = (bus as unknown as { ee: EventEmitter }).ee;
  return ee.eventNames().reduce((n, e) => n + ee.listenerCount(e), 0);
}

/** Timers currently keeping the event loop alive. */
function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

describe('Bus', () => {
  test('delivers to subscribers of that event only, until unsubscribed', () => {
    const bus = new Bus();
    const got: unknown[] = [];
    const off = bus.on('job', (ev) => got.push(ev));
    bus.emit('job', { jobId: 'j-1', status: 'running' });
    bus.emit('message', { to: 'j-1' });
    off();
    bus.emit('job', { jobId: 'j-1', status: 'succeeded' });
    assert.deepEqual(got, [{ jobId: 'j-1', status: 'running' }]);
    assert.equal(listenerTotal(bus), 0);
  });
});

describe('waitUntil', () => {
  test('already satisfied → resolves at once with the value, leaving no listeners or timers', async () => {
    const bus = new Bus();
    const timersBefore = activeTimers();
    let calls = 0;
    const r = await within(waitUntil({
      bus, events: ['job', 'message'], timeoutMs: 60_000, onProgress: () => {}, progressEveryMs: 10,
      check: () => { calls++; return 'ready'; },
    }), 1000, 'an already satisfied wait');
    assert.deepEqual(r, { ok: true, value: 'ready' });
    assert.equal(calls, 1);
    assert.equal(listenerTotal(bus), 0);
    assert.equal(activeTimers(), timersBefore, 'no timeout or progress timer left behind');
  });

  test('satisfied by a later event', async () => {
    const bus = new Bus();
    let done = false;
    let calls = 0;
    const p = waitUntil({
      bus, events: ['job'], timeoutMs: 5000,
      check: () => { calls++; return done ? { status: 'succeeded' } : undefined; },
    });
    assert.equal(calls, 1, 'checked once up front');
    done = true;
    bus.emit('job', { jobId: 'j-1', status: 'succeeded' });
    const r = await within(p, 2000, 'the wait to see the event');
    assert.deepEqual(r, { ok: true, value: { status: 'succeeded' } });
    assert.equal(calls, 2);
    assert.equal(listenerTotal(bus), 0);
  });

  test('re-checks on every relevant event until satisfied; ignores other events', async () => {
    const bus = new Bus();
    let count = 0;
    let calls = 0;
    const p = waitUntil({
      bus, events: ['job', 'request'], timeoutMs: 5000,
      check: () => { calls++; return count >= 3 ? count : undefined; },
    });
    bus.emit('message', { to: 'x' }); // not subscribed
    assert.equal(calls, 1);
    count = 1; bus.emit('job', { jobId: 'a', status: 'running' });
    count = 2; bus.emit('request', { jobId: 'a', requestId: 'r' });
    assert.equal(calls, 3);
    count = 3; bus.emit('job', { jobId: 'a', status: 'succeeded' });
    const r = await within(p, 2000, 'the third event');
    assert.deepEqual(r, { ok: true, value: 3 });
    assert.equal(calls, 4);
  });

  test('an event fired during the first check is not lost', async () => {
    // The state changes and the event fires while the first check is running (after it read
    // stale state): since waitUntil subscribes before checking, the event triggers a re-check.
    const bus = new Bus();
    let state: string | undefined;
    let calls = 0;
    const p = waitUntil<string>({
      bus, events: ['job'], timeoutMs: 2000,
      check: () => {
        calls++;
        const seen = state; // read before the change
        if (calls === 1) {
          state = 'done';
          bus.emit('job', { jobId: 'j', status: 'succeeded' });
        }
        return seen;
      },
    });
    const r = await within(p, 3000, 'the racing wait');
    assert.deepEqual(r, { ok: true, value: 'done' }, 'must not time out');
    assert.equal(listenerTotal(bus), 0);
  });

  test('a throwing check counts as not yet satisfied', async () => {
    const bus = new Bus();
    let calls = 0;
    const p = waitUntil({
      bus, events: ['job'], timeoutMs: 5000,
      check: () => {
        calls++;
        if (calls === 1) throw new Error('db hiccup');
        return 'ok';
      },
    });
    bus.emit('job', { jobId: 'x', status: 'running' });
    assert.deepEqual(await within(p, 2000, 'recovery after a throwing check'), { ok: true, value: 'ok' });
  });

  test('timeout → {ok:false, reason:"timeout"}, listeners removed', async () => {
    const bus = new Bus();
    const timersBefore = activeTimers();
    let calls = 0;
    const r = await within(waitUntil({ bus, events: ['job'], timeoutMs: 30, check: () => { calls++; return undefined; } }), 2000, 'the timeout');
    assert.deepEqual(r, { ok: false, reason: 'timeout' });
    assert.equal(calls, 1);
    assert.equal(listenerTotal(bus), 0);
    assert.equal(activeTimers(), timersBefore);
  });

  test('abort signal → {ok:false, reason:"aborted"}, listeners and timers removed', async () => {
    const bus = new Bus();
    const timersBefore = activeTimers();
    const ac = new AbortController();
    const p = waitUntil({ bus, events: ['job', 'message'], timeoutMs: 60_000, signal: ac.signal, check: () => undefined, onProgress: () => {}, progressEveryMs: 1000 });
    assert.equal(listenerTotal(bus), 2);
    assert.equal(activeTimers(), timersBefore + 2, 'timeout + progress interval while waiting');
    ac.abort();
    const r = await within(p, 2000, 'the abort');
    assert.deepEqual(r, { ok: false, reason: 'aborted' });
    assert.equal(listenerTotal(bus), 0);
    assert.equal(activeTimers(), timersBefore, 'the 60 s timeout is cleared');
  });

  test('an already-aborted signal → aborted at once, even if the check would pass', async () => {
    const bus = new Bus();
    const ac = new AbortController();
    ac.abort();
    const r = await within(waitUntil({ bus, events: ['job'], timeoutMs: 60_000, signal: ac.signal, check: () => 'value' }), 1000, 'an aborted wait');
    assert.deepEqual(r, { ok: false, reason: 'aborted' });
    assert.equal(listenerTotal(bus), 0);
  });

  test('aborting after the wait is satisfied changes nothing', async () => {
    const bus = new Bus();
    const ac = new AbortController();
    const r = await waitUntil({ bus, events: ['job'], timeoutMs: 1000, signal: ac.signal, check: () => 1 });
    ac.abort();
    assert.deepEqual(r, { ok: true, value: 1 });
  });

  test('onProgress ticks every progressEveryMs with growing elapsed times, and stops after settling', async () => {
    const bus = new Bus();
    const timersBefore = activeTimers();
    const ticks: number[] = [];
    const r: WaitResult<never> = await within(waitUntil<never>({
      bus, events: ['job'], timeoutMs: 200, check: () => undefined,
      progressEveryMs: 20, onProgress: (elapsed) => ticks.push(elapsed),
    }), 3000, 'the progress wait');
    assert.deepEqual(r, { ok: false, reason: 'timeout' });
    assert.ok(ticks.length >= 3, `expected ≥ 3 progress calls, got ${ticks.length}`);
    assert.ok(ticks.length <= 11, `expected ≤ 11 progress calls in 200 ms at 20 ms, got ${ticks.length}`);
    for (let i = 1; i < ticks.length; i++) assert.ok(ticks[i]! >= ticks[i - 1]!, 'elapsed never goes backwards');
    assert.ok(ticks[0]! >= 15, `first tick after ~20 ms, got ${ticks[0]}`);
    assert.equal(activeTimers(), timersBefore, 'the progress interval is cleared');
  });

  test('after settling, events no longer call the check', async () => {
    const bus = new Bus();
    let calls = 0;
    let ready = false;
    const p = waitUntil({ bus, events: ['job', 'request'], timeoutMs: 5000, check: () => { calls++; return ready ? true : undefined; } });
    ready = true;
    bus.emit('job', { jobId: 'x', status: 'succeeded' });
    await within(p, 2000, 'the wait');
    const after = calls;
    bus.emit('job', { jobId: 'x', status: 'succeeded' });
    bus.emit('request', { jobId: 'x', requestId: 'r' });
    assert.equal(calls, after);
    assert.equal(listenerTotal(bus), 0);
  });

  test('many concurrent waiters on one bus each get their own result', async () => {
    const bus = new Bus();
    const done = new Set<string>();
    const waits = ['a', 'b', 'c'].map((id) => waitUntil({ bus, events: ['job'], timeoutMs: 5000, check: () => (done.has(id) ? id : undefined) }));
    assert.equal(listenerTotal(bus), 3);
    done.add('b');
    bus.emit('job', { jobId: 'b', status: 'succeeded' });
    assert.equal(listenerTotal(bus), 2, 'only the satisfied waiter unsubscribed');
    done.add('a');
    done.add('c');
    bus.emit('job', { jobId: 'a', status: 'succeeded' });
    const rs = await within(Promise.all(waits), 2000, 'all waiters');
    assert.deepEqual(rs, [{ ok: true, value: 'a' }, { ok: true, value: 'b' }, { ok: true, value: 'c' }]);
    assert.equal(listenerTotal(bus), 0);
  });
});

describe('waitUntil with an asynchronous check', () => {
  /** A check whose reads the test resolves by hand, one at a time. */
  function manualCheck(): { check: () => Promise<string | undefined>; pending: ((v: string | undefined) => void)[]; calls: () => number } {
    const pending: ((v: string | undefined) => void)[] = [];
    let n = 0;
    return {
      check: () => { n++; return new Promise((resolve) => pending.push(resolve)); },
      pending,
      calls: () => n,
    };
  }

  test('events during a check run exactly one more check after it, never overlapping ones', async () => {
    const bus = new Bus();
    const m = manualCheck();
    const p = waitUntil({ bus, events: ['note'], check: m.check, timeoutMs: 5000 });
    assert.equal(m.calls(), 1);
    for (let i = 0; i < 5; i++) bus.emit('note', { key: 'k', version: i });
    assert.equal(m.calls(), 1, 'no second check while the first is in flight');
    m.pending.shift()!(undefined);
    await new Promise<void>((r) => setImmediate(r)); // the re-check starts in the microtasks after the first read resolves
    assert.equal(m.calls(), 2, 'five events during the first check gave one more check');
    m.pending.shift()!('found');
    const r: WaitResult<string> = await within(p, 2000, 'the wait to settle');
    assert.deepEqual(r, { ok: true, value: 'found' });
    assert.equal(listenerTotal(bus), 0);
  });

  test('a rejected check keeps waiting; the next event checks again', async () => {
    const bus = new Bus();
    let n = 0;
    const p = waitUntil({ bus, events: ['note'], timeoutMs: 5000, check: async () => { n++; if (n === 1) throw new Error('read failed'); return n === 2 ? 'second' : undefined; } });
    await within(new Promise<void>((r) => setImmediate(r)), 1000, 'a tick');
    bus.emit('note', { key: 'k', version: 1 });
    assert.deepEqual(await within(p, 2000, 'the wait'), { ok: true, value: 'second' });
  });

  test('a check that settles after the timeout does not override it', async () => {
    const bus = new Bus();
    const m = manualCheck();
    const r = await within(waitUntil({ bus, events: ['note'], check: m.check, timeoutMs: 20 }), 2000, 'the timeout');
    assert.deepEqual(r, { ok: false, reason: 'timeout' });
    m.pending.shift()!('late');
    assert.equal(listenerTotal(bus), 0);
  });
});

describe('Bus.emitSettled', () => {
  test('waits for the asynchronous work subscribers return; a failing subscriber is reported, not thrown, and the others still run', async () => {
    const bus = new Bus();
    const order: string[] = [];
    const errors: unknown[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    bus.on('job', async () => { await gate; order.push('slow'); });
    bus.on('job', () => { throw new Error('sync failure'); });
    bus.on('job', async () => { order.push('fast'); throw new Error('async failure'); });
    let settled = false;
    const p = bus.emitSettled('job', { jobId: 'j-1', status: 'cancelled' }, (e) => errors.push(e)).then(() => { settled = true; });
    await new Promise<void>((r) => setImmediate(r));
    assert.equal(settled, false, 'still waiting for the slow subscriber');
    release();
    await within(p, 2000, 'emitSettled');
    assert.deepEqual(order, ['fast', 'slow']);
    assert.deepEqual(errors.map((e) => (e as Error).message).sort(), ['async failure', 'sync failure']);
  });
});
