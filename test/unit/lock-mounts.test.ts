// The lock-mount reconciler (src/confine/lockMounts.ts) with an injected helper: which files each
// running child gets read-only or writable again, from the locks, the seeds and helper failures.
// Real files (a held path must exist to be bound); the real helper runs in the e2e test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockMounts } from '../../src/confine/lockMounts.js';
import { silentLogger } from '../../src/log.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'overseer-lockmounts-')));
after(() => rmSync(dir, { recursive: true, force: true }));
const f = (name: string): string => {
  const p = join(dir, name);
  writeFileSync(p, name);
  return p;
};

function world() {
  const held: { path: string; holder: string }[] = [];
  const running: { jobId: string; pid: number }[] = [];
  const calls: string[][] = [];
  let fail: string | undefined;
  const m = new LockMounts({
    held: () => held, running: () => running, nsPid: (pid) => pid + 1000, log: silentLogger, now: () => 0,
    helper: async (args) => {
      calls.push(args);
      if (fail && args.includes(fail)) return { ok: false, stderr: `bind ${fail}: Permission denied\n` };
      return { ok: true, stderr: '' };
    },
  });
  return { held, running, calls, m, failOn: (p: string | undefined) => { fail = p; } };
}

test('a lock makes the file read-only in every other running child, not in the holder; its end undoes it', async () => {
  const w = world();
  const a = f('a.txt');
  w.running.push({ jobId: 'j-a', pid: 1 }, { jobId: 'j-b', pid: 2 });
  w.held.push({ path: a, holder: 'j-a' });
  await w.m.sync();
  assert.deepEqual(w.calls, [['1002', 'ro', a]]);
  assert.deepEqual(w.m.mountedFor('j-b'), [a]);
  assert.deepEqual(w.m.mountedFor('j-a'), []);
  await w.m.sync();
  assert.equal(w.calls.length, 1, 'nothing changed: no helper run');
  w.held.length = 0;
  await w.m.sync();
  assert.deepEqual(w.calls.at(-1), ['1002', 'rw', a]);
  assert.deepEqual(w.m.mountedFor('j-b'), []);
});

test('the lead\'s locks bind in every child; paths that do not exist are skipped; a seeded child is not bound twice', async () => {
  const w = world();
  const b = f('b.txt');
  w.running.push({ jobId: 'j-c', pid: 3 });
  w.held.push({ path: b, holder: 'lead' }, { path: join(dir, 'missing.txt'), holder: 'lead' });
  assert.deepEqual(w.m.heldByOthers('j-c'), [b]);
  w.m.seed('j-c', [b]);
  await w.m.sync();
  assert.deepEqual(w.calls, [], 'the plan bound it at start');
});

test('a path the helper could not bind is not counted and is tried again next pass; an ended job is forgotten', async () => {
  const w = world();
  const c = f('c.txt');
  w.running.push({ jobId: 'j-d', pid: 4 });
  w.held.push({ path: c, holder: 'j-x' });
  w.failOn(c);
  await w.m.sync();
  assert.deepEqual(w.m.mountedFor('j-d'), []);
  w.failOn(undefined);
  await w.m.sync();
  assert.deepEqual(w.m.mountedFor('j-d'), [c]);
  w.running.length = 0;
  await w.m.sync();
  assert.deepEqual(w.m.mountedFor('j-d'), []);
});

test('a helper that fails without naming a path (could not start) leaves every path undone', async () => {
  const d = f('d.txt');
  const m = new LockMounts({
    held: () => [{ path: d, holder: 'j-y' }], running: () => [{ jobId: 'j-e', pid: 5 }], nsPid: () => 9, log: silentLogger, now: () => 0,
    helper: async () => ({ ok: false, stderr: '' }),
  });
  await m.sync();
  assert.deepEqual(m.mountedFor('j-e'), []);
});
