// Unit tests of the git layer (src/git/): real repositories in temp dirs, outcomes checked with
// plain git commands. Push goes to a local bare remote; gh is absent or a fake shell script.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { InvalidInputError } from '../../src/errors.js';
import {
  branchExists,
  createWorktree,
  finishWorktree,
  hasChanges,
  headCommit,
  removeWorktree,
  repoRootOf,
  repoWorktreesDir,
  worktreesBase,
  branchSlug,
} from '../../src/git/worktree.js';
import { readdir } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { gitOut, initRepo, makeBareRemote } from '../helpers/git.js';

let tmp = '';
let seq = 0;

/** A fresh directory under the suite's temp root. */
function fresh(name: string): string {
  seq += 1;
  return path.join(tmp, `${name}-${seq}`);
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}

/** Assert that fn rejects with an InvalidInputError whose message matches every pattern. */
async function rejectsInvalid(fn: () => Promise<unknown>, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(fn, (err: unknown) => {
    assert.ok(err instanceof InvalidInputError, `expected InvalidInputError, got ${String(err)}`);
    assert.equal(err.code, 'invalid_input');
    for (const p of patterns) assert.match(err.message, p);
    return true;
  });
}

/** Where this suite's worktrees go (OVERSEER_WORKTREES_DIR), never the developer's ~/.local/share. */
let wtBase = '';
const savedBase = process.env.OVERSEER_WORKTREES_DIR;

before(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'overseer-git-test-'));
  wtBase = path.join(tmp, 'worktrees-base');
  process.env.OVERSEER_WORKTREES_DIR = wtBase;
});

after(async () => {
  if (savedBase === undefined) delete process.env.OVERSEER_WORKTREES_DIR;
  else process.env.OVERSEER_WORKTREES_DIR = savedBase;
  await rm(tmp, { recursive: true, force: true });
});

describe('repoRootOf', () => {
  test('returns the real top level from a subdirectory and through a symlink', async () => {
    const repo = await initRepo(fresh('root'), { 'src/a.ts': 'export {};\n' });
    assert.equal(await repoRootOf(path.join(repo, 'src')), repo);
    const link = fresh('link');
    await symlink(repo, link);
    assert.equal(await repoRootOf(link), repo);
  });

  test('a directory outside any repository names the cwd and suggests git init', async () => {
    const dir = fresh('plain');
    await mkdir(dir);
    await rejectsInvalid(() => repoRootOf(dir), /not inside a git repository/, new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), /worktree: true/, /git init/);
  });

  test('a repository without commits asks for a first commit', async () => {
    const dir = fresh('empty');
    await mkdir(dir);
    await gitOut(dir, ['init', '-q', '-b', 'main']);
    await rejectsInvalid(() => repoRootOf(dir), /no commits/, /first commit/);
  });

  test('a missing directory is invalid input', async () => {
    await rejectsInvalid(() => repoRootOf(fresh('missing')), /does not exist/);
  });
});

