// Integration: the lock hook's decisions (the hub side of POST /hook) on a real hub with real
// files: a write to a directory conflicts with locks inside it, a write inside a locked directory
// conflicts with it, relative targets follow cd/pushd and subshells, writes in $(…) and
// backticks are seen, and a write the hook cannot name is denied in strict mode and recorded in
// auto mode (issue 9).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { count } from '../helpers/state.js';
import { sql } from 'kysely';
import { callAs } from '../helpers/mcp.js';
import type { Config } from '../../src/config.js';

const HANG = { hang: [{ delayMs: 120_000, text: 'never' }] };
const hubs: TestHub[] = [];

async function hubWithAgents(config: Partial<Config> = {}): Promise<{ h: TestHub; root: string; a: { id: string; client: Client }; b: { id: string; client: Client } }> {
  const h = await startTestHub({ scripts: HANG, config, progressEveryMs: 50 });
  hubs.push(h);
  const spawn = async (title: string): Promise<{ id: string; client: Client }> => {
    const id = (await h.call('spawn_agent', { prompt: '@script:hang', title })).job_id as string;
    await waitForJob(h.hub, id, (j) => j.status === 'running');
    return { id, client: await h.connect({ role: 'agent', jobId: id }) };
  };
  const root = realpathSync(h.project);
  mkdirSync(join(root, 'dir', 'sub'), { recursive: true });
  mkdirSync(join(root, 'x'), { recursive: true });
  writeFileSync(join(root, 'dir', 'held.txt'), 'A\n');
  return { h, root, a: await spawn('A'), b: await spawn('B') };
}

after(async () => { for (const h of hubs) await h.stop(); });

const bash = (h: TestHub, jobId: string, command: string, cwd?: string) =>
  h.hub.hook.check({ role: 'agent', jobId }, { tool_name: 'Bash', tool_input: { command }, ...(cwd ? { cwd } : {}) });

describe('auto mode', () => {
  let t: Awaited<ReturnType<typeof hubWithAgents>>;
  before(async () => {
    t = await hubWithAgents();
    const r = await callAs(t.a.client, 'lock_files', { files: ['dir/held.txt'] });
    assert.equal(r.isError, false, r.text);
  });

  const denied = [
    'rm -rf dir', 'mv dir dir2', 'git checkout -- dir', 'git checkout .', 'cp -r x/. dir', 'rm -rf .',
    'cd dir && rm held.txt', 'cd dir/sub && rm ../held.txt', '(cd dir; echo > held.txt)', 'pushd dir; rm held.txt; popd',
    'echo "$(rm dir/held.txt)"', 'echo `rm dir/held.txt`', 'cat <(rm dir/held.txt)', 'x=$(echo hi > dir/held.txt)',
    'rm dir/held.tx?', 'rm dir/{held,other}.txt', 'rm -rf [a-r]*', 'find dir -name held.txt -delete', 'find dir -name held.txt -exec rm {} \\;',
    'git reset --hard', 'git stash', 'git clean -fdx', 'git checkout main', 'rsync -a --delete x/ dir/', 'tar -xf a.tar -C dir',
  ];
  for (const c of denied) {
    test(`B may not: ${c}`, async () => {
      const v = await bash(t.h, t.b.id, c);
      assert.equal(v.decision, 'deny', JSON.stringify(v));
      assert.match(v.reason ?? '', /held\.txt is held by agent/);
    });
  }
  // This hub keeps its state inside the project (startTestHub): `*` expands to it too, and the
  // state guard refuses that before any lock is looked at (docs/security.md).
  test('B may not: rm -rf * (it names the hub state here)', async () => {
    const v = await bash(t.h, t.b.id, 'rm -rf *');
    assert.equal(v.decision, 'deny', JSON.stringify(v));
    assert.match(v.reason ?? '', /may not read the hub's own state, nor name it: `rm -rf \*` names .*\*, in the Overseer hub's own state/);
  });

  const allowed = ['rm -rf x', '(cd dir; ls) > out.log', 'cd x && rm held.txt', 'echo hi > dir/other.txt'];
  for (const c of allowed) {
    test(`B may: ${c}`, async () => assert.equal((await bash(t.h, t.b.id, c)).decision, 'none'));
  }

  test('a held directory covers the files inside it', async () => {
    const r = await callAs(t.a.client, 'lock_files', { files: ['x'] });
    assert.equal(r.isError, false, r.text);
    const v = await t.h.hub.hook.check({ role: 'agent', jobId: t.b.id }, { tool_name: 'Write', tool_input: { file_path: join(t.root, 'x', 'new.txt') } });
    assert.equal(v.decision, 'deny');
    assert.match(v.reason ?? '', /x is held by agent/);
  });

  test('directory targets are checked, never auto-locked', async () => {
    const v = await bash(t.h, t.b.id, 'rm -rf dir/sub');
    assert.equal(v.decision, 'none');
    assert.deepEqual(v.locked, []);
  });

  test('a write the hook cannot name is denied while another agent holds files in the tree', async () => {
    for (const c of ['echo hi > "$OUT"', 'eval "rm dir/held.txt"', 'echo dir/held.txt | xargs rm', 'python3 -c "open(\'dir/held.txt\',\'w\')"', 'node -e "require(\'fs\').writeFileSync(\'dir/held.txt\',\'x\')"', 'F=dir/held.txt; rm "$F"']) {
      const v = await bash(t.h, t.b.id, c);
      assert.equal(v.decision, 'deny', `${c}: ${JSON.stringify(v)}`);
      assert.match(v.reason ?? '', /cannot tell which files .* other agents hold files in your work tree: .*held\.txt is held by agent/);
    }
  });

  test('with no other agent holding files there, it is let through in auto mode and recorded', async () => {
    const solo = await hubWithAgents();
    const unchecked = (): Promise<number> => count(solo.h.hub, sql`SELECT COUNT(*) AS n FROM events WHERE kind = 'lock_unchecked' AND job_id = ${solo.b.id}`);
    const before = await unchecked();
    const v = await bash(solo.h, solo.b.id, 'echo hi > "$OUT"');
    assert.equal(v.decision, 'none');
    assert.match((v as { unchecked?: string }).unchecked ?? '', /could not tell which files/);
    assert.equal(await unchecked(), before + 1);
  });
});

