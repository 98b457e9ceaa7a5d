// Integration (real bubblewrap, real git): the confinement of a role that writes nothing (a
// reviewer's, a planner's; src/roles). Its whole work tree is mounted read-only — whatever program
// writes, the OS refuses (EROFS), with no help from the hook — and so is the repository's git
// directory of a worktree, which lies outside the tree (`git commit` would write there). The hub's
// state inside the tree stays hidden (the tree is bound first, the hiding on top).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { bwrapArgs } from '../../src/confine/plan.js';
import { planFor } from '../../src/confine/jail.js';
import { probeBwrap } from '../../src/confine/launcher.js';
import { makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo, testGitEnv } from '../helpers/git.js';

const probe = probeBwrap();
let base: string;
let project: string;
let state: string;
let home: string;

before(async () => {
  if (!probe.ok) throw new Error(`needs bubblewrap: ${probe.reason}`);
  base = realpathSync(await makeTempDir('ovs-role-jail'));
  project = join(base, 'project');
  home = join(base, 'home');
  state = join(project, 'state'); // as in the test hubs: the state inside the project
  for (const d of [project, home, state]) mkdirSync(d, { recursive: true });
  await initRepo(project, { 'README.md': '# p\n', 'src.txt': 'original\n', '.gitignore': 'state/\n' });
  writeFileSync(join(state, 'lead.token'), 'secret-token\n');
});

after(async () => { if (base) await rm(base, { recursive: true, force: true }); });

function runIn(tree: string, readOnlyTree: boolean, script: string): { status: number | null; out: string } {
  const plan = planFor(tree, { HOME: home }, { stateDir: state, projectDir: project, packageRoot: realpathSync(join(import.meta.dirname, '..', '..')) }, { readOnlyTree });
  const r = spawnSync(probe.ok ? probe.bwrap : 'bwrap', [...bwrapArgs(plan), '--', 'sh', '-c', script], { cwd: tree, env: { ...testGitEnv(), PATH: process.env.PATH, HOME: home }, encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const WRITES = [
  'echo x > echoed.txt',
  `node -e "require('fs').writeFileSync('noded.txt', 'x')"`,
  `python3 -c "open('py.txt', 'w').write('x')"`,
  'echo more >> src.txt',
  'rm README.md',
  'mkdir newdir',
];

test('a read-only tree: every write fails at the OS, reads and git log work, the state stays hidden', () => {
  for (const w of WRITES) {
    const r = runIn(project, true, w);
    assert.notEqual(r.status, 0, `${w} should fail: ${r.out}`);
    assert.match(r.out, /Read-only file system|EROFS/, `${w}: ${r.out}`);
  }
  assert.equal(runIn(project, true, 'git commit --allow-empty -m x').status === 0, false, 'git commit fails');
  for (const f of ['echoed.txt', 'noded.txt', 'py.txt', 'newdir']) assert.equal(existsSync(join(project, f)), false, f);
  assert.equal(readFileSync(join(project, 'src.txt'), 'utf8'), 'original\n');
  assert.ok(existsSync(join(project, 'README.md')));
  const read = runIn(project, true, 'cat src.txt && git log --oneline');
  assert.equal(read.status, 0, read.out);
  assert.match(read.out, /original\n[0-9a-f]{7,} /);
  const secret = runIn(project, true, `cat ${join(state, 'lead.token')} 2>/dev/null; ls -A ${state} | wc -l`);
  assert.equal(secret.out.trim(), '0', `the state is hidden: ${secret.out}`);
  // Without the role the same tree is writable (the test can fail).
  const rw = runIn(project, false, 'echo x > rw.txt && cat rw.txt');
  assert.equal(rw.status, 0, rw.out);
  execFileSync('rm', [join(project, 'rw.txt')]);
});

test('a read-only worktree: its repository\'s git directory outside the tree is read-only too', async () => {
  const wt = join(base, 'wt');
  await gitOut(project, ['worktree', 'add', '-b', 'review', wt]);
  const before = await gitOut(project, ['rev-parse', 'review']);
  const r = runIn(wt, true, 'git commit --allow-empty -m sneaky');
  assert.notEqual(r.status, 0, r.out);
  assert.equal(await gitOut(project, ['rev-parse', 'review']), before, 'the branch did not move');
  const log = runIn(wt, true, 'git log --oneline');
  assert.equal(log.status, 0, log.out);
});

test('a read-only tree with HOME inside it (as in test hubs): the CLI\'s own files in HOME stay writable, its rules read-only, the rest of the tree read-only', () => {
  const inner = join(project, 'home');
  mkdirSync(join(inner, '.claude'), { recursive: true });
  const plan = planFor(project, { HOME: inner }, { stateDir: state, projectDir: project, packageRoot: realpathSync(join(import.meta.dirname, '..', '..')) }, { readOnlyTree: true });
  assert.deepEqual(plan.writable, [inner]);
  const run = (script: string): { status: number | null; out: string } => {
    const r = spawnSync(probe.ok ? probe.bwrap : 'bwrap', [...bwrapArgs(plan), '--', 'sh', '-c', script], { cwd: project, env: { PATH: process.env.PATH, HOME: inner }, encoding: 'utf8', timeout: 20_000 });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const session = run('mkdir -p "$HOME/.claude/projects/p" && echo turn > "$HOME/.claude/projects/p/s.jsonl" && echo cfg > "$HOME/.claude.json.tmp" && mv "$HOME/.claude.json.tmp" "$HOME/.claude.json"');
  assert.equal(session.status, 0, session.out);
  assert.equal(readFileSync(join(inner, '.claude', 'projects', 'p', 's.jsonl'), 'utf8'), 'turn\n');
  const rules = run('echo "{\\"disableAllHooks\\":true}" > "$HOME/.claude/settings.json"');
  assert.match(rules.out, /Read-only file system/, `the settings stay read-only: ${rules.out}`);
  const tree = run('echo x > echoed.txt');
  assert.match(tree.out, /Read-only file system/, tree.out);
  assert.equal(existsSync(join(project, 'echoed.txt')), false);
  // Without the role nothing is bound back (the tree is writable as it is).
  assert.equal(planFor(project, { HOME: inner }, { stateDir: state, projectDir: project, packageRoot: realpathSync(join(import.meta.dirname, '..', '..')) }).writable, undefined);
});
