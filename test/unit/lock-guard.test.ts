// The lock guard (src/confine/lockGuard.ts) on real files: a held file changed by anyone but its
// holder, while the holder had no tool call in flight, is put back and reported; the holder's own
// writes are not; a file created under a held path that did not exist is removed; what was written
// is kept.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockGuard, type Violation } from '../../src/confine/lockGuard.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'overseer-guard-')));
after(() => rmSync(dir, { recursive: true, force: true }));

async function guard(held: { path: string; holder: string }[]) {
  const reports: Violation[] = [];
  const g = new LockGuard({ held: async () => held, keepDir: (w) => join(dir, 'kept', w), report: (v) => reports.push(v), now: () => 42, refused: () => undefined });
  await g.locksChanged();
  return { g, reports };
}

test('a write by another child while the holder is idle is put back, kept, and reported naming the call', async () => {
  const p = join(dir, 'a.txt');
  writeFileSync(p, 'holder\n');
  const { g, reports } = await guard([{ path: p, holder: 'j-a' }]);
  g.toolsStarted('j-b', ['t1']);
  writeFileSync(p, 'intruder\n');
  const v = g.toolsEnded('j-b', [{ tool: 'Bash', toolUseId: 't1' }]);
  assert.equal(readFileSync(p, 'utf8'), 'holder\n');
  assert.equal(v.length, 1);
  assert.deepEqual({ ...v[0] }, { path: p, holder: 'j-a', writer: 'j-b', tool: 'Bash', toolUseId: 't1', alsoActive: [], action: 'restored', keptAt: join(dir, 'kept', 'j-b', `42-a.txt`) });
  assert.equal(readFileSync(v[0]!.keptAt!, 'utf8'), 'intruder\n');
  assert.equal(reports.length, 1);
});

test('the holder\'s own writes are its content: no violation, and the next check compares with them', async () => {
  const p = join(dir, 'b.txt');
  writeFileSync(p, 'v1\n');
  const { g, reports } = await guard([{ path: p, holder: 'j-a' }]);
  g.toolsStarted('j-a', ['h1']);
  writeFileSync(p, 'v2 by holder\n');
  g.toolsStarted('j-b', ['t1']);
  assert.deepEqual(g.toolsEnded('j-b', [{ toolUseId: 't1' }]), [], 'the holder is mid-call: not judged');
  g.toolsEnded('j-a', [{ toolUseId: 'h1' }]);
  g.toolsStarted('j-b', ['t2']);
  assert.deepEqual(g.toolsEnded('j-b', [{ toolUseId: 't2' }]), []);
  assert.equal(readFileSync(p, 'utf8'), 'v2 by holder\n');
  assert.equal(reports.length, 0);
});

test('a file created under a held path that did not exist is removed and kept; a deleted one is restored', async () => {
  const fresh = join(dir, 'new.txt');
  const gone = join(dir, 'gone.txt');
  writeFileSync(gone, 'keep me\n');
  const { g } = await guard([{ path: fresh, holder: 'j-a' }, { path: gone, holder: 'j-a' }]);
  writeFileSync(fresh, 'sneaky\n');
  rmSync(gone);
  const v = g.toolsEnded('j-c', [{ tool: 'Write', toolUseId: 'x' }]);
  assert.deepEqual(v.map((x) => [x.path, x.action]).sort(), [[fresh, 'removed'], [gone, 'restored']].sort());
  assert.equal(existsSync(fresh), false);
  assert.equal(readFileSync(gone, 'utf8'), 'keep me\n');
});

test('other children mid-call at that moment are named as also active', async () => {
  const p = join(dir, 'c.txt');
  writeFileSync(p, 'x\n');
  const { g } = await guard([{ path: p, holder: 'j-a' }]);
  g.toolsStarted('j-d', ['d1']);
  writeFileSync(p, 'y\n');
  const v = g.toolsEnded('j-b', [{ toolUseId: 'b1' }]);
  assert.deepEqual(v[0]!.alsoActive, ['j-d']);
});

