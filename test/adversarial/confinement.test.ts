// Adversarial: confinement. A hostile agent names paths outside its tree (absolute, `..`,
// symlinks out, `..` after a symlink, NUL bytes, very long paths, Unicode look-alikes: NFC/NFD,
// fullwidth solidus, RTL override) to lock_files / release_files / list_locks, and work
// directories, branches and template names to spawn_agent. Each is refused, or (for names that
// are legal file names on Linux) resolves inside the agent's tree; no lock row and no job ever
// points outside it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { startAdvHub, callTool, ok, type AdvHub, type Agent } from './harness.js';
import { initRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';
import { Checks, printTally } from './tally.js';
import { sql } from 'kysely';
import { rows } from '../helpers/state.js';

describe('adversarial: confinement', { timeout: 120_000 }, () => {
  let a: AdvHub;
  let A: Agent;
  let root: string;
  let outside: string;

  before(async () => {
    outside = realpathSync(await makeTempDir('ovs-outside'));
    writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    const project = await makeTempDir('ovs-confined');
    await initRepo(project);
    a = await startAdvHub({ project, config: { maxAgents: 64 } });
    root = realpathSync(project);
    mkdirSync(join(root, 'in', 'deep'), { recursive: true });
    symlinkSync(outside, join(root, 'link-out'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'file-out'));
    symlinkSync(join(root, 'in'), join(root, 'link-in'));
    A = await a.agent('confined');
  });
  after(async () => {
    await a?.stop();
    await rm(a?.h.project ?? '', { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
    printTally('confinement');
  });

  const inside = (p: string): boolean => p === root || p.startsWith(root + sep);
  const hostilePaths = (): [string, string][] => [
    ['absolute outside', join(outside, 'secret.txt')],
    ['/etc/passwd', '/etc/passwd'],
    ['..', '..'],
    ['../ sibling dir', `../${outside.split(sep).at(-1)}/secret.txt`],
    ['.. deep', 'in/deep/../../../../../../etc/passwd'],
    ['symlink to a directory outside', 'link-out/secret.txt'],
    ['symlink to a file outside', 'file-out'],
    ['.. after a symlink inside', 'link-in/../../etc/passwd'],
    ['.. after a symlink out', 'link-out/../x'],
    ['NUL byte', 'in/a\u0000/../../../etc/passwd'],
    ['very long path', `${'d/'.repeat(2000)}x`.slice(0, 4096)],
    ['300-character component', `in/${'n'.repeat(300)}`],
    ['fullwidth solidus', '..\uff0f..\uff0fetc\uff0fpasswd'],
    ['division slash', '..\u2215..\u2215etc'],
    ['RTL override', 'in/\u202etxt.exe'],
    ['NFD name', 'in/cafe\u0301.txt'],
    ['NFC name', 'in/caf\u00e9.txt'],
    ['backslashes', '..\\..\\etc\\passwd'],
    ['file: URL', `file://${outside}/secret.txt`],
    ['tilde', '~/.ssh/authorized_keys'],
  ];

  const lockedOutside = async (): Promise<string[]> => (await rows(a.h.hub, sql<{ path: string }>`SELECT path FROM locks`)).map((r) => r.path).filter((p) => !inside(p));

  test('lock_files / release_files / list_locks: every path is refused or stays inside the tree', async () => {
    const c = new Checks('confinement: paths');
    for (const [label, p] of hostilePaths()) {
      const r = await callTool(A.client, 'lock_files', { files: [p], timeout_s: 0 });
      const acquired = r.isError ? [] : (JSON.parse(r.text) as { acquired: string[] }).acquired;
      c.check(`lock_files ${label}`, acquired.every(inside) && !acquired.some((x) => x.includes('\u0000')), r.text);
      const rel = await callTool(A.client, 'release_files', { files: [p] });
      c.check(`release_files ${label}`, rel.isError || ((JSON.parse(rel.text) as { released?: string[] }).released ?? []).every(inside), rel.text);
      const list = await callTool(A.client, 'list_locks', { path_prefix: p });
      c.check(`list_locks ${label}`, list.isError || !list.text.includes(outside), list.text);
    }
    const stray = await lockedOutside();
    c.check('no lock row outside the tree', stray.length === 0, stray.join(', '));
    // Control: a plain path inside is granted, so the checks above can tell refusal from failure.
    assert.deepEqual((await ok(A.client, 'lock_files', { files: ['in/plain.txt'], timeout_s: 0 })).acquired, [join(root, 'in', 'plain.txt')]);
    await ok(A.client, 'release_files', {});
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  test('spawn_agent cwd, branch and template from an agent: refused or inside its tree', async () => {
    const c = new Checks('confinement: spawn');
    const jobsOutside = async (): Promise<string[]> => (await rows(a.h.hub, sql<{ id: string; cwd: string | null }>`SELECT id, cwd FROM jobs`))
      .filter((j) => j.cwd !== null && !inside(realpathOr(j.cwd)) && !j.cwd.includes('.overseer-worktrees')).map((j) => `${j.id} ${j.cwd}`);
    for (const [label, p] of [...hostilePaths(), ['/', '/'] as [string, string], ['the hub state dir', a.h.home]]) {
      const r = await callTool(A.client, 'spawn_agent', { prompt: 'escape', title: `cwd ${label}`, cwd: p });
      c.check(`spawn_agent cwd ${label}`, r.isError || (await jobsOutside()).length === 0, r.text);
    }
    const branches = ['../../etc', '-D', 'HEAD', 'a..b', 'x\u0000y', '@{-1}', 'refs/heads/../../x', 'b'.repeat(300), 'feat\uff0fx', 'feat/\u202ex', 'x.lock', 'a b', 'a~1', 'a^', 'a:b', 'a?', 'a*', 'a[', 'a\\b', '.hidden', 'x/.y', 'main.'];
    for (const b of branches) {
      const r = await callTool(A.client, 'spawn_agent', { prompt: 'escape', title: 'branch', worktree: true, branch: b });
      c.check(`spawn_agent branch ${JSON.stringify(b).slice(0, 40)}`, r.isError, r.text);
    }
    const templates = ['../../etc/passwd', '/etc/passwd', '..', '.', 'x\u0000', '..\uff0fsecret', `../${outside.split(sep).at(-1)}/secret`, '~/.bashrc', 'file:///etc/passwd', 'a/../../b', '\u202eevil'];
    for (const t of templates) {
      const r = await callTool(A.client, 'spawn_agent', { prompt: 'escape', title: 'template', template: t });
      c.check(`spawn_agent template ${JSON.stringify(t)}`, r.isError && !r.text.includes('secret\n') && !r.text.includes('root:'), r.text);
    }
    const strays = await jobsOutside();
    c.check('no job outside the tree', strays.length === 0, strays.join(', '));
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });
});

function realpathOr(p: string): string {
  try { return realpathSync(p); } catch { return p; }
}
