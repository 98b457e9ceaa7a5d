// The lock-mount reconciler (src/confine/lockMounts.ts) with an injected helper: which files each
// running child gets read-only or writable again, from the locks, the seeds and helper failures.
// Real files (a held path must exist to be bound); the real helper runs in the e2e test.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockMounts } from '../../src/confine/lockMounts.js';
import { ChildScopes } from '../../src/confine/childScopes.js';
import type { HeldLock } from '../../src/confine/lockMap.js';
import { silentLogger } from '../../src/log.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'overseer-lockmounts-')));
after(() => rmSync(dir, { recursive: true, force: true }));
/** Locks outside any repository (keyed by their path) and children working in `dir` (no repository). */
const keyed = (held: { path: string; holder: string }[]): HeldLock[] => held.map((h) => ({ repo: '', rel: h.path, ...h }));
const inDir = (running: { jobId: string; pid: number }[]) => running.map((r) => ({ tree: dir, ...r }));
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
    held: async () => keyed(held), running: async () => inDir(running), scopes: new ChildScopes(), nsPid: (pid) => pid + 1000, log: silentLogger, now: () => 0,
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
  w.held.push({ path: b, holder: 'lead' }, { path: join(dir, 'missing.txt'), holder: 'lead' });
  assert.deepEqual(w.m.heldByOthers('j-c'), [], 'a start plans from the locks the last pass read: none yet');
  await w.m.sync(); // the lock change's pass (no child runs yet)
  w.running.push({ jobId: 'j-c', pid: 3 });
  assert.deepEqual(w.m.heldByOthers('j-c'), [b]);
  w.m.seed('j-c', [b]);
  await w.m.sync();
  assert.deepEqual(w.calls, [], 'the plan bound it at start');
});

test('sealed: a held path is sealed when every running child but its holder has it bound, as the last pass and the starts since say', async () => {
  const w = world();
  const a = f('sealed-a.txt');
  w.held.push({ path: a, holder: 'j-h' });
  w.running.push({ jobId: 'j-h', pid: 7 }, { jobId: 'j-o', pid: 8 });
  await w.m.sync();
  assert.deepEqual(w.m.mountedFor('j-o'), [a]);
  assert.equal(w.m.sealed(a, 'j-h'), true);
  w.m.seed('j-new', []); // a child started since the pass, its plan without the file
  assert.equal(w.m.sealed(a, 'j-h'), false, 'a child not bound yet: not sealed');
  w.running.push({ jobId: 'j-new', pid: 9 });
  await w.m.sync();
  assert.equal(w.m.sealed(a, 'j-h'), true);
  assert.equal(w.m.sealed(a, 'j-o'), false, 'held by another: the holder j-h has it writable');
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
    held: async () => keyed([{ path: d, holder: 'j-y' }]), running: async () => inDir([{ jobId: 'j-e', pid: 5 }]), scopes: new ChildScopes(), nsPid: () => 9, log: silentLogger, now: () => 0,
    helper: async () => ({ ok: false, stderr: '' }),
  });
  await m.sync();
  assert.deepEqual(m.mountedFor('j-e'), []);
});

/** A helper that holds each run until the test lets it go, recording what it was asked. */
function heldWorld() {
  const held: { path: string; holder: string }[] = [];
  const running: { jobId: string; pid: number }[] = [];
  const calls: string[][] = [];
  const queue: { args: string[]; done: (r: { ok: boolean; stderr: string; gone?: boolean }) => void }[] = [];
  const arrived: (() => void)[] = [];
  const warnings: string[] = [];
  const log = { ...silentLogger, warn: (_o: unknown, msg?: string) => { warnings.push(String(msg)); } } as unknown as typeof silentLogger;
  const m = new LockMounts({
    held: async () => keyed(held), running: async () => inDir(running), scopes: new ChildScopes(), nsPid: (pid) => pid + 1000, log, now: () => 0,
    helper: (args) => new Promise((done) => {
      calls.push(args);
      queue.push({ args, done });
      arrived.splice(0).forEach((f) => f());
    }),
  });
  /** The next helper run (waits until the reconciler asks for one). */
  const nextRun = async () => {
    if (!queue.length) await new Promise<void>((r) => arrived.push(r));
    return queue.shift()!;
  };
  return { held, running, calls, m, nextRun, warnings };
}