test('a released lock is no longer guarded', async () => {
  const p = join(dir, 'd.txt');
  writeFileSync(p, 'x\n');
  const held = [{ path: p, holder: 'j-a' }];
  const { g } = await guard(held);
  held.length = 0;
  await g.locksChanged();
  writeFileSync(p, 'free to write\n');
  assert.deepEqual(g.toolsEnded('j-b', [{ toolUseId: 'b1' }]), []);
});

test('a file sealed by the lock mounts in every other child changed: it was its holder (or the host): not undone', async () => {
  const p = join(dir, 'sealed.txt');
  writeFileSync(p, 'v1\n');
  const reports: Violation[] = [];
  const g = new LockGuard({ held: async () => [{ path: p, holder: 'j-a' }], keepDir: () => join(dir, 'kept'), report: (v) => reports.push(v), now: () => 0, sealed: () => true, refused: () => undefined });
  await g.locksChanged();
  writeFileSync(p, 'v2 from a background process of the holder\n');
  assert.deepEqual(g.toolsEnded('j-b', [{ toolUseId: 't' }]), []);
  assert.equal(readFileSync(p, 'utf8'), 'v2 from a background process of the holder\n');
  assert.equal(reports.length, 0);
});

test('codex: ends carry other ids than starts, so each end closes the oldest call; its held files are checked once it is idle', async () => {
  const p = join(dir, 'cx.txt');
  writeFileSync(p, 'codex holder\n');
  const { g, reports } = await guard([{ path: p, holder: 'j-cx' }]);
  g.toolsStarted('j-cx', ['call_1', 'call_2']);
  writeFileSync(p, 'codex holder, own write\n');
  g.toolsEnded('j-cx', [{ toolUseId: 'item_0' }], true);
  assert.deepEqual(g.toolsEnded('j-b', [{ toolUseId: 'b1' }]), [], 'one codex call is still in flight: not judged');
  g.toolsEnded('j-cx', [{ toolUseId: 'item_1' }], true);
  writeFileSync(p, 'intruder\n');
  const v = g.toolsEnded('j-b', [{ toolUseId: 'b2' }]);
  assert.equal(v.length, 1);
  assert.equal(readFileSync(p, 'utf8'), 'codex holder, own write\n', 'the codex holder\'s own last write is what is put back');
  assert.equal(reports.length, 1);
});

test('a holder whose process ended is being finished by the hub (its worktree removed): its files are not put back until it starts again', async () => {
  const wt = join(dir, 'wt-ended');
  mkdirSync(wt);
  const p = join(wt, 'e.txt');
  writeFileSync(p, 'holder\n');
  const held = [{ path: p, holder: 'j-e' }];
  const { g, reports } = await guard(held);
  g.jobEnded('j-e');
  rmSync(wt, { recursive: true });
  await g.locksChanged(); // another lock event while it still holds the file: not taken again
  assert.deepEqual(g.toolsEnded('j-b', [{ toolUseId: 'b1' }]), []);
  assert.equal(existsSync(wt), false, 'the removed folder is not brought back');
  assert.equal(reports.length, 0);
  mkdirSync(wt);
  writeFileSync(p, 'resumed\n');
  await g.jobStarted('j-e');
  writeFileSync(p, 'intruder\n');
  const v = g.toolsEnded('j-b', [{ toolUseId: 'b2' }]);
  assert.deepEqual(v.map((x) => x.action), ['restored'], 'guarded again once its process runs');
  assert.equal(readFileSync(p, 'utf8'), 'resumed\n');
});

test('a write that cannot be undone (the file system refuses) is reported with why, never thrown', async () => {
  const folder = join(dir, 'became-a-file');
  mkdirSync(folder);
  const p = join(folder, 'f.txt');
  writeFileSync(p, 'holder\n');
  const { g, reports } = await guard([{ path: p, holder: 'j-a' }]);
  rmSync(folder, { recursive: true });
  writeFileSync(folder, 'a file where the folder was\n'); // nothing can be put back under it, root or not
  const v = g.toolsEnded('j-b', [{ tool: 'Bash', toolUseId: 'b1' }]);
  assert.equal(v.length, 1);
  assert.equal(v[0]!.action, 'reported');
  assert.match(v[0]!.error ?? '', /EEXIST|ENOTDIR/);
  assert.equal(reports.length, 1);
  assert.equal(readFileSync(folder, 'utf8'), 'a file where the folder was\n');
});
