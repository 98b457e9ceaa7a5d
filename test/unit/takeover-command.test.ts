// The interactive command of overseer attach is the launchers' own headless command turned
// interactive: what stays (session, MCP config, hook settings, model, work tree) and what goes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClaudeLauncher } from '../../src/launch/claude/launcher.js';
import { CodexLauncher } from '../../src/launch/codex/launcher.js';
import { interactiveClaude, interactiveCodex, overseerEnv } from '../../src/takeover/command.js';
import type { LaunchSpec } from '../../src/launch/types.js';

const spec: LaunchSpec = {
  jobId: 'j-1', message: '', cwd: '/w/j-1', model: 'sonnet', sessionId: 'sess-1', resume: true, mcpUrl: 'http://127.0.0.1:9/mcp',
  token: 'tok', appendSystemPrompt: '# You are an Overseer agent\n-x', settings: '{"hooks":{}}', env: { PATH: '/bin' }, mcpTimeoutMs: 60_000,
  maxTurns: 5, budgetUsd: 1, jsonSchema: '{"type":"object"}',
} as LaunchSpec;

test('claude: --resume with the MCP config, settings, allowed tools and preamble; no headless flags, no permission tool', () => {
  const cmd = new ClaudeLauncher({ bin: '/bin/claude' }).build(spec, '/bin/claude');
  const a = interactiveClaude(cmd);
  assert.deepEqual(a.slice(a.indexOf('--resume'), a.indexOf('--resume') + 2), ['--resume', 'sess-1']);
  assert.equal(a[a.indexOf('--settings') + 1], '{"hooks":{}}');
  assert.equal(a[a.indexOf('--model') + 1], 'sonnet');
  assert.equal(a[a.indexOf('--append-system-prompt') + 1], spec.appendSystemPrompt, 'a value starting with "#" and holding "-x" is kept whole');
  assert.deepEqual(a.slice(a.indexOf('--allowedTools'), a.indexOf('--allowedTools') + 2), ['--allowedTools', 'mcp__overseer__*']);
  assert.ok(a.includes('--strict-mcp-config') && JSON.parse(a[a.indexOf('--mcp-config') + 1]!).mcpServers.overseer.url === spec.mcpUrl);
  for (const f of ['-p', '--verbose', '--input-format', '--output-format', '--replay-user-messages', '--include-partial-messages', '--permission-prompt-tool', '--disallowedTools', '--max-turns', '--max-budget-usd', '--json-schema', 'stream-json', 'AskUserQuestion']) {
    assert.ok(!a.includes(f), `${f} is dropped`);
  }
  assert.deepEqual(overseerEnv(cmd.env), { OVERSEER_AGENT_ID: 'j-1', OVERSEER_URL: spec.mcpUrl, OVERSEER_TOKEN: 'tok', MCP_TOOL_TIMEOUT: '60000' });
});

test('codex: `codex resume <session>` with the work tree, sandbox, model and MCP/hook overrides; no exec flags', () => {
  const home = mkdtempSync(join(tmpdir(), 'ovs-takeover-'));
  const l = new CodexLauncher({ codexHome: home, nodeBin: '/bin/node', hookScript: '/h.mjs', hook: true, sandbox: 'workspace-write' });
  const cmd = l.build({ ...spec, jsonSchema: undefined }, '/bin/codex');
  const a = interactiveCodex(cmd, 'sess-1');
  assert.deepEqual(a.slice(0, 2), ['resume', 'sess-1']);
  assert.equal(a[a.indexOf('-C') + 1], '/w/j-1');
  assert.equal(a[a.indexOf('-s') + 1], 'workspace-write');
  assert.equal(a[a.indexOf('-m') + 1], 'sonnet');
  assert.ok(a.includes('mcp_servers.overseer.bearer_token_env_var="OVERSEER_TOKEN"'));
  assert.ok(a.includes('--dangerously-bypass-hook-trust') && a.some((x) => x.startsWith('hooks.PreToolUse=')));
  for (const f of ['exec', '--json', '--skip-git-repo-check', '-o', '--disable', '-']) assert.ok(!a.includes(f), `${f} is dropped`);
  assert.equal(a.filter((x) => x === 'resume').length, 1);
  assert.equal(overseerEnv(cmd.env).CODEX_HOME, home);
  rmSync(home, { recursive: true, force: true });
});

test('a role holds in the interactive command: a planner keeps plan mode, a custom role its denied and allowed tools, the tools every child goes without are dropped; a reviewer\'s codex session is read-only', () => {
  const claude = new ClaudeLauncher({ bin: '/bin/claude' });
  const planner = interactiveClaude(claude.build({ ...spec, role: { plan: true, readOnly: true } }, '/bin/claude'));
  assert.deepEqual(planner.slice(planner.indexOf('--permission-mode'), planner.indexOf('--permission-mode') + 2), ['--permission-mode', 'plan']);
  assert.ok(!planner.includes('--disallowedTools'), 'nothing of the role to deny');
  const custom = interactiveClaude(claude.build({ ...spec, role: { disallowedTools: ['WebFetch', 'Bash'], tools: ['Read', 'Grep', 'Bash'] } }, '/bin/claude'));
  const d = custom.indexOf('--disallowedTools');
  assert.deepEqual(custom.slice(d, d + 3), ['--disallowedTools', 'WebFetch', 'Bash'], 'the role\'s denied tools stay, the children\'s own are dropped');
  assert.ok(!custom.includes('AskUserQuestion') && !custom.includes('ScheduleWakeup'));
  assert.equal(custom[custom.indexOf('--tools') + 1], 'Read,Grep,Bash');
  assert.equal(custom[custom.indexOf('--permission-mode') + 1], 'default');
  const home = mkdtempSync(join(tmpdir(), 'ovs-takeover-'));
  const codex = new CodexLauncher({ codexHome: home, nodeBin: '/bin/node', hookScript: '/h.mjs', hook: true, sandbox: 'workspace-write' });
  const rc = codex.build({ ...spec, jsonSchema: undefined, role: { readOnly: true } }, '/bin/codex');
  assert.equal(rc.readOnlyTree, true);
  const a = interactiveCodex(rc, 'sess-1');
  assert.equal(a[a.indexOf('-s') + 1], 'read-only');
  rmSync(home, { recursive: true, force: true });
});
