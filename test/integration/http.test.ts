// Integration: the hub's Streamable HTTP endpoint (loopback, bearer tokens, Host/Origin
// checks, sessions bound to their token), with raw requests and with the MCP SDK client as
// the lead and as a running agent (whose token is captured from its launch command).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { eventually } from '../helpers/wait.js';
import { TokenRecorder } from '../helpers/tokens.js';
import { rawRequest as raw, type RawResponse } from '../helpers/net.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-test', version: '1.0.0' } },
};
const ACCEPT = 'application/json, text/event-stream';



function sdkClient(url: string, token: string): { client: Client; transport: StreamableHTTPClientTransport } {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  return { client: new Client({ name: 'http-test', version: '1.0.0' }), transport };
}

function resultJson(result: object): any {
  const r = result as { content?: unknown; isError?: unknown };
  const text = (r.content as { type: string; text: string }[]).map((c) => c.text).join('\n');
  assert.ok(!r.isError, text);
  return JSON.parse(text);
}

describe('HTTP endpoint', { timeout: 180_000 }, () => {
  let h: TestHub;
  let rec: TokenRecorder;
  let url: string;
  let port: number;
  let blocker: string;
  let agentToken: string;
  const clients: Client[] = [];

  const post = (token: string | undefined, body: string, extra: Record<string, string> = {}): Promise<Response> =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra },
      body,
    });

  before(async () => {
    rec = new TokenRecorder();
    h = await startTestHub({
      processes: rec,
      scripts: { block: [{ delayMs: 20_000, text: 'late' }], ok: [{ text: 'ok' }] },
    });
    assert.ok(h.hub.http, 'the hub has no HTTP endpoint');
    url = h.hub.http.url;
    port = h.hub.http.port;
    blocker = (await h.call('spawn_agent', { prompt: '@script:block wait here', title: 'blocker' })).job_id;
    agentToken = await rec.token(blocker, 30_000);
    // The blocker's own MCP session opens in its own time: before the tests count sessions.
    await eventually('the blocker\'s MCP session', () => h.hub.http!.sessionCount('agent') >= 1, 60_000);
  });

  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.stop();
  });

  test('listens on 127.0.0.1 only', () => {
    const a = h.hub.http!.server.address() as AddressInfo;
    assert.equal(a.address, '127.0.0.1');
    assert.equal(a.port, port);
    assert.ok(port > 0);
    assert.equal(url, `http://127.0.0.1:${port}/mcp`);
  });

  test('no Authorization → 401 with www-authenticate, no session', async () => {
    const sessions = h.hub.http!.sessionCount();
    const r = await post(undefined, JSON.stringify(INIT));
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/i);
    assert.match(await r.text(), /missing bearer token/);
    assert.equal(r.headers.get('mcp-session-id'), null);
    assert.equal(h.hub.http!.sessionCount(), sessions);
  });

  test('an unknown token → 401', async () => {
    const sessions = h.hub.http!.sessionCount();
    const r = await post('not-a-real-token-0123456789abcdef0123456789', JSON.stringify(INIT));
    assert.equal(r.status, 401);
    assert.match(r.headers.get('www-authenticate') ?? '', /^Bearer/i);
    assert.match(await r.text(), /unknown or expired token/);
    assert.equal(h.hub.http!.sessionCount(), sessions);
  });

  test('a non-bearer Authorization scheme → 401', async () => {
    const r = await post(undefined, JSON.stringify(INIT), { authorization: `Basic ${Buffer.from(`x:${h.hub.leadToken}`).toString('base64')}` });
    assert.equal(r.status, 401);
    await r.body?.cancel();
  });

  test('the lead token initializes a session', async () => {
    const r = await post(h.hub.leadToken, JSON.stringify(INIT));
    const body = await r.text();
    assert.equal(r.status, 200, body);
    assert.ok(r.headers.get('mcp-session-id'), 'no mcp-session-id header');
    assert.match(body, /"serverInfo"/);
    assert.match(body, /"overseer"/);
  });

  test('a foreign Host header → 403 (DNS rebinding)', async () => {
    const r = await raw(port, {
      headers: { host: `evil.com:${port}`, 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${h.hub.leadToken}` },
      body: JSON.stringify(INIT),
    });
    assert.equal(r.status, 403, r.body);
    assert.match(r.body, /Host/);
    assert.equal(r.headers['mcp-session-id'], undefined);
  });

  test('a foreign Origin → 403', async () => {
    const r = await raw(port, {
      headers: { host: `127.0.0.1:${port}`, origin: 'http://evil.com', 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${h.hub.leadToken}` },
      body: JSON.stringify(INIT),
    });
    assert.equal(r.status, 403, r.body);
    assert.match(r.body, /Origin/);
  });

  test('the hub\'s own Origin is allowed', async () => {
    const r = await raw(port, {
      headers: { host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${h.hub.leadToken}` },
      body: JSON.stringify(INIT),
    });
    assert.equal(r.status, 200, r.body);
    assert.ok(r.headers['mcp-session-id']);
  });

  test('a wrong path → 404', async () => {
    const r = await fetch(`http://127.0.0.1:${port}/other`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${h.hub.leadToken}` },
      body: JSON.stringify(INIT),
    });
    assert.equal(r.status, 404);
    assert.match(await r.text(), /\/mcp/);
  });

  test('a body that is not JSON → 400', async () => {
    const sessions = h.hub.http!.sessionCount();
    const r = await post(h.hub.leadToken, '{"jsonrpc": "2.0", "id": 1, "method": ');
    assert.equal(r.status, 400);
    assert.match(await r.text(), /not valid JSON/);
    assert.equal(h.hub.http!.sessionCount(), sessions);
  });

  test('a session opened with the lead token cannot be used with another valid token', async () => {
    const init = await post(h.hub.leadToken, JSON.stringify(INIT));
    await init.text();
    const sid = init.headers.get('mcp-session-id');
    assert.ok(sid);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const r = await post(agentToken, list, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    const body = await r.text();
    assert.equal(r.status, 403, body);
    assert.match(body, /another identity/);
    assert.doesNotMatch(body, /spawn_agent/);
  });

  test('the SDK client as the lead lists tools and spawns an agent', async () => {
    const { client, transport } = sdkClient(url, h.hub.leadToken);
    clients.push(client);
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const t of ['spawn_agent', 'wait_for_agents', 'pause_agent', 'resume_agent', 'cancel_agent']) assert.ok(names.includes(t), `${t} missing: ${names}`);
    assert.ok(!names.includes('report_status'));
    const spawned = resultJson(await client.callTool({ name: 'spawn_agent', arguments: { prompt: '@script:ok over http', title: 'via http' } }));
    assert.match(spawned.job_id, /\S/);
    assert.equal(spawned.title, 'via http');
    const waited = resultJson(await client.callTool({ name: 'wait_for_agents', arguments: { job_ids: [spawned.job_id], timeout_s: 120 } }, undefined, { timeout: 150_000 }));
    assert.equal(waited.timed_out, false);
    assert.equal(waited.done[0].status, 'succeeded', JSON.stringify(waited.done[0]));
    assert.equal(waited.done[0].result, 'ok');
  });

  test('a running agent\'s token gives the agent tool set and its own job; cancel revokes it', async () => {
    assert.equal((await h.hub.jobs.summary(blocker)).status, 'running');
    const { client, transport } = sdkClient(url, agentToken);
    clients.push(client);
    await client.connect(transport);
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const t of ['report_status', 'finish', 'spawn_agent', 'wait_for_agents', 'get_agent']) assert.ok(names.includes(t), `${t} missing: ${names}`);
    assert.ok(!names.includes('pause_agent'), 'pause_agent is lead-only');
    assert.ok(!names.includes('resume_agent'), 'resume_agent is lead-only');

    resultJson(await client.callTool({ name: 'report_status', arguments: { message: 'reporting over http' } }));
    const self = resultJson(await client.callTool({ name: 'get_agent', arguments: { job_id: blocker } }));
    assert.equal(self.job_id, blocker);
    assert.equal(self.status, 'running');
    assert.equal(self.status_message, 'reporting over http');

    const cancelled = await h.call('cancel_agent', { job_id: blocker, reason: 'test over' });
    assert.equal(cancelled.status, 'cancelled');

    const r = await post(agentToken, JSON.stringify(INIT));
    assert.equal(r.status, 401);
    assert.match(await r.text(), /unknown or expired token/);
    // The session the agent already had is refused as well.
    await assert.rejects(client.callTool({ name: 'get_agent', arguments: { job_id: blocker } }));
  });
});