describe('strict mode', () => {
  test('writes the hook cannot name are denied with a reason', async () => {
    const t = await hubWithAgents({ lockMode: 'strict' });
    for (const c of ['echo hi > "$OUT"', 'eval "$CMD"', 'xargs rm < list', 'rm *.txt', 'node -e "x"']) {
      const v = await bash(t.h, t.b.id, c);
      assert.equal(v.decision, 'deny', `${c}: ${JSON.stringify(v)}`);
      assert.match(v.reason ?? '', /strict lock mode: cannot tell which files/);
    }
    for (const c of ['find . -delete', 'git checkout main', 'rm -rf dir']) {
      const v = await bash(t.h, t.b.id, c);
      assert.equal(v.decision, 'deny', `${c}: ${JSON.stringify(v)}`);
      assert.match(v.reason ?? '', /strict lock mode: .* (is a directory|are directories)/);
    }
  });
});

describe('the rules an agent runs under are out of its reach', () => {
  test('hook: Claude settings, .mcp.json, .codex, git hooks/config and the hub state are refused, in every lock mode', async () => {
    for (const lockMode of ['auto', 'off'] as const) {
      const t = await hubWithAgents({ lockMode });
      const home = t.h.hub.ctx.childEnv.HOME ?? '/root';
      const writes: Array<[string, Record<string, unknown>]> = [
        ['Write', { file_path: join(t.root, '.claude', 'settings.local.json'), content: '{"disableAllHooks":true}' }],
        ['Edit', { file_path: join(t.root, '.claude', 'settings.json'), old_string: 'a', new_string: 'b' }],
        ['Write', { file_path: join(t.root, '.claude', 'agents', 'x.md'), content: 'x' }],
        ['Write', { file_path: join(home, '.claude', 'settings.json'), content: '{}' }],
        ['Write', { file_path: join(t.root, '.mcp.json'), content: '{}' }],
        ['Write', { file_path: join(t.root, '.codex', 'hooks.json'), content: '{}' }],
        ['Write', { file_path: join(t.h.home, 'policy.json'), content: '{"rules":[],"default":"allow"}' }],
        ['Bash', { command: `echo '{"disableAllHooks": true}' > .claude/settings.local.json` }],
        ['Bash', { command: 'cd .git/hooks && printf x > pre-commit' }],
        ['Bash', { command: 'echo x >> .git/config' }],
        ['Bash', { command: `cp evil.db ${join(t.h.home, 'state.db')}` }],
      ];
      for (const [tool, input] of writes) {
        const v = await t.h.hub.hook.check({ role: 'agent', jobId: t.b.id }, { tool_name: tool, tool_input: input, cwd: t.root });
        assert.equal(v.decision, 'deny', `${lockMode} ${tool} ${JSON.stringify(input)}: ${JSON.stringify(v)}`);
        assert.match(v.reason ?? '', /agents may not write there/);
      }
      const ok = await t.h.hub.hook.check({ role: 'agent', jobId: t.b.id }, { tool_name: 'Write', tool_input: { file_path: join(t.root, 'src', 'claude.ts') }, cwd: t.root });
      assert.equal(ok.decision, 'none');
      const lead = await t.h.hub.hook.check({ role: 'lead' }, { tool_name: 'Write', tool_input: { file_path: join(t.root, '.claude', 'settings.json') }, cwd: t.root });
      assert.equal(lead.decision, 'none', 'the lead (the person\'s own session) may');
    }
  });

  test('policy: a Write to Claude settings is denied even under a policy that allows everything', async () => {
    const t = await hubWithAgents();
    writeFileSync(join(t.h.home, 'policy.json'), JSON.stringify({ rules: [], default: 'allow' }));
    const r = await callAs(t.b.client, 'check_permission', { tool_name: 'Write', input: { file_path: join(t.root, '.claude', 'settings.local.json'), content: '{}' }, tool_use_id: 't' });
    assert.match(r.text, /"behavior":"deny"/);
    assert.match(r.text, /agents may not write there: .*\.claude directory/);
    const fine = await callAs(t.b.client, 'check_permission', { tool_name: 'Write', input: { file_path: join(t.root, 'a.txt'), content: 'a' }, tool_use_id: 't2' });
    assert.match(fine.text, /"behavior":"allow"/);
  });
});
