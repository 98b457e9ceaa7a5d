// Integration: a real hub process (`node dist/cli/main.js serve`) serves MCP without loading the
// MCP SDK's server side: no sdk/server/*, no sdk/types.js (its zod message schemas), no hono
// (docs/performance-native-mcp.md). A loader hook (test/fixtures/record-modules.mjs) records
// every module the process resolves while a lead initializes, lists tools, calls one and ends
// its session over HTTP.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/claude.js';
import { eventually } from '../helpers/wait.js';
import { rm } from 'node:fs/promises';

const ROOT = join(import.meta.dirname, '..', '..');

test('a hub serving MCP over HTTP loads no MCP SDK server module, no sdk/types.js and no hono', { timeout: 120_000 }, async () => {
  const dir = await makeTempDir('ovs-modules');
  const state = join(dir, 'state');
  const record = join(dir, 'modules.txt');
  const hub = spawn(process.execPath, ['--import', join(ROOT, 'test', 'fixtures', 'record-modules.mjs'), join(ROOT, 'dist', 'cli', 'main.js'), 'serve'], {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: join(dir, 'home'), OVERSEER_HOME: state, OVERSEER_PORT: '0', OVERSEER_LOG_LEVEL: 'warn', RECORD_MODULES: record },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  hub.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  try {
    const info = await eventually('hub.json', () => {
      assert.equal(hub.exitCode, null, stderr);
      try { return JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { url: string }; } catch { return undefined; }
    }, 30_000, 50);
    const token = readFileSync(join(state, 'lead.token'), 'utf8').trim();
    let sid = '';
    const post = async (body: unknown): Promise<Response> => fetch(info.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(sid ? { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' } : {}) },
      body: JSON.stringify(body),
    });
    const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'modules-test', version: '1' } } });
    sid = init.headers.get('mcp-session-id')!;
    assert.equal(((await init.json()) as { result: { protocolVersion: string } }).result.protocolVersion, '2025-06-18');
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
    const list = (await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' })).json()) as { result: { tools: { name: string }[] } };
    assert.ok(list.result.tools.some((t) => t.name === 'spawn_agent'));
    const call = (await (await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_agents', arguments: {} } })).json()) as { result: { isError?: boolean } };
    assert.equal(call.result.isError, undefined);
    const del = await fetch(info.url, { method: 'DELETE', headers: { authorization: `Bearer ${token}`, 'mcp-session-id': sid } });
    assert.equal(del.status, 200);

    const loaded = readFileSync(record, 'utf8').split('\n').filter(Boolean);
    assert.ok(loaded.some((u) => u.endsWith('/dist/mcp/server.js')), 'the recorder saw the hub\'s own MCP modules');
    assert.ok(loaded.some((u) => u.includes('/@modelcontextprotocol/sdk/')), 'the recorder sees SDK modules (uriTemplate.js)');
    const sdkServer = loaded.filter((u) => /@modelcontextprotocol\/sdk\/dist\/(esm|cjs)\/(server\/|types\.js|shared\/protocol\.js)/.test(u));
    assert.deepEqual(sdkServer, [], 'no MCP SDK server module, message schemas or Protocol');
    assert.deepEqual(loaded.filter((u) => /hono/.test(u)), [], 'no hono');
  } finally {
    hub.kill('SIGTERM');
    await new Promise((r) => (hub.exitCode !== null ? r(undefined) : hub.once('exit', r)));
    await rm(dir, { recursive: true, force: true });
  }
});
