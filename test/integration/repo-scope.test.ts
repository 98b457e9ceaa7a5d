// The lock scope of a work tree from real git (src/services/repoScope.ts): the origin names the
// repository in every clone, the root commit without one; a linked worktree is its own branch; a
// subdirectory keys by the top; a detached HEAD and a plain directory are unshared; a tree with no
// commit yet gets its key in the background once its answer is stale, without a check waiting.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { RepoScopes } from '../../src/services/repoScope.js';
import { UNSHARED } from '../../src/domain/lockKeys.js';
import { makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { eventually } from '../helpers/wait.js';

const temps: string[] = [];
after(async () => { for (const d of temps) await rm(d, { recursive: true, force: true }); });

async function tmp(): Promise<string> {
  const d = realpathSync(await makeTempDir('overseer-repo-scope'));
  temps.push(d);
  return d;
}

test('clones share the origin\'s key on one branch; a linked worktree is its own branch; a subdirectory keys by the top', async () => {
  const d = await tmp();
  const origin = await initRepo(join(d, 'origin'), { 'a.txt': 'a\n', 'sub/b.txt': 'b\n' });
  await gitOut(d, ['clone', '-q', origin, 'one']);
  await gitOut(d, ['clone', '-q', origin, 'two']);
  const s = new RepoScopes();
  const one = await s.scope(join(d, 'one'));
  assert.deepEqual(one, { repo: `file:${origin}@main`, top: join(d, 'one') });
  assert.equal((await s.scope(join(d, 'two'))).repo, one.repo);
  assert.deepEqual(await s.scope(join(d, 'two', 'sub')), { repo: one.repo, top: join(d, 'two') });
  // The origin itself has no origin: its root commit names it.
  const root = await gitOut(origin, ['rev-list', '--max-parents=0', 'HEAD']);
  assert.equal((await s.scope(origin)).repo, `root:${root}@main`);
  await gitOut(join(d, 'one'), ['worktree', 'add', '-q', '-b', 'feature/x', join(d, 'wt')]);
  assert.deepEqual(await s.scope(join(d, 'wt')), { repo: `file:${origin}@feature/x`, top: join(d, 'wt') });
  await gitOut(join(d, 'two'), ['checkout', '-q', '--detach']);
  assert.deepEqual(await s.scope(join(d, 'two')), UNSHARED, 'a detached HEAD (read on each call, not cached) is unshared');
});

test('a plain directory is unshared; a repository without commits gets its key after a commit, looked up in the background', async () => {
  const d = await tmp();
  mkdirSync(join(d, 'plain'));
  let now = 1_000_000;
  const s = new RepoScopes(() => now);
  assert.deepEqual(await s.scope(join(d, 'plain')), UNSHARED);
  const fresh = join(d, 'fresh');
  mkdirSync(fresh);
  await gitOut(fresh, ['init', '-q', '-b', 'main']);
  assert.deepEqual(await s.scope(fresh), UNSHARED, 'no commit and no origin: nothing another clone could share');
  writeFileSync(join(fresh, 'f'), 'f\n');
  await gitOut(fresh, ['add', 'f']);
  await gitOut(fresh, ['-c', 'user.name=T', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'first']);
  assert.deepEqual(await s.scope(fresh), UNSHARED, 'the keyless answer is believed until it is stale');
  now += 11_000;
  assert.deepEqual(await s.scope(fresh), UNSHARED, 'the check that finds it stale answers at once from the old answer');
  const root = await gitOut(fresh, ['rev-list', '--max-parents=0', 'HEAD']);
  await eventually('the background lookup to land', async () => ((await s.scope(fresh)).repo === `root:${root}@main` ? true : undefined), 10_000);
});
