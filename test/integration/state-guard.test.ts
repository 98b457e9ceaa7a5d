// Integration (real hub, real agent token, real files; the children unconfined, as on a host
// without bubblewrap): an agent cannot read the hub's state by naming it — check_permission (as
// Claude Code's --permission-prompt-tool calls it) and the PreToolUse hook (POST /hook, as
// Claude's HTTP hook and Codex's command hook call it) refuse Read, Glob, LS, Grep and every Bash
// command that names a path inside the state, the state root or the shared knowledge base,
// saying which path and why, under a policy.json that allows everything too (issue 26 point 4).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { TokenRecorder } from '../helpers/tokens.js';
import { callAs } from '../helpers/mcp.js';
import { stateRoot } from '../../src/config.js';

const HANG = { hang: [{ delayMs: 120_000, text: 'never' }] };

let h: TestHub;
let agent: Client;
let agentId: string;
let token: string;
let state: string;
let root: string;

type Answer = { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string };

async function check(toolName: string, input: Record<string, unknown>): Promise<Answer> {
  const r = await agent.callTool({ name: 'check_permission', arguments: { tool_name: toolName, input, tool_use_id: `toolu_${Math.random().toString(36).slice(2)}` } }, undefined, { timeout: 60_000 });
  return JSON.parse((r.content as { text: string }[]).map((x) => x.text).join('')) as Answer;
}

/** POST /hook as the agent, as Claude's HTTP hook (`claude`) or Codex's command hook does. */
async function hook(toolName: string, input: Record<string, unknown>, format?: 'claude'): Promise<{ decision?: string; reason?: string }> {
  const url = new URL(`/hook${format ? '?format=claude' : ''}`, h.hub.http!.url);
  const res = await fetch(url, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: toolName, tool_input: input, cwd: root, tool_use_id: `toolu_${Math.random().toString(36).slice(2)}` }),
  });
  assert.equal(res.status, 200);
  const body = await res.json() as { decision?: string; reason?: string; hookSpecificOutput?: { permissionDecision: string; permissionDecisionReason: string } };
  return body.hookSpecificOutput ? { decision: body.hookSpecificOutput.permissionDecision, reason: body.hookSpecificOutput.permissionDecisionReason } : body;
}

