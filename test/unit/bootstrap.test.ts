// Worktree bootstrap, the pure parts: copy globs and lockfile detection (src/git/glob.ts,
// src/git/bootstrap.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { globToRegExp, matchGlobs } from '../../src/git/glob.js';
import { detectSetup, setupFailure, type BootstrapReport } from '../../src/git/bootstrap.js';
import { planStack } from '../../src/branches/stack.js';

describe('copy globs', () => {
  test('a pattern without a slash matches a name at any depth; * stays in one segment', () => {
    const paths = ['.env', '.env.local', 'app/.env', 'app/config/.env.test', 'env.txt', 'README.md'];
    assert.deepEqual(matchGlobs(paths, ['.env*']), ['.env', '.env.local', 'app/.env', 'app/config/.env.test']);
    assert.deepEqual(matchGlobs(paths, ['/.env*']), ['.env', '.env.local'], 'a leading slash anchors at the root');
    assert.deepEqual(matchGlobs(paths, ['app/*']), ['app/.env']);
    assert.deepEqual(matchGlobs(paths, ['app/**']), ['app/.env', 'app/config/.env.test']);
    assert.deepEqual(matchGlobs(paths, ['**/config/*.test']), ['app/config/.env.test'], '* matches names starting with a dot too');
    assert.deepEqual(matchGlobs(paths, ['config/*']), [], 'a pattern with a slash is relative to the root');
  });

  test('alternatives, classes and ?; dots are literal; ignored folders as git lists them (trailing slash)', () => {
    assert.ok(globToRegExp('*.{pem,key}').test('certs/dev.pem'));
    assert.ok(!globToRegExp('*.{pem,key}').test('certs/dev.pemx'));
    assert.ok(globToRegExp('file[0-9].txt').test('file7.txt'));
    assert.ok(!globToRegExp('file[!0-9].txt').test('file7.txt'));
    assert.ok(globToRegExp('a?c').test('abc') && !globToRegExp('a?c').test('a/c'));
    assert.ok(!globToRegExp('.env').test('xenv'));
    assert.deepEqual(matchGlobs(['node_modules/', 'dist/'], ['node_modules']), ['node_modules/']);
  });
});

describe('lockfile detection', () => {
  const all = (): boolean => true;
  test('each lockfile implies its install command; pnpm and yarn win over npm', () => {
    assert.deepEqual(detectSetup(new Set(['package-lock.json']), all), { command: 'npm ci' });
    assert.deepEqual(detectSetup(new Set(['package-lock.json', 'pnpm-lock.yaml']), all), { command: 'pnpm install --frozen-lockfile' });
    assert.deepEqual(detectSetup(new Set(['yarn.lock']), all), { command: 'yarn install --immutable' });
    assert.deepEqual(detectSetup(new Set(['uv.lock']), all), { command: 'uv sync' });
    assert.deepEqual(detectSetup(new Set(['requirements.txt']), all), { command: 'pip install -r requirements.txt' });
    assert.deepEqual(detectSetup(new Set(['Cargo.lock']), all), { command: 'cargo fetch' });
    assert.deepEqual(detectSetup(new Set(['go.sum']), all), { command: 'go mod download' });
    assert.deepEqual(detectSetup(new Set(['README.md']), all), {});
  });

  test('a tool that is not installed is reported, not run', () => {
    const r = detectSetup(new Set(['uv.lock']), (bin) => bin !== 'uv');
    assert.equal(r.command, undefined);
    assert.match(r.note!, /found uv\.lock but uv is not on PATH: `uv sync` was not run/);
  });

  test('the job\'s error names the failed command, how it ended and its output', () => {
    const base: BootstrapReport = { status: 'failed', source: 'config', copied: [], duration_ms: 5, commands: [] };
    assert.match(setupFailure({ ...base, commands: [{ command: 'make deps', exit_code: 2, signal: null, timed_out: false, duration_ms: 4, output: 'no rule\n' }] }), /^worktree setup command `make deps` exited 2:\nno rule$/);
    assert.match(setupFailure({ ...base, commands: [{ command: 'sleep 9', exit_code: null, signal: 'SIGTERM', timed_out: true, duration_ms: 1000, output: '' }] }), /`sleep 9` timed out after 1 s$/);
  });
});

describe('what a worktree job stacks on (planStack)', () => {
  const dep = (id: string, o: Partial<{ worktree: boolean; branch: string | null; repoRoot: string }> = {}) => ({ id, title: `t-${id}`, worktree: o.worktree ?? true, branch: o.branch === undefined ? `b-${id}` : o.branch, repoRoot: o.repoRoot ?? '/r' });
  test('no worktree dependency: HEAD; one: its branch; several: the first, the others merged in order', () => {
    assert.deepEqual(planStack({ base: null, repoRoot: '/r', deps: [] }), { merge: [] });
    assert.deepEqual(planStack({ base: null, repoRoot: '/r', deps: [dep('a', { worktree: false, branch: null })] }), { merge: [] });
    assert.deepEqual(planStack({ base: null, repoRoot: '/r', deps: [dep('a')] }), { base: { ref: 'b-a', jobId: 'a' }, merge: [] });
    assert.deepEqual(planStack({ base: null, repoRoot: '/r', deps: [dep('a'), dep('x', { repoRoot: '/other' }), dep('b'), dep('c')] }), {
      base: { ref: 'b-a', jobId: 'a' },
      merge: [{ branch: 'b-b', jobId: 'b', title: 't-b' }, { branch: 'b-c', jobId: 'c', title: 't-c' }],
    });
  });
  test('an explicit base wins: a branch as given, a job by its branch, and nothing is merged', () => {
    assert.deepEqual(planStack({ base: 'branch:release/1.2', repoRoot: '/r', deps: [dep('a'), dep('b')] }), { base: { ref: 'release/1.2' }, merge: [] });
    assert.deepEqual(planStack({ base: 'job:b', repoRoot: '/r', deps: [dep('a'), dep('b')], baseJob: dep('b') }), { base: { ref: 'b-b', jobId: 'b' }, merge: [] });
    assert.deepEqual(planStack({ base: 'job:p', repoRoot: '/r', deps: [], baseJob: dep('p') }), { base: { ref: 'b-p', jobId: 'p' }, merge: [] }, 'the spawning agent itself, not a dependency');
  });
});
