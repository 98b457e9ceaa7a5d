// Integration: tool calls over the hub's native Streamable HTTP (src/mcp/http.ts). A tools/call of
// a tool that cannot block is answered as one JSON body; it must give exactly what the MCP SDK's
// McpServer gave for the same tools (success, validation errors, unknown or hidden tools; the
// reference is test/helpers/sdkReference.ts), keep the same auth (a token whose job ended is
// refused at once, a session answers only its own token), and answer blocking calls as an SSE
// stream where a client that goes away cancels them.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { TokenRecorder } from '../helpers/tokens.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { count, rows } from '../helpers/state.js';
import { sql } from 'kysely';
import { blockingTest } from '../../src/tools/registry.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { sdkReferenceServer } from '../helpers/sdkReference.js';
import { silentLogger } from '../../src/log.js';

const ACCEPT = 'application/json, text/event-stream';

interface Answer { status: number; type: string; message: any }

/** A raw MCP session over HTTP (initialize + initialized), calling tools with plain fetch. */
async function session(url: string, token: string): Promise<{ id: string; call(tool: string, args: unknown, o?: { token?: string; signal?: AbortSignal; id?: number }): Promise<Answer> }> {
  let next = 10;
  const post = (body: unknown, tok: string, sid?: string, signal?: AbortSignal): Promise<Response> => fetch(url, {
    method: 'POST', signal,
    headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${tok}`, 'mcp-protocol-version': '2025-06-18', ...(sid ? { 'mcp-session-id': sid } : {}) },
    body: JSON.stringify(body),
  });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fast-test', version: '1' } } }, token);
  assert.equal(init.status, 200);
  const id = init.headers.get('mcp-session-id')!;
  await init.text();
  assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, token, id)).status, 202);
  return {
    id,
    async call(tool, args, o = {}) {
      const r = await post({ jsonrpc: '2.0', id: o.id ?? next++, method: 'tools/call', params: { name: tool, arguments: args } }, o.token ?? token, id, o.signal);
      const type = r.headers.get('content-type') ?? '';
      const text = await r.text();
      const data = type.startsWith('text/event-stream') ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))).find((m) => 'result' in m || 'error' in m) : text ? JSON.parse(text) : undefined;
      return { status: r.status, type, message: data };
    },
  };
}

describe('tool calls over the native HTTP transport', { timeout: 180_000 }, () => {
  let h: TestHub;
  let rec: TokenRecorder;
  let url: string;
  let a: string;
  let b: string;
  let tokenA: string;
  let tokenB: string;

  before(async () => {
    rec = new TokenRecorder();
    h = await startTestHub({ processes: rec, scripts: { hang: [{ delayMs: 120_000, text: 'never' }] }, progressEveryMs: 50 });
    url = h.hub.http!.url;
    const spawn = async (title: string): Promise<string> => {
      const id = (await h.call('spawn_agent', { prompt: '@script:hang', title })).job_id as string;
      await waitForJob(h.hub, id, (j) => j.status === 'running');
      return id;
    };
    a = await spawn('a');
    b = await spawn('b');
    tokenA = await rec.token(a, 30_000);
    tokenB = await rec.token(b, 30_000);
    await h.call('write_note', { key: 'fast/known', value: 'hello' });
  });

  after(async () => {
    await h?.stop();
  });

  test('answers exactly what the SDK McpServer answered: results, validation errors, unknown and hidden tools', async () => {
    const s = await session(url, tokenA);
    // The reference: the SDK's McpServer with the same tools registered as before, as agent a.
    const ref = sdkReferenceServer(h.hub.tools, { role: 'agent', jobId: a }, silentLogger);
    const [x, y] = InMemoryTransport.createLinkedPair();
    await ref.connect(x);
    const client = new Client({ name: 'reference', version: '1' });
    const answers: any[] = [];
    const orig = y.send.bind(y);
    await client.connect(y);
    const onmessage = y.onmessage!;
    y.onmessage = (m: any, extra?: any) => { if (m.id === 500) answers.push(m); onmessage(m, extra); };
    const sdkCall = async (tool: string, args: unknown): Promise<any> => {
      answers.length = 0;
      await orig({ jsonrpc: '2.0', id: 500, method: 'tools/call', params: { name: tool, arguments: args } } as never);
      await eventually('the reference answers', () => answers[0], 10_000, 2);
      return answers[0];
    };
    const calls: [string, unknown][] = [
      ['read_note', { key: 'fast/known' }],
      ['read_note', { key: 'fast/missing' }],
      ['read_note', { key: '' }], // fails the tool's zod schema
      ['read_note', { key: 'fast/known', extra: { deep: [1, 2] }, offset: -1 }],
      ['write_note', { key: 'fast/w' }], // value missing
      ['get_agent', { job_id: a }],
      ['list_requests', {}], // lead only: not listed for an agent
      ['no_such_tool', {}],
      ['lock_files', { files: ['fast.txt'], timeout_s: 0 }],
      ['release_files', { files: ['fast.txt'] }],
    ];
    for (const [tool, args] of calls) {
      // Each side starts from the same state: release_files releases a lock taken just before.
      const before = async (): Promise<void> => { if (tool === 'release_files') await s.call('lock_files', { files: ['fast.txt'], timeout_s: 0 }); };
      await before();
      const slow = await sdkCall(tool, args);
      if (tool === 'lock_files') await s.call('release_files', { files: ['fast.txt'] });
      await before();
      const fast = await s.call(tool, args, { id: 500 });
      assert.equal(fast.status, 200);
      assert.match(fast.type, /^application\/json/, `${tool}: a call that cannot block is answered as JSON`);
      // Time-dependent fields aside (a job's age, a lock's expiry), the same JSON-RPC message.
      const norm = (m: any): unknown => (tool === 'get_agent' ? { ...m, result: { isError: m.result.isError, job: JSON.parse(m.result.content[0].text).job_id } }
        : tool === 'lock_files' ? JSON.parse(JSON.stringify(m).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')) : m);
      assert.deepEqual(norm(fast.message), norm(JSON.parse(JSON.stringify(slow))), `${tool} ${JSON.stringify(args)}`);
    }
    await client.close();
    // Spot checks that the comparison compared something meaningful.
    const bad = await s.call('read_note', { key: '' });
    assert.equal(bad.message.result.isError, true);
    assert.match(bad.message.result.content[0].text, /key/);
    const ok = await s.call('read_note', { key: 'fast/known' });
    assert.equal(JSON.parse(ok.message.result.content[0].text).value, 'hello');
  });

  test('a session answers only the token that opened it, on the fast path too', async () => {
    const s = await session(url, tokenA);
    const r = await s.call('read_note', { key: 'fast/known' }, { token: tokenB });
    assert.equal(r.status, 403);
    assert.match(JSON.stringify(r.message), /another identity/);
    const unknown = await s.call('read_note', { key: 'fast/known' }, { token: 'not-a-token' });
    assert.equal(unknown.status, 401);
  });

  test('blocking calls are answered as SSE, and a client that goes away cancels them', async () => {
    const sa = await session(url, tokenA);
    const sb = await session(url, tokenB);
    const held = await sa.call('lock_files', { files: ['shared.txt'], timeout_s: 0 });
    assert.match(held.type, /^application\/json/);
    assert.equal(held.message.result.isError, undefined, JSON.stringify(held.message));
    assert.ok(blockingTest(h.hub.tools)('lock_files', { files: ['shared.txt'], timeout_s: 30 }));
    // A call that may block is answered on an SSE stream, even when it does not have to wait.
    const free = await sb.call('lock_files', { files: ['free.txt'], timeout_s: 30 });
    assert.match(free.type, /^text\/event-stream/);
    assert.match(JSON.parse(free.message.result.content[0].text).acquired[0], /free\.txt$/);
    await sb.call('release_files', { files: ['free.txt'] });
    const abort = new AbortController();
    let type = '';
    const waiting = sb.call('lock_files', { files: ['shared.txt'], timeout_s: 60 }, { signal: abort.signal }).then((x) => { type = x.type; }, (e: unknown) => String(e));
    const waitRows = (): Promise<number> => count(h.hub, sql`SELECT COUNT(*) AS n FROM lock_waits WHERE holder = ${b} AND status = 'waiting'`);
    await eventually('B waits for the lock', async () => ((await waitRows()) === 1 ? true : undefined), 10_000, 5);
    abort.abort();
    await waiting;
    assert.equal(type, '', 'no answer reached the aborted client');
    await eventually('the wait is dropped when the request closes', async () => ((await waitRows()) === 0 ? true : undefined), 10_000, 5);
    const released = await sa.call('release_files', {});
    assert.deepEqual(JSON.parse(released.message.result.content[0].text).released.length, 1);
    assert.deepEqual(await rows(h.hub, sql`SELECT holder FROM locks`), [], 'B never got the lock');
  });

  test('which calls may block', () => {
    const blocks = blockingTest(h.hub.tools);
    assert.equal(blocks('read_note', { key: 'x' }), false);
    assert.equal(blocks('write_note', { key: 'x', value: 'y' }), false);
    assert.equal(blocks('lock_files', { files: ['x'], timeout_s: 0 }), false);
    assert.equal(blocks('lock_files', { files: ['x'] }), true, 'the default timeout waits');
    for (const t of ['wait_for_agents', 'watch_notes', 'ask_lead', 'request_approval', 'check_permission', 'merge_branch', 'merge_queue']) assert.equal(blocks(t, {}), true, t);
    assert.equal(blocks('no_such_tool', {}), false);
  });

  test('a token whose job ended is refused at once', async () => {
    const s = await session(url, tokenB);
    assert.equal((await s.call('read_note', { key: 'fast/known' })).status, 200);
    await h.call('cancel_agent', { job_id: b });
    await waitForJob(h.hub, b, (j) => j.status === 'cancelled');
    const r = await s.call('read_note', { key: 'fast/known' });
    assert.equal(r.status, 401, JSON.stringify(r.message));
    assert.match(JSON.stringify(r.message), /unknown or expired token/);
  });
});
