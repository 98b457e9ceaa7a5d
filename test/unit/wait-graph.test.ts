// findCycle / describeCycle: the wait-for graph of file locks, deadlocks found at request time.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { findCycle, describeCycle, type LockFacts } from '../../src/domain/waitGraph.js';

function facts(holders: Record<string, string>, waiting: Record<string, string[]> = {}): LockFacts {
  return { holders: new Map(Object.entries(holders)), waiting: new Map(Object.entries(waiting)) };
}

describe('findCycle', () => {
  test('no cycle: the holder waits for nothing', () => {
    assert.equal(findCycle(facts({ 'x.ts': 'j-b' }), 'j-a', ['x.ts']), null);
  });
  test('no cycle: nobody holds the path', () => {
    assert.equal(findCycle(facts({}, { 'j-b': ['y.ts'] }), 'j-a', ['y.ts']), null);
  });
  test('2-cycle', () => {
    const f = facts({ 'src/x.ts': 'j-b', 'src/y.ts': 'j-a' }, { 'j-b': ['src/y.ts'] });
    const c = findCycle(f, 'j-a', ['src/x.ts']);
    assert.deepEqual(c, [
      { waiter: 'j-a', holder: 'j-b', path: 'src/x.ts' },
      { waiter: 'j-b', holder: 'j-a', path: 'src/y.ts' },
    ]);
    assert.equal(describeCycle(c ?? []), 'j-a waits for j-b (holds src/x.ts), j-b waits for j-a (holds src/y.ts)');
  });
  test('3-cycle', () => {
    const f = facts({ p: 'j-b', q: 'j-c', r: 'j-a' }, { 'j-b': ['q'], 'j-c': ['r'] });
    assert.deepEqual(findCycle(f, 'j-a', ['p']), [
      { waiter: 'j-a', holder: 'j-b', path: 'p' },
      { waiter: 'j-b', holder: 'j-c', path: 'q' },
      { waiter: 'j-c', holder: 'j-a', path: 'r' },
    ]);
  });
  test('a cycle among others that does not include the requester is not the requester\'s deadlock', () => {
    const f = facts({ p: 'j-b', q: 'j-c', r: 'j-b' }, { 'j-b': ['q'], 'j-c': ['r'] });
    assert.equal(findCycle(f, 'j-a', ['p']), null);
  });
  test('long chain without a cycle', () => {
    const holders: Record<string, string> = {};
    const waiting: Record<string, string[]> = {};
    for (let i = 1; i < 50; i++) {
      holders[`f${i}`] = `j${i}`;
      if (i < 49) waiting[`j${i}`] = [`f${i + 1}`];
    }
    assert.equal(findCycle(facts(holders, waiting), 'j0', ['f1']), null);
  });
  test('requester already holds the path: not a wait', () => {
    assert.equal(findCycle(facts({ 'x.ts': 'j-a' }), 'j-a', ['x.ts']), null);
    const f = facts({ 'x.ts': 'j-a', 'y.ts': 'j-b' }, { 'j-b': ['x.ts'] });
    assert.deepEqual(findCycle(f, 'j-a', ['x.ts', 'y.ts']), [
      { waiter: 'j-a', holder: 'j-b', path: 'y.ts' },
      { waiter: 'j-b', holder: 'j-a', path: 'x.ts' },
    ]);
  });
  test('a waiter waiting on a path it holds itself adds no edge', () => {
    const f = facts({ p: 'j-b', q: 'j-b' }, { 'j-b': ['q'] });
    assert.equal(findCycle(f, 'j-a', ['p']), null);
  });
  test('multiple paths: the cycle goes through the path that closes it', () => {
    const f = facts({ a: 'j-b', b: 'j-c', own: 'j-a' }, { 'j-b': ['free'], 'j-c': ['own'] });
    assert.deepEqual(findCycle(f, 'j-a', ['a', 'b']), [
      { waiter: 'j-a', holder: 'j-c', path: 'b' },
      { waiter: 'j-c', holder: 'j-a', path: 'own' },
    ]);
  });
  test('the shortest cycle is reported', () => {
    // j-a → j-b → j-c → j-a (via p), and j-a → j-c → j-a (via s)
    const f = facts({ p: 'j-b', q: 'j-c', r: 'j-a', s: 'j-c' }, { 'j-b': ['q'], 'j-c': ['r'] });
    assert.equal(findCycle(f, 'j-a', ['p', 's'])?.length, 2);
  });
  test("the requester's own recorded wait is replaced by the new request", () => {
    const f = facts({ p: 'j-b', q: 'j-a' }, { 'j-a': ['p'], 'j-b': ['q'] });
    assert.equal(findCycle(f, 'j-a', ['free']), null);
  });
  test('1,000-node graph: a cycle through all of them in < 50 ms', () => {
    const holders = new Map<string, string>();
    const waiting = new Map<string, string[]>();
    const n = 1000;
    for (let i = 0; i < n; i++) {
      holders.set(`f${i}`, `j${i}`);
      // each node waits on its successor and on a few others, so the graph has ~4,000 edges
      waiting.set(`j${i}`, [`f${(i + 1) % n}`, `f${(i * 7 + 3) % n}`, `f${(i * 13 + 5) % n}`, `f${(i * 31 + 1) % n}`]);
    }
    waiting.delete('j0');
    const t0 = performance.now();
    const c = findCycle({ holders, waiting }, 'j0', ['f1']);
    const ms = performance.now() - t0;
    assert.ok(c, 'expected a cycle');
    assert.equal(c[0]?.waiter, 'j0');
    assert.equal(c[c.length - 1]?.holder, 'j0');
    for (let k = 1; k < c.length; k++) assert.equal(c[k]?.waiter, c[k - 1]?.holder);
    assert.ok(ms < 50, `took ${ms.toFixed(1)} ms`);
  });
  test('1,000-node chain without a cycle in < 50 ms', () => {
    const holders = new Map<string, string>();
    const waiting = new Map<string, string[]>();
    for (let i = 1; i <= 1000; i++) {
      holders.set(`f${i}`, `j${i}`);
      if (i < 1000) waiting.set(`j${i}`, [`f${i + 1}`]);
    }
    const t0 = performance.now();
    assert.equal(findCycle({ holders, waiting }, 'j0', ['f1']), null);
    assert.ok(performance.now() - t0 < 50);
  });
});

describe('describeCycle', () => {
  test('empty cycle → empty text', () => assert.equal(describeCycle([]), ''));
});