describe('createWorktree', () => {
  test('creates the folder on a new branch at HEAD and keeps the main repo clean', async () => {
    const repo = await initRepo(fresh('create'), { 'a.txt': 'a\n' });
    const head = await gitOut(repo, ['rev-parse', 'HEAD']);
    const wt = await createWorktree({ repoRoot: repo, jobId: 'job-1', branch: 'overseer/job-1' });
    assert.deepEqual(wt, { repoRoot: repo, path: path.join(repoWorktreesDir(wtBase, repo), 'overseer-job-1'), branch: 'overseer/job-1', baseCommit: head });
    assert.ok(!wt.path.startsWith(repo + path.sep), 'outside the repository');
    assert.ok(await exists(path.join(wt.path, 'a.txt')));
    assert.equal(await gitOut(wt.path, ['rev-parse', '--abbrev-ref', 'HEAD']), 'overseer/job-1');
    assert.equal(await gitOut(wt.path, ['rev-parse', 'HEAD']), head);
    assert.match(await gitOut(repo, ['worktree', 'list', '--porcelain']), new RegExp(`worktree ${wt.path}`));
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '', 'worktree folder must be excluded');
  });

  test('adds the exclude lines once, however many worktrees are created', async () => {
    const repo = await initRepo(fresh('exclude'));
    const excludeFile = path.join(repo, '.git', 'info', 'exclude');
    await writeFile(excludeFile, '# custom\n*.log'); // no trailing newline
    await createWorktree({ repoRoot: repo, jobId: 'j1', branch: 'b1' });
    await createWorktree({ repoRoot: repo, jobId: 'j2', branch: 'b2' });
    await Promise.all([
      createWorktree({ repoRoot: repo, jobId: 'j3', branch: 'b3' }),
      createWorktree({ repoRoot: repo, jobId: 'j4', branch: 'b4' }),
    ]);
    const lines = (await readFile(excludeFile, 'utf8')).split('\n');
    assert.equal(lines.filter((l) => l === '.overseer-worktrees/').length, 1);
    assert.equal(lines.filter((l) => l === '.overseer/').length, 1);
    assert.ok(lines.includes('*.log'), 'existing last line kept intact');
    await mkdir(path.join(repo, '.overseer'));
    await writeFile(path.join(repo, '.overseer', 'state.json'), '{}');
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
  });

  test('many concurrent creates and finishes in one repository all succeed', async () => {
    const repo = await initRepo(fresh('concurrent'), { 'a.txt': 'a\n' });
    const ids = Array.from({ length: 8 }, (_, i) => `c${i}`);
    const wts = await Promise.all(ids.map((id) => createWorktree({ repoRoot: repo, jobId: id, branch: `overseer/${id}` })));
    for (const wt of wts) assert.equal(await gitOut(wt.path, ['rev-parse', '--abbrev-ref', 'HEAD']), wt.branch);
    await Promise.all(wts.map((wt) => writeFile(path.join(wt.path, `${path.basename(wt.path)}.txt`), 'x\n')));
    const results = await Promise.all(wts.map((wt) => finishWorktree(wt, { message: `job ${wt.branch}` })));
    for (const r of results) {
      assert.equal(r.committed, true);
      assert.equal(r.filesChanged, 1);
      assert.equal(r.removed, true);
    }
    assert.equal((await gitOut(repo, ['worktree', 'list', '--porcelain'])).split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
    assert.equal((await gitOut(repo, ['branch', '--list', 'overseer/*'])).split('\n').length, 8);
  });

  test('works when the repository is itself a linked worktree (.git is a file)', async () => {
    const main = await initRepo(fresh('mainrepo'));
    const linked = fresh('linked');
    await gitOut(main, ['worktree', 'add', '-q', '-b', 'side', linked]);
    const wt = await createWorktree({ repoRoot: linked, jobId: 'nested', branch: 'nested-branch' });
    assert.equal(wt.repoRoot, await repoRootOf(linked));
    assert.equal(await gitOut(wt.path, ['rev-parse', '--abbrev-ref', 'HEAD']), 'nested-branch');
    const exclude = await readFile(path.join(main, '.git', 'info', 'exclude'), 'utf8');
    assert.match(exclude, /^\.overseer-worktrees\/$/m);
    assert.equal(await gitOut(linked, ['status', '--porcelain']), '');
  });

  test('an existing branch is invalid input naming it and suggesting another branch', async () => {
    const repo = await initRepo(fresh('collide'));
    await gitOut(repo, ['branch', 'taken']);
    await rejectsInvalid(() => createWorktree({ repoRoot: repo, jobId: 'j', branch: 'taken' }), /"taken" already exists/, /`branch`/);
    assert.equal(await exists(path.join(repoWorktreesDir(wtBase, repo), 'taken')), false);
  });

  test('invalid branch names and job ids are rejected before git runs', async () => {
    const repo = await initRepo(fresh('names'));
    await rejectsInvalid(() => createWorktree({ repoRoot: repo, jobId: 'j', branch: '-x' }), /not a valid git branch name/);
    await rejectsInvalid(() => createWorktree({ repoRoot: repo, jobId: 'j', branch: 'a..b' }), /not a valid git branch name/);
    await rejectsInvalid(() => createWorktree({ repoRoot: repo, jobId: '../escape', branch: 'ok' }), /job id/);
  });

  test('not a repository and no commits are invalid input', async () => {
    const plain = fresh('plain2');
    await mkdir(plain);
    await rejectsInvalid(() => createWorktree({ repoRoot: plain, jobId: 'j', branch: 'b' }), /not inside a git repository/, /git init/);
    const empty = fresh('empty2');
    await mkdir(empty);
    await gitOut(empty, ['init', '-q', '-b', 'main']);
    await rejectsInvalid(() => createWorktree({ repoRoot: empty, jobId: 'j', branch: 'b' }), /first commit/);
  });
});

