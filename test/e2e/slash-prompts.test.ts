// End-to-end: Overseer's MCP prompts used as a person types them in a real Claude Code (claude -p
// with `overseer mcp` as its stdio MCP server, against the fake model). Claude Code splits a
// slash command's text on whitespace across declared arguments, so the prompts declare none and
// the whole request must still reach the model, next to the recipe's instructions.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeAnthropic, type FakeAnthropic } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir, runClaude } from '../helpers/claude.js';

let fake: FakeAnthropic;
let dir: string;

before(async () => {
  fake = await startFakeAnthropic({ scripts: { default: [{ text: 'noted' }] } });
  dir = await makeTempDir('ovs-slash');
  mkdirSync(join(dir, 'state', 'templates'), { recursive: true });
  mkdirSync(join(dir, 'home'));
  mkdirSync(join(dir, 'work'));
  writeFileSync(join(dir, 'state', 'templates', 'bugfix.md'), "---\ndescription: Fix a bug # with a test\nmodel: 'claude-sonnet-4-5'\n---\nWrite the failing test first.\n");
});
after(async () => {
  await fake.close();
  await rm(dir, { recursive: true, force: true });
});

/** Runs `claude -p <line>` with Overseer as MCP server; returns the messages of the model's first request as JSON text. */
async function firstRequestOf(line: string): Promise<string> {
  const mcp = { mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [join(process.cwd(), 'dist/cli/main.js'), 'mcp'] } } };
  const env = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: join(dir, 'state'), CLAUDE_BIN: claudeBin() };
  const before = fake.requests.length;
  const r = await runClaude(['-p', line, '--output-format', 'stream-json', '--verbose', '--mcp-config', JSON.stringify(mcp), '--strict-mcp-config'], { cwd: join(dir, 'work'), env, timeoutMs: 60_000 });
  assert.equal(r.code, 0, r.stdout.slice(-2000));
  const req = fake.requests[before];
  assert.ok(req, 'the model got a request');
  return JSON.stringify(req.body.messages);
}

test('/mcp__overseer__fan-out: the whole request, with its semicolon and every word, reaches the model', { timeout: 120_000 }, async () => {
  const sent = await firstRequestOf('/mcp__overseer__fan-out write tests; update README');
  assert.ok(!sent.includes('no command with that name'), 'Claude Code knows the command');
  assert.ok(sent.includes('Fan out to a crew of Overseer agents'), 'the recipe text is in the request');
  assert.ok(sent.includes('write tests; update README'), `the whole request is in it: ${sent.slice(0, 3000)}`);
});

test('/mcp__overseer__template-bugfix: the whole task reaches the model with the template', { timeout: 120_000 }, async () => {
  const sent = await firstRequestOf('/mcp__overseer__template-bugfix the login form drops the password, fix it; add a test');
  assert.ok(sent.includes('with the project template `bugfix` (Fix a bug)'), `template message: ${sent.slice(0, 3000)}`);
  assert.ok(sent.includes('model claude-sonnet-4-5'), 'the YAML-quoted model arrives without its quotes');
  assert.ok(sent.includes('the login form drops the password, fix it; add a test'), 'the whole task is in it');
});
