// The one git runner (src/git/exec.ts) against a real temporary repository: stdout, stderr and
// the exit code; a failure names the command, the directory and git's stderr; allowFail, input,
// env, timeout, a missing directory; gitEnv() keeps GIT_DIR & co. out; gitSync behaves the same.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { GitError, git, gitEnv, gitOut, gitSync } from '../../src/git/exec.js';
import { initRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';

let repo = '';
before(async () => {
  repo = await initRepo(join(await makeTempDir('ovs-git-exec'), 'repo'), { 'a.txt': 'one\n' });
});

test('git resolves with stdout (final newline kept), stderr and code 0', async () => {
  const r = await git(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: repo });
  assert.deepEqual(r, { stdout: 'main\n', stderr: '', code: 0 });
  assert.equal(await gitOut(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: repo }), 'main');
});

test('a failing command rejects with a GitError naming the command, the directory and git\'s stderr', async () => {
  const err = await git(['rev-parse', '--verify', 'no-such-branch'], { cwd: repo }).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof GitError, `expected a GitError, got ${String(err)}`);
  assert.equal(err.code, 128);
  assert.deepEqual(err.args, ['rev-parse', '--verify', 'no-such-branch']);
  assert.match(err.stderr, /fatal: Needed a single revision/);
  assert.match(err.message, /^Command failed with exit code 128: git rev-parse --verify no-such-branch \(in .*repo\)/);
  assert.match(err.message, /Needed a single revision/);
});

test('a silent non-zero exit rejects too; allowFail resolves with the code instead', async () => {
  await assert.rejects(git(['rev-parse', '--verify', '--quiet', 'nope'], { cwd: repo }), (e: unknown) => e instanceof GitError && e.code === 1 && e.stderr === '');
  const r = await git(['rev-parse', '--verify', '--quiet', 'nope'], { cwd: repo, allowFail: true });
  assert.deepEqual(r, { stdout: '', stderr: '', code: 1 });
});

test('input is written to stdin', async () => {
  const sha = await gitOut(['hash-object', '--stdin'], { cwd: repo, input: 'hello\n' });
  assert.equal(sha, 'ce013625030ba8dba906f756967f9e9ca394464a');
});

test('env is the base of the environment; gitEnv drops GIT_DIR-style overrides and adds no-prompt settings', async () => {
  const out = await gitOut(['var', 'GIT_AUTHOR_IDENT'], { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 'Env Person', GIT_AUTHOR_EMAIL: 'env@example.com' } });
  assert.match(out, /^Env Person <env@example.com> /);
  // A GIT_DIR pointing elsewhere would make git look at another repository: it is dropped.
  assert.equal(await gitOut(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: repo, env: { ...process.env, GIT_DIR: '/nonexistent' } }), 'main');
  const e = gitEnv({ PATH: '/bin', GIT_DIR: '/x', GIT_WORK_TREE: '/y' });
  assert.equal(e.GIT_DIR, undefined);
  assert.equal(e.GIT_WORK_TREE, undefined);
  assert.equal(e.GIT_TERMINAL_PROMPT, '0');
  assert.equal(e.LC_ALL, 'C');
  assert.equal(e.PATH, '/bin');
});

test('a missing directory rejects with a GitError that names it', async () => {
  const missing = join(repo, 'no-such-dir');
  await assert.rejects(git(['status'], { cwd: missing }), (e: unknown) => e instanceof GitError && e.message.includes(missing) && /not found|ENOENT/.test(e.message));
});

test('timeout kills git and says so', async () => {
  // A shell alias that outlives the timeout (its sleep holds the pipes until it ends, 1 s).
  const err = await git(['-c', 'alias.wait=!sleep 1', 'wait'], { cwd: repo, timeout: 200 }).then(() => undefined, (e: unknown) => e);
  assert.ok(err instanceof GitError);
  assert.equal(err.signal, 'SIGTERM');
  assert.match(err.message, /killed by SIGTERM \(timed out after 0 s\?\)/);
});

test('gitSync: the same results and errors, synchronously', () => {
  assert.deepEqual(gitSync(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: repo }), { stdout: 'main\n', stderr: '', code: 0 });
  assert.deepEqual(gitSync(['hash-object', '--stdin'], { cwd: repo, input: 'hello\n' }).stdout, 'ce013625030ba8dba906f756967f9e9ca394464a\n');
  assert.equal(gitSync(['rev-parse', '--verify', '--quiet', 'nope'], { cwd: repo, allowFail: true }).code, 1);
  assert.throws(() => gitSync(['rev-parse', '--verify', 'nope'], { cwd: repo }), (e: unknown) => e instanceof GitError && e.code === 128 && /Needed a single revision/.test(e.stderr));
  assert.throws(() => gitSync(['status'], { cwd: join(repo, 'no-such-dir') }), (e: unknown) => e instanceof GitError && e.code === -1);
});
