// The start gate (src/launch/startGate.ts): order kept, slots freed on first event / exit /
// hold timeout, cancel while waiting, never starves; timers injected.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { StartGate, autoStartConcurrency, gateConcurrency, makeStartGate, type GateTimers, type StartTicket } from '../../src/launch/startGate.js';

/** Timers that fire only when the test advances time. */
class FakeTimers implements GateTimers {
  now = 0;
  private next = 1;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.pending.delete(h as number);
  }
  get armed(): number { return this.pending.size; }
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.now = due[1].at;
      due[1].fn();
    }
    this.now = until;
  }
}

function gateOf(n: number | (() => number), holdMs = 1000): { gate: StartGate; timers: FakeTimers; started: string[]; acquire: (name: string) => StartTicket } {
  const timers = new FakeTimers();
  const gate = new StartGate({ concurrency: typeof n === 'number' ? () => n : n, holdMs, timers });
  const started: string[] = [];
  return { gate, timers, started, acquire: (name) => gate.acquire(() => started.push(name)) };
}

describe('StartGate', () => {
  test('grants at once while slots are free, then queues in arrival order', () => {
    const { gate, started, acquire } = gateOf(2);
    const t = ['a', 'b', 'c', 'd', 'e'].map(acquire);
    assert.deepEqual(started, ['a', 'b']);
    assert.deepEqual(t.map((x) => x.granted), [true, true, false, false, false]);
    assert.deepEqual(t.map((x) => x.position()), [0, 0, 0, 1, 2]);
    assert.equal(gate.inFlight, 2);
    assert.equal(gate.waiting, 3);
    t[1]!.release();
    assert.deepEqual(started, ['a', 'b', 'c']);
    t[0]!.release();
    t[2]!.release();
    assert.deepEqual(started, ['a', 'b', 'c', 'd', 'e']);
    assert.equal(gate.waiting, 0);
  });

  test('a release is idempotent: one slot freed once, never two', () => {
    const { gate, started, acquire } = gateOf(1);
    const a = acquire('a');
    acquire('b');
    acquire('c');
    a.release();
    a.release();
    assert.deepEqual(started, ['a', 'b']);
    assert.equal(gate.inFlight, 1);
  });

  test('a slot held too long is freed by the hold timeout, and its later release frees nothing more', () => {
    const { gate, timers, started, acquire } = gateOf(1, 500);
    const a = acquire('a');
    acquire('b');
    acquire('c');
    timers.advance(499);
    assert.deepEqual(started, ['a']);
    timers.advance(1);
    assert.deepEqual(started, ['a', 'b']);
    a.release(); // the child's first event arrives late: b still holds the only slot
    assert.deepEqual(started, ['a', 'b']);
    assert.equal(gate.inFlight, 1);
    timers.advance(500);
    assert.deepEqual(started, ['a', 'b', 'c']);
  });

  test('never starves: with nobody releasing, every start goes within holdMs × its place', () => {
    const { timers, started, acquire } = gateOf(2, 1000);
    for (const n of ['a', 'b', 'c', 'd', 'e', 'f', 'g']) acquire(n);
    timers.advance(1000);
    assert.equal(started.length, 4);
    timers.advance(2000);
    assert.deepEqual(started, ['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    timers.advance(1000);
    assert.equal(timers.armed, 0);
  });

  test('a release clears its hold timer', () => {
    const { timers, acquire } = gateOf(2);
    const a = acquire('a');
    assert.equal(timers.armed, 1);
    a.release();
    assert.equal(timers.armed, 0);
  });

  test('cancel while waiting: leaves the queue, is never started, frees no slot', () => {
    const { gate, started, acquire } = gateOf(1);
    const a = acquire('a');
    const b = acquire('b');
    const c = acquire('c');
    b.release();
    assert.equal(gate.waiting, 1);
    assert.equal(c.position(), 0);
    assert.equal(gate.inFlight, 1);
    a.release();
    assert.deepEqual(started, ['a', 'c']);
    assert.equal(b.granted, false);
  });

  test('the concurrency is read each time: a rise lets more go at the next release', () => {
    let n = 1;
    const { started, acquire } = gateOf(() => n);
    const a = acquire('a');
    acquire('b');
    acquire('c');
    n = 3;
    a.release();
    assert.deepEqual(started, ['a', 'b', 'c']);
  });

  test('a nonsense concurrency counts as 1', () => {
    const { started, acquire } = gateOf(() => NaN);
    acquire('a');
    acquire('b');
    assert.deepEqual(started, ['a']);
  });

  test('a start whose launch throws frees its slot for the next one', () => {
    const timers = new FakeTimers();
    const gate = new StartGate({ concurrency: () => 1, holdMs: 1000, timers });
    const started: string[] = [];
    const a = gate.acquire(() => { throw new Error('boom'); });
    gate.acquire(() => started.push('b'));
    assert.equal(a.granted, true);
    assert.deepEqual(started, ['b']);
    assert.equal(gate.inFlight, 1);
  });
});

describe('start concurrency', () => {
  test('auto: one start per core; wider only by the load others put above 4× the cores', () => {
    assert.equal(autoStartConcurrency(2, 0), 2);
    assert.equal(autoStartConcurrency(2, 8), 2);
    assert.equal(autoStartConcurrency(2, 10), 4);
    assert.equal(autoStartConcurrency(2, 40), 34);
    assert.equal(autoStartConcurrency(0, 0), 1);
  });

  test('auto: this hub\'s own starts in flight do not count as others\' load', () => {
    assert.equal(autoStartConcurrency(2, 11, 2), 3);
    assert.equal(autoStartConcurrency(2, 11, 0), 5);
  });

  test('0 means no gate; a number is fixed; auto is at least 1', () => {
    assert.equal(gateConcurrency(0), undefined);
    assert.equal(makeStartGate(0), undefined);
    assert.equal(gateConcurrency(3)!(), 3);
    assert.ok(gateConcurrency('auto')!() >= 1);
    assert.ok(makeStartGate('auto') instanceof StartGate);
  });
});