test('makeWritable resolves only after a pass that started after it unbinds the file (not the pass already running)', async () => {
  const w = heldWorld();
  const a = f('handover.txt');
  w.running.push({ jobId: 'j-b', pid: 7 });
  w.m.seed('j-b', [a]); // B started while A held it
  w.held.push({ path: a, holder: 'j-other' }, { path: f('other.txt'), holder: 'j-a' });
  const first = w.m.sync(); // a pass is under way (binding other.txt) when the lock is handed over
  const run1 = await w.nextRun();
  assert.deepEqual(run1.args.slice(1), ['ro', join(dir, 'other.txt')]);
  w.held.splice(0, 1, { path: a, holder: 'j-b' }); // handed over to B
  assert.deepEqual(w.m.stillReadOnly('j-b', [a]), [a]);
  let settled = false;
  const writable = w.m.makeWritable('j-b', [a]).then((r) => { settled = true; return r; });
  run1.done({ ok: true, stderr: '' });
  await first;
  assert.equal(settled, false, 'the pass that was running when the grant came does not count');
  const run2 = await w.nextRun();
  assert.deepEqual(run2.args, ['1007', 'rw', a]);
  assert.equal(settled, false, 'not before the unbind is done');
  run2.done({ ok: true, stderr: '' });
  assert.deepEqual(await writable, []);
  assert.deepEqual(w.m.stillReadOnly('j-b', [a]), []);
});

test('a file that cannot be unbound is returned with the helper\'s reason after a second try, logged as one warning naming the job and file', async () => {
  const w = heldWorld();
  const a = f('stuck.txt');
  w.running.push({ jobId: 'j-s', pid: 8 });
  w.m.seed('j-s', [a]);
  const writable = w.m.makeWritable('j-s', [a]);
  for (let i = 0; i < 2; i++) (await w.nextRun()).done({ ok: false, stderr: `unmount ${a}: Device or resource busy\n` });
  assert.deepEqual(await writable, [{ path: a, error: 'Device or resource busy' }]);
  assert.equal(w.calls.length, 2);
  assert.equal(w.warnings.length, 2, 'one line per failed try');
  assert.match(w.warnings[0]!, new RegExp(`could not make ${a} writable again in job j-s's sandbox: Device or resource busy`));
});

test('a child gone before its mounts are updated: one warning, its record dropped, nothing returned as stuck', async () => {
  const w = heldWorld();
  const a = f('gone.txt');
  w.running.push({ jobId: 'j-g', pid: 9 });
  w.m.seed('j-g', [a]);
  const writable = w.m.makeWritable('j-g', [a]);
  (await w.nextRun()).done({ ok: false, gone: true, stderr: 'process 1009 is gone: its namespace went with it\n' });
  assert.deepEqual(await writable, []);
  assert.deepEqual(w.m.mountedFor('j-g'), []);
  assert.equal(w.warnings.length, 1);
  assert.match(w.warnings[0]!, /job j-g ended before .*gone\.txt could be made writable/);
});

test('a lock taken and handed over while its bind is still in flight: the grantee waits for the unbind that follows', async () => {
  const w = heldWorld();
  const a = f('inflight.txt');
  w.running.push({ jobId: 'j-b', pid: 10 });
  w.held.push({ path: a, holder: 'j-a' }); // A locks it: a pass starts binding it in B
  void w.m.sync();
  const bind = await w.nextRun();
  assert.deepEqual(bind.args, ['1010', 'ro', a]);
  assert.deepEqual(w.m.mountedFor('j-b'), [], 'not bound yet');
  w.held.splice(0, 1, { path: a, holder: 'j-b' }); // A releases, B is granted, before the bind is done
  assert.deepEqual(w.m.stillReadOnly('j-b', [a]), [a], 'the bind under way counts');
  const writable = w.m.makeWritable('j-b', [a]);
  bind.done({ ok: true, stderr: '' });
  const unbind = await w.nextRun();
  assert.deepEqual(unbind.args, ['1010', 'rw', a]);
  unbind.done({ ok: true, stderr: '' });
  assert.deepEqual(await writable, []);
  assert.deepEqual(w.m.mountedFor('j-b'), []);
});

test('a grant while the pass under way is already unbinding the file waits for that part only, not for another pass', async () => {
  const w = heldWorld();
  const a = f('released.txt');
  w.running.push({ jobId: 'j-b', pid: 11 });
  w.m.seed('j-b', [a]); // bound in B while A held it; A has just released it
  void w.m.sync();
  const unbind = await w.nextRun();
  assert.deepEqual(unbind.args, ['1011', 'rw', a]);
  w.held.push({ path: a, holder: 'j-b' }); // granted to B while the unbind runs
  const writable = w.m.makeWritable('j-b', [a]);
  unbind.done({ ok: true, stderr: '' });
  assert.deepEqual(await writable, []);
  assert.equal(w.calls.length, 1, 'no second helper run was waited for');
});
