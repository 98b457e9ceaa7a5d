// Locks across clones below the hook (issue 29 point 2): a lock keyed by (repository@branch, path
// inside it) protects the same file in every running child's own checkout of that repository —
// the lock mounts bind it read-only there, the lock guard watches it — and nothing in another
// repository or on another branch; outside a repository a lock matches by its absolute path. Real
// git clones (their keys read by RepoScopes, as the hook reads them), an injected mount helper.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { protectedFiles, protectedFor, type HeldLock } from '../../src/confine/lockMap.js';
import { LockMounts } from '../../src/confine/lockMounts.js';
import { ChildScopes } from '../../src/confine/childScopes.js';
import { LockGuard, type Violation } from '../../src/confine/lockGuard.js';
import { RepoScopes } from '../../src/services/repoScope.js';
import { silentLogger } from '../../src/log.js';

const dir = realpathSync(mkdtempSync(join(tmpdir(), 'overseer-lockclones-')));
after(() => rmSync(dir, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });

/** A repository with src/x.ts committed, cloned twice; another repository with the same file. */
function repos() {
  const origin = join(dir, 'origin');
  const other = join(dir, 'other');
  for (const r of [origin, other]) {
    mkdirSync(join(r, 'src'), { recursive: true });
    writeFileSync(join(r, 'src', 'x.ts'), `export const where = '${r}';\n`);
    git(r, 'init', '-q');
    git(r, 'add', '.');
    git(r, 'commit', '-qm', 'first');
  }
  git(dir, 'clone', '-q', origin, 'c1');
  git(dir, 'clone', '-q', origin, 'c2');
  return { c1: join(dir, 'c1'), c2: join(dir, 'c2'), other };
}
const { c1, c2, other } = repos();

/** The lock A takes on c1/src/x.ts, keyed as the lock service keys it. */
async function lockInC1(holder = 'j-a'): Promise<HeldLock> {
  const [item] = await new RepoScopes().items([join(c1, 'src', 'x.ts')]);
  assert.ok(item!.repo.startsWith('file:') && item!.repo.endsWith('@main'), `keyed by the repository: ${item!.repo}`);
  return { path: item!.path, holder, repo: item!.repo, rel: item!.rel };
}

test('the mapping: another clone of the repository on its branch gets its own copy; another repository or branch does not; outside a repository, the absolute path', async () => {
  const lock = await lockInC1();
  const scopes = new RepoScopes();
  const [s1, s2, so] = await Promise.all([c1, c2, other].map((t) => scopes.scope(t)));
  assert.equal(s2!.repo, lock.repo, 'the two clones share a key');
  const paths = (jobId: string, scope = s2!) => protectedFor({ jobId, scope }, [lock]).map((p) => [p.path, p.own]);
  assert.deepEqual(paths('j-b'), [[lock.path, true], [join(c2, 'src', 'x.ts'), false]], 'same repository, other clone: its own file too');
  assert.deepEqual(paths('j-c', s1), [[lock.path, true]], 'the holder\'s clone: the file itself, once');
  assert.deepEqual(paths('j-o', so), [[lock.path, true]], 'another repository with the same path inside: not its file');
  assert.deepEqual(paths('j-a'), [], 'the holder: nothing');
  assert.deepEqual(paths('j-d', { repo: lock.repo.replace(/@main$/, '@dev'), top: c2 }), [[lock.path, true]], 'another branch: no copy');
  const loose = join(dir, 'loose.txt');
  assert.deepEqual(protectedFor({ jobId: 'j-b', scope: s2! }, [{ path: loose, holder: 'j-a', repo: '', rel: loose }]).map((p) => p.path), [loose], 'outside any repository: the absolute path only');
  assert.deepEqual(protectedFiles([lock], [{ jobId: 'j-b', scope: s2! }, { jobId: 'j-b2', scope: s2! }, { jobId: 'j-a', scope: s1! }, { jobId: 'j-o', scope: so! }]),
    [{ path: lock.path, holder: 'j-a', own: true }, { path: join(c2, 'src', 'x.ts'), holder: 'j-a', own: false }], 'the guard: each file once');
});

