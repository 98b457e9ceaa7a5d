// Integration: the hub's native MCP server (src/mcp) against what the MCP SDK's McpServer and
// StreamableHTTPServerTransport did before it: tools/list byte for byte for the lead and an agent
// (the reference is the SDK with the tools registered as before, test/helpers/sdkReference.ts),
// the same capabilities, and the Streamable HTTP answers clients rely on: JSON for calls that
// cannot block, SSE with progress for those that can, batches, the GET stream, DELETE, and the
// SDK's 400/404/405/406/409/415 refusals.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { sdkReferenceServer } from '../helpers/sdkReference.js';
import { silentLogger } from '../../src/log.js';
import type { Caller } from '../../src/services/context.js';
import type { NativeMcpServer } from '../../src/mcp/server.js';

const ACCEPT = 'application/json, text/event-stream';

/** The raw JSON-RPC answer of the SDK reference server to one request (no initialize needed). */
async function reference(caller: Caller, tools: TestHub['hub']['tools'], method: string, params?: object): Promise<any> {
  const server = sdkReferenceServer(tools, caller, silentLogger);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const answer = new Promise<any>((r) => { b.onmessage = (m: any) => { if (m.id === 1) r(m); }; });
  await b.start();
  await b.send({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) } as never);
  const m = await answer;
  await server.close();
  return m;
}

interface Raw { status: number; type: string; text: string; headers: Headers }

