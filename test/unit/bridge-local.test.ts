// What `overseer mcp` answers by itself (src/server/bridgeLocal.ts): initialize as the hub
// negotiates it, whether a project may have templates (so prompts/list needs the hub's code),
// and the stdio framing. The answers themselves are compared with a real hub's in
// test/integration/bridge-answers.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { answerInitialize, lineStdio, mayHaveTemplates, type LeadAnswers } from '../../src/server/bridgeLocal.js';

const answers: LeadAnswers = {
  generatedBy: 'test', version: '9.9.9', protocolVersions: ['2025-11-25', '2025-06-18', '2024-11-05'],
  initialize: { capabilities: { tools: { listChanged: true } }, serverInfo: { name: 'overseer', version: '9.9.9' }, instructions: 'hi' },
  lists: { 'tools/list': { tools: [] }, 'prompts/list': { prompts: [] }, 'resources/list': { resources: [] }, 'resources/templates/list': { resourceTemplates: [] } },
};
const client = { capabilities: {}, clientInfo: { name: 'c', version: '1' } };

test('initialize: a known protocol version is kept, an unknown one gets the newest, missing fields are refused', () => {
  assert.deepEqual(answerInitialize(answers, { ...client, protocolVersion: '2024-11-05' }), { result: { protocolVersion: '2024-11-05', ...answers.initialize } });
  assert.equal((answerInitialize(answers, { ...client, protocolVersion: '2099-01-01' }) as { result: { protocolVersion: string } }).result.protocolVersion, '2025-11-25');
  for (const bad of [undefined, { capabilities: {}, clientInfo: {} }, { protocolVersion: '2025-11-25', clientInfo: {} }, { protocolVersion: '2025-11-25', capabilities: {} }]) {
    assert.equal((answerInitialize(answers, bad) as { error: { code: number } }).error.code, -32602, JSON.stringify(bad));
  }
});

test('templates: looked for where the settings directory can be (OVERSEER_SETTINGS_DIR, OVERSEER_HOME, an ancestor\'s .overseer)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ovs-bridge-local-'));
  try {
    const deep = join(dir, 'repo', 'src', 'deep');
    mkdirSync(deep, { recursive: true });
    mkdirSync(join(dir, 'repo', '.overseer', 'templates'), { recursive: true });
    assert.equal(mayHaveTemplates({}, deep), false, 'an empty templates directory');
    writeFileSync(join(dir, 'repo', '.overseer', 'templates', 'notes.txt'), 'not a template');
    assert.equal(mayHaveTemplates({}, deep), false, 'only .md files are templates');
    writeFileSync(join(dir, 'repo', '.overseer', 'templates', 'bugfix.md'), '# fix');
    assert.equal(mayHaveTemplates({}, deep), true, 'found from a subdirectory of the project');
    assert.equal(mayHaveTemplates({ OVERSEER_HOME: join(dir, 'state') }, deep), false, 'OVERSEER_HOME is the settings directory then');
    mkdirSync(join(dir, 'state', 'templates'), { recursive: true });
    writeFileSync(join(dir, 'state', 'templates', 'a.md'), '# a');
    assert.equal(mayHaveTemplates({ OVERSEER_HOME: join(dir, 'state') }, deep), true);
    assert.equal(mayHaveTemplates({ OVERSEER_HOME: join(dir, 'state'), OVERSEER_SETTINGS_DIR: join(dir, 'settings') }, deep), false, 'OVERSEER_SETTINGS_DIR wins');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stdio: messages split across chunks and lines ending in \\r\\n are read; a line that is not JSON-RPC is reported and dropped', async () => {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const got: unknown[] = [];
  const bad: string[] = [];
  let ended = 0;
  const io = lineStdio({ stdin, stdout, onMessage: (m) => got.push(m), onBadLine: (l) => bad.push(l), onEnd: () => { ended++; } });
  stdin.write('{"jsonrpc":"2.0","id":1,"meth');
  stdin.write('od":"ping"}\r\n\nnot json\n{"id":2}\n');
  stdin.end('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  await new Promise((r) => stdin.once('end', r));
  assert.deepEqual(got, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/initialized' }]);
  assert.deepEqual(bad, ['not json', '{"id":2}']);
  assert.equal(ended, 1);
  io.send({ jsonrpc: '2.0', id: 1, result: {} });
  assert.equal(stdout.read()?.toString(), '{"jsonrpc":"2.0","id":1,"result":{}}\n');
});
