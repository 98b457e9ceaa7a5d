// Integration: MCP sessions on the hub's HTTP endpoint are bounded. One token may hold at
// most maxSessionsPerToken sessions (past that, initialize is refused with an error naming
// the cap and what to do; other tokens are unaffected); a session with no request and no open
// stream is closed after sessionIdleS, its state freed (count back to zero), and a client
// coming back with its old session id gets "unknown session: initialize again". GET /health
// shows the counts and limits to the lead.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { eventually } from '../helpers/wait.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sessions-test', version: '1' } } };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('MCP session limits', { timeout: 60_000 }, () => {
  let h: TestHub;
  let capped: TestHub;
  let idle: TestHub;
  let url: string;
  const post = (token: string, body: unknown, session?: string): Promise<Response> =>
    fetch(url, { method: 'POST', headers: { ...HEADERS, authorization: `Bearer ${token}`, ...(session ? { 'mcp-session-id': session } : {}) }, body: JSON.stringify(body) });
  const open = async (token: string): Promise<string> => {
    const r = await post(token, INIT);
    const text = await r.text();
    assert.equal(r.status, 200, text);
    return r.headers.get('mcp-session-id')!;
  };

  before(async () => {
    h = capped = await startTestHub({ config: { maxSessionsPerToken: 3, sessionIdleS: 600 } });
    idle = await startTestHub({ config: { sessionIdleS: 1 } });
    url = h.hub.http!.url;
  });
  after(async () => {
    await capped?.stop();
    await idle?.stop();
  });

  test('past the per-token cap initialize is refused; the cap and the way out are named', async () => {
    const ids = [await open(h.hub.leadToken), await open(h.hub.leadToken), await open(h.hub.leadToken)];
    assert.equal(new Set(ids).size, 3);
    assert.equal(h.hub.http!.sessionCount('lead'), 3);
    const r = await post(h.hub.leadToken, INIT);
    assert.equal(r.status, 429);
    const body = (await r.json()) as { error: { message: string } };
    assert.match(body.error.message, /the cap is 3 \(OVERSEER_MAX_SESSIONS_PER_TOKEN/);
    assert.match(body.error.message, /DELETE/);
    assert.equal(h.hub.http!.sessionCount('lead'), 3, 'a refused initialize opened a session');
    const health = (await (await fetch(new URL('/health', url), { headers: { authorization: `Bearer ${h.hub.leadToken}` } })).json()) as { pid: number; sessions: { lead: number }; limits: { max_sessions_per_token: number; session_idle_s: number } };
    assert.equal(health.pid, process.pid);
    assert.equal(health.sessions.lead, 3);
    assert.deepEqual(health.limits, { max_sessions_per_token: 3, session_idle_s: 600 });
    const anon = (await (await fetch(new URL('/health', url))).json()) as Record<string, unknown>;
    assert.equal(anon.pid, process.pid);
    assert.equal(anon.sessions, undefined, 'session counts shown without the lead token');
  });

  test('idle sessions are closed after the timeout and a returning client is told to initialize again', async () => {
    h = idle;
    url = h.hub.http!.url;
    const id = await open(h.hub.leadToken);
    assert.equal(h.hub.http!.sessionCount(), 1);
    await eventually('every idle session closed', () => h.hub.http!.sessionCount() === 0, 15_000, 100);
    const r = await post(h.hub.leadToken, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, id);
    assert.equal(r.status, 404);
    assert.match(((await r.json()) as { error: { message: string } }).error.message, /unknown MCP session: initialize again/);
    // The cap counts open sessions only: after the sweep the token may open new ones.
    await open(h.hub.leadToken);
    assert.equal(h.hub.http!.sessionCount(), 1);
  });

  test('a session with an open stream or a request in flight is not idle', async () => {
    const id = await open(h.hub.leadToken);
    await (await post(h.hub.leadToken, { jsonrpc: '2.0', method: 'notifications/initialized' }, id)).text();
    const ac = new AbortController();
    const stream = await fetch(url, { method: 'GET', headers: { accept: 'text/event-stream', authorization: `Bearer ${h.hub.leadToken}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }, signal: ac.signal });
    assert.equal(stream.status, 200);
    // A 3 s watch (three idle periods) on another session of the same token; the streaming one must survive it.
    const other = await open(h.hub.leadToken);
    await (await post(h.hub.leadToken, { jsonrpc: '2.0', method: 'notifications/initialized' }, other)).text();
    const w = await post(h.hub.leadToken, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'watch_notes', arguments: { prefix: 'x/', timeout_s: 3 } } }, other);
    assert.equal(w.status, 200);
    assert.match(await w.text(), /timed_out/);
    const still = await post(h.hub.leadToken, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} }, id);
    assert.equal(still.status, 200, 'the session with an open stream was closed as idle');
    await still.text();
    ac.abort();
    await eventually('both sessions idle out once the stream is closed', () => h.hub.http!.sessionCount() === 0, 15_000, 100);
  });
});