describe('the native MCP server', { timeout: 120_000 }, () => {
  let h: TestHub;
  let url: string;
  let token: string;
  const post = async (body: unknown, o: { sid?: string; headers?: Record<string, string>; raw?: string } = {}): Promise<Raw> => {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${token}`, ...(o.sid ? { 'mcp-session-id': o.sid } : {}), ...o.headers },
      body: o.raw ?? JSON.stringify(body),
    });
    return { status: r.status, type: r.headers.get('content-type') ?? '', text: await r.text(), headers: r.headers };
  };
  const open = async (): Promise<string> => {
    const r = await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'native-test', version: '1' } } });
    assert.equal(r.status, 200, r.text);
    assert.match(r.type, /^application\/json/);
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { sid: r.headers.get('mcp-session-id')! })).status, 202);
    return r.headers.get('mcp-session-id')!;
  };

  before(async () => {
    h = await startTestHub({ progressEveryMs: 50 });
    url = h.hub.http!.url;
    token = h.hub.leadToken;
  });
  after(async () => { await h?.stop(); });

  test('tools/list is byte for byte what the SDK McpServer published, for the lead and for an agent', async () => {
    const sid = await open();
    const lead = JSON.parse((await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { sid })).text);
    const leadRef = await reference({ role: 'lead' }, h.hub.tools, 'tools/list');
    assert.ok(lead.result.tools.length > 40);
    assert.equal(JSON.stringify(lead.result), JSON.stringify(leadRef.result));
    // An agent's table, through the same server the hub uses (in memory).
    const conn = h.hub.server({ role: 'agent', jobId: 'j-none' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await conn.connect(a);
    const answer = new Promise<any>((r) => { b.onmessage = (m: any) => { if (m.id === 1) r(m); }; });
    await b.start();
    await b.send({ jsonrpc: '2.0', id: 1, method: 'tools/list' } as never);
    const agent = await answer;
    const agentRef = await reference({ role: 'agent', jobId: 'j-none' }, h.hub.tools, 'tools/list');
    assert.ok(agent.result.tools.length < lead.result.tools.length);
    assert.equal(JSON.stringify(agent.result), JSON.stringify(agentRef.result));
    // The same object for every session of a role: built once.
    const mcp = (h.hub as unknown as { mcp: NativeMcpServer }).mcp;
    assert.equal(mcp.tools('lead').listResult(), mcp.tools('lead').listResult());
    await conn.close();
  });

  test('initialize answers the SDK server\'s capabilities (agent: tools and logging; lead: + prompts, resources, completions)', async () => {
    const ref = await reference({ role: 'agent', jobId: 'j-x' }, h.hub.tools, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } });
    const conn = h.hub.server({ role: 'agent', jobId: 'j-x' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await conn.connect(a);
    const answer = new Promise<any>((r) => { b.onmessage = (m: any) => r(m); });
    await b.start();
    await b.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } } as never);
    const mine = await answer;
    assert.deepEqual(mine.result.capabilities, ref.result.capabilities);
    assert.equal(mine.result.protocolVersion, ref.result.protocolVersion);
    await conn.close();
    const lead = JSON.parse((await post({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2099-01-01', capabilities: {}, clientInfo: { name: 'c', version: '1' } } })).text);
    assert.deepEqual(lead.result.capabilities, { tools: { listChanged: true }, logging: {}, prompts: { listChanged: true }, resources: { listChanged: true }, completions: {} });
    assert.equal(lead.result.protocolVersion, '2025-11-25', 'an unknown version gets the latest');
  });

  test('a batch is answered as one JSON array; notifications and responses only: 202', async () => {
    const sid = await open();
    const r = await post([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_agents', arguments: {} } }, { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } }], { sid });
    assert.match(r.type, /^application\/json/);
    const answers = JSON.parse(r.text);
    assert.deepEqual(answers.map((m: any) => m.id), [1, 2]);
    assert.deepEqual(answers[0].result, {});
    const only = await post({ jsonrpc: '2.0', id: 77, result: {} }, { sid });
    assert.equal(only.status, 202);
    assert.equal(only.text, '');
  });

  test('a blocking call streams SSE with its progress notifications, then its answer', async () => {
    const sid = await open();
    const r = await post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'watch_notes', arguments: { keys: ['native/never'], timeout_s: 0.4 }, _meta: { progressToken: 'p1' } } }, { sid });
    assert.match(r.type, /^text\/event-stream/);
    const events = r.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    assert.ok(events.length >= 2, r.text);
    assert.equal(events.at(-1).id, 5);
    assert.equal(events.at(-1).result.isError, undefined, r.text);
    for (const e of events.slice(0, -1)) {
      assert.equal(e.method, 'notifications/progress');
      assert.equal(e.params.progressToken, 'p1');
    }
  });

  test('the SDK transport\'s refusals: 406, 415, 400 (JSON-RPC, batch size, version, initialize twice), 404 after DELETE, 405, 409', async () => {
    const sid = await open();
    const call = { jsonrpc: '2.0', id: 1, method: 'ping' };
    const err = (r: Raw) => JSON.parse(r.text).error;
    let r = await post(call, { sid, headers: { accept: 'application/json' } });
    assert.equal(r.status, 406);
    assert.equal(err(r).message, 'Not Acceptable: Client must accept both application/json and text/event-stream');
    r = await post(call, { sid, headers: { 'content-type': 'text/plain' } });
    assert.equal(r.status, 415);
    r = await post({ jsonrpc: '2.0', id: 1, method: 'ping', extra: true }, { sid });
    assert.deepEqual([r.status, err(r).code, err(r).message], [400, -32700, 'Parse error: Invalid JSON-RPC message']);
    r = await post(Array.from({ length: 101 }, (_, i) => ({ ...call, id: i })), { sid });
    assert.deepEqual([r.status, err(r).code], [400, -32600]);
    r = await post(call, { sid, headers: { 'mcp-protocol-version': '1999-01-01' } });
    assert.equal(r.status, 400);
    assert.match(err(r).message, /Unsupported protocol version: 1999-01-01/);
    r = await post({ jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } }, { sid });
    assert.deepEqual([r.status, err(r).message], [400, 'Invalid Request: Server already initialized']);
    const headers = { authorization: `Bearer ${token}`, 'mcp-session-id': sid };
    assert.equal((await fetch(url, { method: 'PUT', headers })).status, 405);
    assert.equal((await fetch(url, { headers: { ...headers, accept: 'application/json' } })).status, 406);
    const ac = new AbortController();
    const stream = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: ac.signal });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal((await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } })).status, 409, 'one GET stream per session');
    assert.equal((await fetch(url, { method: 'DELETE', headers })).status, 200);
    const ended = await stream.text().then(() => true, () => true);
    assert.ok(ended, 'DELETE ends the GET stream');
    assert.equal((await post(call, { sid })).status, 404);
    ac.abort();
  });
});