test('lock mounts: a child in another clone gets its copy bound read-only (looked up once, not per pass); a child in another repository does not; the release unbinds it', async () => {
  const lock = await lockInC1();
  const held: HeldLock[] = [];
  const running = [
    { jobId: 'j-a', pid: 1, tree: c1 }, { jobId: 'j-b', pid: 2, tree: join(c2, 'src') }, { jobId: 'j-o', pid: 3, tree: other },
  ];
  const calls: string[][] = [];
  let lookups = 0;
  const repoScopes = new RepoScopes();
  const scope = repoScopes.scope.bind(repoScopes);
  repoScopes.scope = (t) => { lookups++; return scope(t); };
  const m = new LockMounts({
    held: async () => held, running: async () => running, scopes: new ChildScopes(repoScopes), nsPid: (pid) => pid + 1000, log: silentLogger, now: () => 0,
    helper: async (args) => { calls.push(args); return { ok: true, stderr: '' }; },
  });
  await m.sync();
  assert.deepEqual(calls, [], 'nothing held');
  held.push(lock);
  await m.sync();
  const copy = join(c2, 'src', 'x.ts');
  assert.deepEqual(m.mountedFor('j-b'), [lock.path, copy].sort(), 'B: A\'s file and the same file in its own clone');
  assert.deepEqual(m.mountedFor('j-o'), [lock.path], 'another repository: A\'s file only, not its own src/x.ts');
  assert.deepEqual(m.mountedFor('j-a'), [], 'the holder: nothing');
  assert.equal(lookups, 3, 'one scope lookup per child');
  assert.deepEqual(m.heldByOthers('j-b'), [lock.path, copy].sort(), 'a start of B plans its copy too');
  assert.equal(m.sealed(lock.path, 'j-a'), true);
  assert.equal(m.sealed(copy, ''), false, 'the copy is not read-only in A or the other repository\'s child');
  held.length = 0;
  await m.sync();
  assert.deepEqual(m.mountedFor('j-b'), []);
  assert.deepEqual((calls as string[][]).find((c) => c[0] === '1002' && c[1] === 'rw')?.slice(2).sort(), [lock.path, copy].sort(), 'both unbound in B');
  assert.equal(lookups, 3, 'no lookup at later passes');
});

test('lock guard: a write to the copy in another clone is undone even while the holder is mid-call; the holder\'s own file is still its own', async () => {
  const lock = await lockInC1('j-g');
  const scopes = new RepoScopes();
  const children = [{ jobId: 'j-g', scope: await scopes.scope(c1) }, { jobId: 'j-w', scope: await scopes.scope(c2) }];
  const reports: Violation[] = [];
  const g = new LockGuard({
    held: async () => protectedFiles([lock], children), keepDir: (w) => join(dir, 'kept', w), report: (v) => reports.push(v), now: () => 7, refused: () => undefined,
  });
  await g.locksChanged();
  const copy = join(c2, 'src', 'x.ts');
  const before = readFileSync(copy, 'utf8');
  g.toolsStarted('j-g', ['h1']); // the holder is mid-call: a change of its own file is its own
  writeFileSync(lock.path, 'holder edits\n');
  g.toolsStarted('j-w', ['w1']);
  writeFileSync(copy, 'writer in clone 2\n');
  const v = g.toolsEnded('j-w', [{ tool: 'Bash', toolUseId: 'w1' }]);
  assert.deepEqual(v.map((x) => [x.path, x.holder, x.writer, x.action]), [[copy, 'j-g', 'j-w', 'restored']]);
  assert.equal(readFileSync(copy, 'utf8'), before, 'clone 2\'s file is put back');
  assert.equal(readFileSync(lock.path, 'utf8'), 'holder edits\n', 'the holder\'s own edit stays');
  g.toolsEnded('j-g', [{ toolUseId: 'h1' }]);
  g.toolsStarted('j-g', ['h2']);
  writeFileSync(copy, 'the holder writes into clone 2\n');
  assert.equal(g.toolsEnded('j-g', [{ toolUseId: 'h2' }]).length, 1, 'not the holder\'s file: its write there is undone too');
  assert.equal(readFileSync(copy, 'utf8'), before);
  assert.equal(reports.length, 2);
});