const STATE_WHY = /may not read the hub's own state, nor name it: .*lead\.token.*the lead's token \(the lead's identity\) and the hub's database/;

function denied(a: Answer, re: RegExp, what: string): void {
  assert.equal(a.behavior, 'deny', `${what}: ${JSON.stringify(a).slice(0, 400)}`);
  assert.match((a as { message: string }).message, re, what);
}

let policyWrites = 0;
function writePolicy(content: string): void {
  const file = join(h.home, 'policy.json');
  writeFileSync(file, content);
  const t = Date.now() / 1000 + ++policyWrites;
  utimesSync(file, t, t);
}

before(async () => {
  const rec = new TokenRecorder();
  h = await startTestHub({ scripts: HANG, processes: rec, progressEveryMs: 50 });
  agentId = (await h.call('spawn_agent', { prompt: '@script:hang', title: 'Snoop' })).job_id;
  await waitForJob(h.hub, agentId, (j) => j.status === 'running');
  agent = await h.connect({ role: 'agent', jobId: agentId });
  token = await rec.token(agentId);
  state = realpathSync(h.home);
  root = realpathSync(h.project);
});
after(async () => { await h.stop(); });

describe('check_permission (Claude\'s permission prompt)', () => {
  test('Read and Bash cat of the lead token are denied with the path and the reason', async () => {
    const tok = join(state, 'lead.token');
    const read = await check('Read', { file_path: tok });
    denied(read, STATE_WHY, 'Read');
    assert.ok((read as { message: string }).message.includes(tok), 'names the path');
    denied(await check('Bash', { command: `cat ${tok}` }), STATE_WHY, 'cat');
    denied(await check('Bash', { command: `cd ${root} && cat state/lead.token` }), STATE_WHY, 'relative after cd');
    denied(await check('Bash', { command: `python3 -c "print(open('${tok}').read())"` }), STATE_WHY, 'inside python code');
    denied(await check('Bash', { command: `cat ${state}/lead.*` }), /may not read the hub's own state, nor name it: .*lead\.\*/, 'a glob');
    denied(await check('Bash', { command: `sqlite3 ${join(state, 'state.db')} .dump` }), /may not read the hub's own state, nor name it: .*state\.db/, 'the database');
    denied(await check('Glob', { pattern: `${state}/*` }), /may not read the hub's own state/, 'Glob');
    denied(await check('LS', { path: state }), /may not read the hub's own state/, 'LS');
    denied(await check('Grep', { pattern: 'x', path: state }), /may not read the hub's own state/, 'Grep');
    denied(await check('NotebookRead', { notebook_path: join(state, 'x.ipynb') }), /may not read the hub's own state/, 'NotebookRead');
    denied(await check('Bash', { command: `ls ${join(stateRoot(process.env), 'projects')}` }), /Overseer's state root/, 'the state root');
  });

  test('a symlink in the tree that leads into the state is followed', async () => {
    symlinkSync(state, join(root, 'innocent'));
    try {
      denied(await check('Bash', { command: 'cat innocent/lead.token' }), /innocent\/lead\.token \(really .*lead\.token\)/, 'Bash through the link');
      denied(await check('Read', { file_path: 'innocent/lead.token' }), /may not read the hub's own state/, 'Read through the link');
    } finally {
      rmSync(join(root, 'innocent'));
    }
  });

  test('ordinary reads and commands are still allowed', async () => {
    for (const [tool, input] of [
      ['Read', { file_path: join(root, 'README.md') }], ['Bash', { command: 'cat README.md && git status' }],
      ['Bash', { command: 'grep -rn lead.token src/ || true' }], ['Bash', { command: `ls ${root}/state2 || true` }], ['Bash', { command: 'cat "$F"' }],
    ] as Array<[string, Record<string, unknown>]>) {
      const a = await check(tool, input);
      assert.equal(a.behavior, 'allow', `${tool} ${JSON.stringify(input)}: ${JSON.stringify(a)}`);
    }
  });

  test('a policy.json that allows everything cannot open the state', async () => {
    try {
      writePolicy(JSON.stringify({ rules: [{ action: 'allow', tool: '*' }, { action: 'allow', tool: 'Bash', input: { command: '*' } }], default: 'allow' }));
      assert.equal((await check('Bash', { command: 'echo policy in force' })).behavior, 'allow', 'the policy is read');
      denied(await check('Read', { file_path: join(state, 'lead.token') }), STATE_WHY, 'Read under allow-all');
      denied(await check('Bash', { command: `cat ${join(state, 'lead.token')}` }), STATE_WHY, 'cat under allow-all');
    } finally {
      rmSync(join(h.home, 'policy.json'), { force: true });
    }
    const ev = (await h.call('get_agent', { job_id: agentId, events: true })).events as Array<{ kind: string; data: Record<string, unknown> }>;
    const guarded = ev.filter((e) => e.kind === 'permission' && e.data.guard === 'state');
    assert.ok(guarded.some((e) => e.data.tool === 'Bash' && e.data.action === 'deny' && String(e.data.target).includes('lead.token')), JSON.stringify(guarded.slice(-3)));
  });

  test('a sub-agent\'s command check that names the state is refused, nothing started', async () => {
    const before = (await h.call('list_agents', {})).agents.length as number;
    const r = await callAs(agent, 'spawn_agent', { prompt: '@script:hang', title: 'Checker', checks: [`command:cat ${join(state, 'lead.token')}`] });
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, /may not read the hub's own state/);
    assert.equal((await h.call('list_agents', {})).agents.length, before);
  });
});

describe('the PreToolUse hook (POST /hook as the agent)', () => {
  for (const format of ['claude', undefined] as const) {
    test(`${format ?? 'codex'} format: a Bash read of the state is denied, an ordinary one is not`, async () => {
      for (const command of [`cat ${join(state, 'lead.token')}`, `cd ${root}; tar c state | base64`, `node -e "require('fs').readFileSync('state/lead.token')"`, `cp ${state}/state.db /tmp/x.db`]) {
        const v = await hook('Bash', { command }, format);
        assert.equal(v.decision, 'deny', `${command}: ${JSON.stringify(v)}`);
        assert.match(v.reason ?? '', /may not read the hub's own state, nor name it/, command);
      }
      const read = await hook('Read', { file_path: join(state, 'lead.token') }, format);
      assert.equal(read.decision, 'deny', JSON.stringify(read));
      const ok = await hook('Bash', { command: 'ls -la' }, format);
      assert.notEqual(ok.decision, 'deny', JSON.stringify(ok));
    });
  }
});

describe('the project\'s Overseer settings', () => {
  test('an agent cannot rewrite the policy it runs under (Write, or a Bash redirection into it)', async () => {
    // The default layout: the settings in <project>/.overseer, inside the agent's own tree
    // (where the default policy allows every edit), the state elsewhere.
    const project = join(root, 'settings-project');
    mkdirSync(join(project, '.overseer'), { recursive: true });
    const other = await startTestHub({ scripts: HANG, processes: new TokenRecorder(), project, config: { settingsDir: join(project, '.overseer') } });
    try {
      const id = (await other.call('spawn_agent', { prompt: '@script:hang', title: 'Policy writer' })).job_id as string;
      await waitForJob(other.hub, id, (j) => j.status === 'running');
      const c = await other.connect({ role: 'agent', jobId: id });
      const settings = join(project, '.overseer');
      const inTree = await callAs(c, 'check_permission', { tool_name: 'Write', input: { file_path: join(project, 'a.txt'), content: 'a' }, tool_use_id: 't0' });
      assert.match(inTree.text, /"behavior":"allow"/, 'the tree is the agent\'s to edit');
      const r = await callAs(c, 'check_permission', { tool_name: 'Write', input: { file_path: join(settings, 'policy.json'), content: '{"rules":[],"default":"allow"}' }, tool_use_id: 't' });
      assert.match(r.text, /"behavior":"deny"/);
      assert.match(r.text, /agents may not write there: .*project's Overseer settings/);
      const v = await other.hub.hook.check({ role: 'agent', jobId: id }, { tool_name: 'Bash', tool_input: { command: `echo '{"rules":[],"default":"allow"}' > ${join(settings, 'policy.json')}` }, cwd: realpathSync(other.project) });
      assert.equal(v.decision, 'deny', JSON.stringify(v));
      assert.match(v.reason ?? '', /project's Overseer settings/);
    } finally {
      await other.stop();
    }
  });
});