describe('finishWorktree', () => {
  test('commits edits, reports the diff, removes the folder and keeps the branch', async () => {
    const repo = await initRepo(fresh('finish'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const wt = await createWorktree({ repoRoot: repo, jobId: 'f1', branch: 'overseer/f1' });
    await writeFile(path.join(wt.path, 'a.txt'), 'a changed\n');
    await writeFile(path.join(wt.path, 'new-file.md'), 'hello\n');
    const res = await finishWorktree(wt, { message: 'Job f1: edit files' });
    assert.equal(res.committed, true);
    assert.equal(res.branch, 'overseer/f1');
    assert.equal(res.commit, await gitOut(repo, ['rev-parse', 'refs/heads/overseer/f1']));
    assert.match(res.diffStat, /a\.txt/);
    assert.match(res.diffStat, /new-file\.md/);
    assert.equal(res.filesChanged, 2);
    assert.equal(res.pushed, false);
    assert.match(res.note ?? '', /no remote configured/);
    assert.equal(res.removed, true);
    assert.equal(await exists(wt.path), false);
    assert.equal(await gitOut(repo, ['log', 'overseer/f1', '-1', '--format=%s|%an']), 'Job f1: edit files|Test User');
    assert.equal(await gitOut(repo, ['rev-parse', 'overseer/f1^']), wt.baseCommit);
    assert.doesNotMatch(await gitOut(repo, ['worktree', 'list', '--porcelain']), /^worktree .*\/f1$/m); // a path line, not a sha that happens to contain f1
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
  });

  test('counts the agent own commits as well as leftovers', async () => {
    const repo = await initRepo(fresh('own'), { 'a.txt': 'a\n' });
    const wt = await createWorktree({ repoRoot: repo, jobId: 'o1', branch: 'o1' });
    await writeFile(path.join(wt.path, 'x.txt'), 'x\n');
    await gitOut(wt.path, ['add', '-A']);
    await gitOut(wt.path, ['commit', '-q', '-m', 'agent commit']);
    await writeFile(path.join(wt.path, 'y.txt'), 'y\n');
    const res = await finishWorktree(wt, { message: 'leftovers' });
    assert.equal(res.committed, true);
    assert.equal(res.filesChanged, 2);
    assert.equal(await gitOut(repo, ['log', '--format=%s', `${wt.baseCommit}..o1`]), 'leftovers\nagent commit');
  });

  test('no edits: nothing committed, zero files, folder removed, branch kept', async () => {
    const repo = await initRepo(fresh('noedit'));
    const wt = await createWorktree({ repoRoot: repo, jobId: 'n1', branch: 'n1' });
    const res = await finishWorktree(wt, { message: 'unused' });
    assert.equal(res.committed, false);
    assert.equal(res.commit, undefined);
    assert.equal(res.filesChanged, 0);
    assert.equal(res.diffStat, '');
    assert.equal(res.pushed, false);
    assert.equal(res.removed, true);
    assert.equal(await exists(wt.path), false);
    assert.equal(await branchExists(repo, 'n1'), true);
    assert.equal(await gitOut(repo, ['rev-parse', 'n1']), wt.baseCommit);
  });

  test('pushes to a bare origin; a missing gh is a note, not an error', async () => {
    const repo = await initRepo(fresh('push'), { 'a.txt': 'a\n' });
    const bare = await makeBareRemote(fresh('bare'));
    await gitOut(repo, ['remote', 'add', 'origin', bare]);
    const wt = await createWorktree({ repoRoot: repo, jobId: 'p1', branch: 'overseer/p1' });
    await writeFile(path.join(wt.path, 'a.txt'), 'pushed\n');
    const res = await finishWorktree(wt, { message: 'push me', ghBin: '/nonexistent/gh' });
    assert.equal(res.pushed, true);
    assert.equal(res.prUrl, undefined);
    assert.match(res.note ?? '', /gh not installed/);
    assert.equal(await gitOut(bare, ['rev-parse', 'refs/heads/overseer/p1']), res.commit);
    assert.equal(res.removed, true);
  });

  test('a failing push is a note and the work is still committed locally', async () => {
    const repo = await initRepo(fresh('badpush'));
    await gitOut(repo, ['remote', 'add', 'origin', path.join(tmp, 'no-such-remote.git')]);
    const wt = await createWorktree({ repoRoot: repo, jobId: 'bp', branch: 'bp' });
    await writeFile(path.join(wt.path, 'z.txt'), 'z\n');
    const res = await finishWorktree(wt, { message: 'z' });
    assert.equal(res.committed, true);
    assert.equal(res.pushed, false);
    assert.match(res.note ?? '', /push to origin failed/);
    assert.equal(await gitOut(repo, ['rev-parse', 'bp']), res.commit);
  });

  test('opens a PR with gh when gh is authenticated; says so when it is not', async () => {
    const repo = await initRepo(fresh('pr'));
    const bare = await makeBareRemote(fresh('prbare'));
    await gitOut(repo, ['remote', 'add', 'origin', bare]);
    const log = path.join(tmp, 'gh-args.log');
    const fakeGh = path.join(tmp, 'fake-gh');
    await writeFile(fakeGh, `#!/bin/sh\necho "$@" >> '${log}'\nif [ "$1" = auth ]; then exit 0; fi\necho "Creating pull request"\necho "https://github.com/acme/app/pull/42"\n`);
    await chmod(fakeGh, 0o755);
    const wt = await createWorktree({ repoRoot: repo, jobId: 'pr1', branch: 'overseer/pr1' });
    await writeFile(path.join(wt.path, 'f.txt'), 'f\n');
    const res = await finishWorktree(wt, { message: 'pr', ghBin: fakeGh });
    assert.equal(res.pushed, true);
    assert.equal(res.prUrl, 'https://github.com/acme/app/pull/42');
    assert.equal(res.note, undefined);
    assert.deepEqual((await readFile(log, 'utf8')).trim().split('\n'), ['auth status', 'pr create --fill --head overseer/pr1']);

    const noAuthGh = path.join(tmp, 'noauth-gh');
    await writeFile(noAuthGh, '#!/bin/sh\necho "You are not logged into any GitHub hosts." >&2\nexit 1\n');
    await chmod(noAuthGh, 0o755);
    const wt2 = await createWorktree({ repoRoot: repo, jobId: 'pr2', branch: 'overseer/pr2' });
    await writeFile(path.join(wt2.path, 'g.txt'), 'g\n');
    const res2 = await finishWorktree(wt2, { message: 'pr2', ghBin: noAuthGh });
    assert.equal(res2.pushed, true);
    assert.equal(res2.prUrl, undefined);
    assert.match(res2.note ?? '', /gh not authenticated/);
  });

  test('remove: false and push: false keep the folder and skip the push', async () => {
    const repo = await initRepo(fresh('keep'));
    const bare = await makeBareRemote(fresh('keepbare'));
    await gitOut(repo, ['remote', 'add', 'origin', bare]);
    const wt = await createWorktree({ repoRoot: repo, jobId: 'k1', branch: 'k1' });
    await writeFile(path.join(wt.path, 'k.txt'), 'k\n');
    const res = await finishWorktree(wt, { message: 'keep', remove: false, push: false });
    assert.equal(res.committed, true);
    assert.equal(res.pushed, false);
    assert.equal(res.removed, false);
    assert.equal(await exists(wt.path), true);
    assert.equal(await gitOut(bare, ['branch', '--list', 'k1']), '');
    await removeWorktree(repo, wt.path);
    assert.equal(await exists(wt.path), false);
  });

  test('falls back to the Overseer identity when git has none configured', async () => {
    const repo = await initRepo(fresh('noident'));
    await gitOut(repo, ['config', '--unset', 'user.name']);
    await gitOut(repo, ['config', '--unset', 'user.email']);
    const home = fresh('home');
    await mkdir(home);
    const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM };
    process.env.HOME = home;
    process.env.XDG_CONFIG_HOME = home;
    process.env.GIT_CONFIG_NOSYSTEM = '1';
    try {
      const wt = await createWorktree({ repoRoot: repo, jobId: 'id1', branch: 'id1' });
      await writeFile(path.join(wt.path, 'i.txt'), 'i\n');
      const res = await finishWorktree(wt, { message: 'anonymous' });
      assert.equal(res.committed, true, res.note);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    assert.equal(await gitOut(repo, ['log', 'id1', '-1', '--format=%an <%ae>']), 'Overseer <overseer@localhost>');
  });

  test('a worktree moved off its branch is kept for review', async () => {
    const repo = await initRepo(fresh('moved'));
    const wt = await createWorktree({ repoRoot: repo, jobId: 'm1', branch: 'm1' });
    await gitOut(wt.path, ['checkout', '-q', '--detach']);
    const res = await finishWorktree(wt, { message: 'moved' });
    assert.equal(res.removed, false);
    assert.match(res.note ?? '', /detached HEAD/);
    assert.equal(await exists(wt.path), true);
  });
});

describe('hasChanges / headCommit / branchExists / removeWorktree', () => {
  test('hasChanges: clean, untracked, staged, committed, ignored', async () => {
    const repo = await initRepo(fresh('changes'), { '.gitignore': 'dist/\n', 'a.txt': 'a\n' });
    const wt = await createWorktree({ repoRoot: repo, jobId: 'c1', branch: 'c1' });
    assert.equal(await hasChanges(wt.path, wt.baseCommit), false);
    assert.equal(await hasChanges(repo), false, 'plain repo dir, clean');

    await mkdir(path.join(wt.path, 'dist'));
    await writeFile(path.join(wt.path, 'dist', 'out.js'), '1');
    assert.equal(await hasChanges(wt.path, wt.baseCommit), false, 'ignored files do not count');

    await writeFile(path.join(wt.path, 'untracked.txt'), 'u\n');
    assert.equal(await hasChanges(wt.path, wt.baseCommit), true, 'untracked file');
    await gitOut(wt.path, ['add', 'untracked.txt']);
    assert.equal(await hasChanges(wt.path, wt.baseCommit), true, 'staged file');
    await gitOut(wt.path, ['commit', '-q', '-m', 'c']);
    assert.equal(await hasChanges(wt.path), false, 'clean tree without a base');
    assert.equal(await hasChanges(wt.path, wt.baseCommit), true, 'HEAD moved from base');

    await writeFile(path.join(repo, 'a.txt'), 'edited\n');
    assert.equal(await hasChanges(repo), true, 'plain repo dir, modified');
  });

  test('hasChanges outside a repository is invalid input', async () => {
    const dir = fresh('nochanges');
    await mkdir(dir);
    await rejectsInvalid(() => hasChanges(dir), /not inside a git repository/);
  });

  test('headCommit: sha in a repo, undefined without repo or commits', async () => {
    const repo = await initRepo(fresh('head'));
    assert.equal(await headCommit(repo), await gitOut(repo, ['rev-parse', 'HEAD']));
    const plain = fresh('headplain');
    await mkdir(plain);
    assert.equal(await headCommit(plain), undefined);
    assert.equal(await headCommit(fresh('headmissing')), undefined);
    const empty = fresh('headempty');
    await mkdir(empty);
    await gitOut(empty, ['init', '-q', '-b', 'main']);
    assert.equal(await headCommit(empty), undefined);
  });

  test('branchExists matches exact names only', async () => {
    const repo = await initRepo(fresh('branches'));
    await gitOut(repo, ['branch', 'feature/x']);
    assert.equal(await branchExists(repo, 'main'), true);
    assert.equal(await branchExists(repo, 'feature/x'), true);
    assert.equal(await branchExists(repo, 'feature'), false);
    assert.equal(await branchExists(repo, 'mai'), false);
    assert.equal(await branchExists(repo, 'feature/*'), false);
  });

  test('removeWorktree tolerates missing and half-created folders', async () => {
    const repo = await initRepo(fresh('remove'));
    await removeWorktree(repo, path.join(repo, '.overseer-worktrees', 'never-created'));
    const half = path.join(repo, '.overseer-worktrees', 'half');
    await mkdir(half, { recursive: true });
    await writeFile(path.join(half, 'partial'), 'x');
    await removeWorktree(repo, half);
    assert.equal(await exists(half), false);

    const wt = await createWorktree({ repoRoot: repo, jobId: 'r1', branch: 'r1' });
    await writeFile(path.join(wt.path, 'dirty.txt'), 'd\n');
    await removeWorktree(repo, wt.path);
    assert.equal(await exists(wt.path), false);
    // Only the main checkout is left (not a /r1/ match: the temp dir's random name can hold "r1").
    const list = await gitOut(repo, ['worktree', 'list', '--porcelain']);
    assert.equal(list.split('\n').filter((l) => l.startsWith('worktree ')).length, 1, list);
    assert.doesNotMatch(list, /^branch refs\/heads\/r1$/m);
    assert.equal(await branchExists(repo, 'r1'), true);
    await removeWorktree(repo, wt.path); // twice is fine
    assert.equal(await exists(repoWorktreesDir(wtBase, repo)), false, 'the empty per-repository folder is pruned');
  });
});

describe('worktree placement (outside the repository)', () => {
  test('base: config, then OVERSEER_WORKTREES_DIR, then $XDG_DATA_HOME/overseer/worktrees, then ~/.local/share', () => {
    assert.equal(worktreesBase('/cfg/wt', { OVERSEER_WORKTREES_DIR: '/env/wt' }), '/cfg/wt');
    assert.equal(worktreesBase(undefined, { OVERSEER_WORKTREES_DIR: '/env/wt', XDG_DATA_HOME: '/xdg' }), '/env/wt');
    assert.equal(worktreesBase(undefined, { XDG_DATA_HOME: '/xdg', HOME: '/h' }), '/xdg/overseer/worktrees');
    assert.equal(worktreesBase(undefined, { XDG_DATA_HOME: 'relative', HOME: '/h' }), '/h/.local/share/overseer/worktrees', 'a relative XDG_DATA_HOME is ignored (XDG spec)');
    assert.equal(worktreesBase(undefined, { HOME: '/h' }), '/h/.local/share/overseer/worktrees');
  });

  test('per repository: basename plus 8 hex of its path, so two clones named alike differ; branch slugs', () => {
    const a = repoWorktreesDir('/b', '/x/app');
    const b = repoWorktreesDir('/b', '/y/app');
    assert.match(path.basename(a), /^app-[0-9a-f]{8}$/);
    assert.notEqual(a, b);
    assert.equal(repoWorktreesDir('/b', '/x/app'), a, 'stable');
    assert.equal(branchSlug('overseer/fix login'), 'overseer-fix-login');
    assert.equal(branchSlug('///'), 'branch');
  });

  test('two branches with the same slug get two folders', async () => {
    const repo = await initRepo(fresh('slug'));
    const one = await createWorktree({ repoRoot: repo, jobId: 's1', branch: 'a/b' });
    const two = await createWorktree({ repoRoot: repo, jobId: 's2', branch: 'a-b' });
    assert.notEqual(one.path, two.path);
    assert.equal(path.basename(two.path), 'a-b-s2');
    assert.equal(await gitOut(two.path, ['rev-parse', '--abbrev-ref', 'HEAD']), 'a-b');
  });

  test('a test runner\'s glob in the main checkout sees no worktree file', async () => {
    const repo = await initRepo(fresh('glob'), { 'test/a.test.js': 'x\n' });
    const wt = await createWorktree({ repoRoot: repo, jobId: 'g1', branch: 'overseer/g1' });
    assert.ok(await exists(path.join(wt.path, 'test', 'a.test.js')), 'the worktree has the test file');
    // What `node --test` and linters do: walk the checkout for matching files.
    const found = (await readdir(repo, { recursive: true })).map(String).filter((f) => f.endsWith('.test.js') && !f.split(path.sep).includes('.git'));
    assert.deepEqual(found, [path.join('test', 'a.test.js')]);
    const grep = await promisify(execFile)('grep', ['-rl', '--exclude-dir=.git', 'x', '.'], { cwd: repo });
    assert.deepEqual(grep.stdout.trim().split('\n'), ['./test/a.test.js']);
  });

  test('an old-style worktree under <repo>/.overseer-worktrees is removed, with its empty folder', async () => {
    const repo = await initRepo(fresh('legacy'));
    const old = path.join(repo, '.overseer-worktrees', 'job-old');
    await gitOut(repo, ['worktree', 'add', '-q', '-b', 'overseer/old', old]);
    await writeFile(path.join(old, 'work.txt'), 'w\n');
    await removeWorktree(repo, old);
    assert.equal(await exists(old), false);
    assert.equal(await exists(path.join(repo, '.overseer-worktrees')), false, 'empty .overseer-worktrees pruned');
    assert.doesNotMatch(await gitOut(repo, ['worktree', 'list', '--porcelain']), /job-old/);
  });

  test('removeWorktree never deletes an unregistered folder that Overseer did not place', async () => {
    const repo = await initRepo(fresh('foreign'));
    const foreign = path.join(tmp, `foreign-${seq}`, 'keep');
    await mkdir(foreign, { recursive: true });
    await writeFile(path.join(foreign, 'f'), 'f');
    await removeWorktree(repo, foreign);
    assert.equal(await exists(path.join(foreign, 'f')), true);
  });
});
