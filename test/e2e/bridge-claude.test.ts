// End-to-end: a real `claude -p` with `overseer mcp` (the built CLI) as its stdio MCP server, no
// hub running yet. The bridge answers Claude Code's start-up requests itself and starts the hub
// behind them (src/server/bridge.ts); the model's tool calls then go through to that hub: a note
// written by one call is read back by the next, and the hub is the one the bridge started.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir, runClaude } from '../helpers/claude.js';
import { MAIN } from '../helpers/cli.js';
import { alive } from '../helpers/wait.js';

let fake: FakeAnthropic;
let dir: string;
let hubPid = 0;

before(async () => {
  assert.ok(existsSync(MAIN), `${MAIN} is missing: run npm run build first`);
  fake = await startFakeAnthropic({
    scripts: {
      notes: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__write_note', input: { key: 'e2e/bridge', value: 'through the bridge' } }] };
        if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__read_note', input: { key: 'e2e/bridge' } }] };
        return { text: `read: ${ctx.lastToolResults[0]?.text.slice(0, 300)}` };
      },
    },
  });
  dir = await makeTempDir('ovs-bridge-e2e');
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'work'));
});
after(async () => {
  if (hubPid && alive(hubPid)) process.kill(hubPid, 'SIGKILL');
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

test('claude calls Overseer tools through overseer mcp, which started the hub behind its first answers', { timeout: 120_000 }, async () => {
  const state = join(dir, 'state');
  const mcp = { mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [MAIN, 'mcp'] } } };
  const env = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: state, CLAUDE_BIN: claudeBin() };
  const r = await runClaude(['-p', '@script:notes keep a note', '--output-format', 'stream-json', '--verbose', '--mcp-config', JSON.stringify(mcp), '--strict-mcp-config', '--allowedTools', 'mcp__overseer__*'], { cwd: join(dir, 'work'), env, timeoutMs: 90_000 });
  assert.equal(r.code, 0, r.stderr.slice(-2000));
  const init = r.events.find((e) => e.type === 'system' && e.subtype === 'init');
  assert.deepEqual(init?.mcp_servers, [{ name: 'overseer', status: 'connected', source: 'dynamic' }]);
  assert.ok((init?.tools as string[]).includes('mcp__overseer__spawn_agent'), 'the lead\'s tools are listed');
  const results = r.events.filter((e) => e.type === 'user').flatMap((e) => (e.message.content as any[]).filter((b) => b.type === 'tool_result'));
  assert.equal(results.length, 2, JSON.stringify(results));
  for (const b of results) assert.notEqual(b.is_error, true, JSON.stringify(b));
  const result = r.events.find((e) => e.type === 'result');
  assert.match(result?.result, /through the bridge/, 'the second call read what the first wrote: both reached the hub');
  const hub = JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number };
  hubPid = hub.pid;
  assert.ok(alive(hub.pid), 'the hub the bridge started outlives the session');
});
