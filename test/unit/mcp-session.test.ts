// Unit: the native MCP protocol core (src/mcp/session.ts, rpc.ts) with no I/O: initialize and
// version negotiation as the SDK's Server does it, ping, logging/setLevel, unknown methods,
// handler errors, cancellation (notifications/cancelled and the session's close abort the
// handler's signal; nothing is answered after), progress tied to its request, and the server's
// own requests to the client: answered, refused, timed out (withdrawn with notifications/
// cancelled), withdrawn by the caller, failed by the session's close, late answers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as sdk from '@modelcontextprotocol/sdk/types.js';
import { McpSession } from '../../src/mcp/session.js';
import { methodTable, type Methods } from '../../src/mcp/methods.js';
import { ErrorCode, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, DEFAULT_NEGOTIATED_PROTOCOL_VERSION, RpcError, isInitializeRequest, messageKind, type RequestId, type RpcMessage } from '../../src/mcp/rpc.js';

type Sent = { m: any; related?: RequestId };

function rig(extra: (m: Methods) => void = () => undefined): { s: McpSession; sent: Sent[]; methods: Methods; next(): Promise<void> } {
  const methods = methodTable({ name: 'overseer', version: '9.9' }, { tools: { listChanged: true }, logging: {} }, 'be nice');
  extra(methods);
  const sent: Sent[] = [];
  const s = new McpSession(methods, { role: 'lead' }, { send: (m, related) => sent.push({ m, related }) });
  return { s, sent, methods, next: () => new Promise((r) => setImmediate(r)) };
}

const init = (protocolVersion: string, capabilities: object = {}) => ({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion, capabilities, clientInfo: { name: 'c', version: '1' } } });

describe('the protocol constants and checks are the SDK\'s', () => {
  test('protocol versions and error codes', () => {
    assert.equal(LATEST_PROTOCOL_VERSION, sdk.LATEST_PROTOCOL_VERSION);
    assert.equal(DEFAULT_NEGOTIATED_PROTOCOL_VERSION, sdk.DEFAULT_NEGOTIATED_PROTOCOL_VERSION);
    assert.deepEqual(SUPPORTED_PROTOCOL_VERSIONS, sdk.SUPPORTED_PROTOCOL_VERSIONS);
    for (const [k, v] of Object.entries(ErrorCode)) assert.equal(v, (sdk.ErrorCode as unknown as Record<string, number>)[k], k);
    assert.equal(new RpcError(-32602, 'x').message, new sdk.McpError(-32602, 'x').message);
  });

  test('messageKind accepts and refuses what JSONRPCMessageSchema does; isInitializeRequest as the SDK\'s', () => {
    const samples: unknown[] = [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 'a', method: 'x', params: {} }, { jsonrpc: '2.0', id: 1.5, method: 'x' },
      { jsonrpc: '2.0', id: null, method: 'x' }, { jsonrpc: '1.0', id: 1, method: 'x' }, { jsonrpc: '2.0', id: 1, method: 'x', extra: 1 },
      { jsonrpc: '2.0', id: 1, method: 'x', params: [] }, { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { progressToken: 1.5 } } },
      { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { progressToken: 't' } } }, { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 3 }, { jsonrpc: '2.0', id: 1, result: {} }, { jsonrpc: '2.0', id: 1, result: [] }, { jsonrpc: '2.0', id: 1, result: 5 },
      { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' } }, { jsonrpc: '2.0', error: { code: 1, message: 'm' } }, { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } },
      { jsonrpc: '2.0', id: 1, error: { code: 1 } }, { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' }, result: {} }, null, [], 'x', 5, {},
      init('2025-06-18'), { ...init('x'), params: { protocolVersion: 1, capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
      { ...init('x'), params: { protocolVersion: 'x', capabilities: {}, clientInfo: { name: 'c' } } }, { method: 'initialize', params: init('y').params },
    ];
    for (const m of samples) {
      assert.equal(messageKind(m) !== undefined, sdk.JSONRPCMessageSchema.safeParse(m).success, JSON.stringify(m));
      assert.equal(isInitializeRequest(m), sdk.isInitializeRequest(m), `initialize? ${JSON.stringify(m)}`);
    }
  });
});

describe('McpSession', () => {
  test('initialize: a supported version is kept, another gets the latest; capabilities, info and instructions', async () => {
    for (const [asked, got] of [['2025-06-18', '2025-06-18'], ['2024-11-05', '2024-11-05'], ['1999-01-01', LATEST_PROTOCOL_VERSION]]) {
      const { s, sent, next } = rig();
      s.receive(init(asked!, { elicitation: {} }));
      await next();
      assert.deepEqual(sent[0]!.m, { jsonrpc: '2.0', id: 0, result: { protocolVersion: got, capabilities: { tools: { listChanged: true }, logging: {} }, serverInfo: { name: 'overseer', version: '9.9' }, instructions: 'be nice' } });
      assert.equal(s.protocolVersion, got);
      assert.deepEqual(s.clientCapabilities, { elicitation: { form: {} } }, 'an empty elicitation capability means form, as the SDK reads it');
    }
  });

  test('ping, logging/setLevel, unknown method (-32601), bad params (-32602), a failing handler (its code, or -32603)', async () => {
    const { s, sent, next } = rig((m) => {
      m.requests.set('boom', () => { throw new Error('it broke'); });
      m.requests.set('typed', () => { throw new RpcError(-32002, 'no such thing', { hint: 1 }); });
    });
    s.receive({ jsonrpc: '2.0', id: 1, method: 'ping' });
    s.receive({ jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'warning' } });
    s.receive({ jsonrpc: '2.0', id: 3, method: 'logging/setLevel', params: { level: 'loud' } });
    s.receive({ jsonrpc: '2.0', id: 4, method: 'nope' });
    s.receive({ jsonrpc: '2.0', id: 5, method: 'boom' });
    s.receive({ jsonrpc: '2.0', id: 6, method: 'typed' });
    s.receive({ jsonrpc: '2.0', id: 7, method: 'initialize', params: { protocolVersion: 5 } });
    await next();
    const by = (id: number) => sent.find((x) => x.m.id === id)!.m;
    assert.deepEqual(by(1).result, {});
    assert.deepEqual(by(2).result, {});
    assert.equal(s.logLevel, 'warning');
    assert.equal(by(3).error.code, ErrorCode.InvalidParams);
    assert.deepEqual(by(4).error, { code: -32601, message: 'Method not found' });
    assert.deepEqual(by(5).error, { code: -32603, message: 'it broke' });
    assert.deepEqual(by(6).error, { code: -32002, message: 'MCP error -32002: no such thing', data: { hint: 1 } });
    assert.equal(by(7).error.code, ErrorCode.InvalidParams);
    for (const x of sent) assert.equal(x.related, x.m.id, 'an answer goes with its request');
  });

  test('an answer the transport cannot send goes back as the request\'s error (sync and async handlers); nothing throws', async () => {
    const methods = methodTable({ name: 'overseer', version: '9.9' }, { tools: {} });
    methods.requests.set('big', () => ({ n: 10n }));
    methods.requests.set('bigLater', async () => ({ n: 10n }));
    const sent: Sent[] = [];
    // As the HTTP channel does: serialise the message, which fails for a BigInt.
    const s = new McpSession(methods, { role: 'lead' }, { send: (m, related) => { sent.push({ m: JSON.parse(JSON.stringify(m)), related }); } });
    s.receive({ jsonrpc: '2.0', id: 1, method: 'big' });
    s.receive({ jsonrpc: '2.0', id: 2, method: 'bigLater' });
    await new Promise((r) => setImmediate(r));
    for (const id of [1, 2]) {
      const m = sent.find((x) => x.m.id === id)?.m;
      assert.equal(m?.error?.code, ErrorCode.InternalError, `request ${id}: ${JSON.stringify(m)}`);
      assert.match(m.error.message, /BigInt/);
    }
    assert.equal(s.inFlight, 0);
  });

  test('logging/setLevel is unknown when the logging capability is not advertised', async () => {
    const methods = methodTable({ name: 'o', version: '1' }, { tools: {} });
    const sent: RpcMessage[] = [];
    const s = new McpSession(methods, { role: 'lead' }, { send: (m) => sent.push(m) });
    s.receive({ jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: 'info' } });
    assert.deepEqual((sent[0] as any).error.code, -32601);
  });

  test('notifications/cancelled aborts the handler\'s signal and nothing is answered; progress goes with its request', async () => {
    let signal!: AbortSignal;
    let release!: () => void;
    const { s, sent, next } = rig((m) => m.requests.set('slow', (_p, ctx) => {
      signal = ctx.signal;
      ctx.session.notify('notifications/progress', { progressToken: 't', progress: 1 }, ctx.id);
      return new Promise<object>((r) => { release = () => r({ done: true }); });
    }));
    s.receive({ jsonrpc: '2.0', id: 'a', method: 'slow' });
    await next();
    assert.deepEqual(sent[0], { m: { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } }, related: 'a' });
    assert.equal(s.inFlight, 1);
    s.receive({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'a', reason: 'changed my mind' } });
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, 'changed my mind');
    release();
    await next();
    assert.equal(sent.length, 1, 'a cancelled request gets no answer');
    assert.equal(s.inFlight, 0);
  });

  test('closing the session aborts running handlers; a closed session ignores messages', async () => {
    let signal!: AbortSignal;
    const { s, sent, next } = rig((m) => m.requests.set('slow', (_p, ctx) => { signal = ctx.signal; return new Promise(() => undefined); }));
    let closed = 0;
    s.onClose(() => closed++);
    s.receive({ jsonrpc: '2.0', id: 1, method: 'slow' });
    await next();
    s.close();
    s.close();
    assert.equal(signal.aborted, true);
    assert.equal(closed, 1);
    s.receive({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await next();
    assert.equal(sent.length, 0);
  });

  test('notification handlers of the table; notifications/initialized', async () => {
    const seen: string[] = [];
    const { s } = rig((m) => m.notifications.set('notifications/initialized', () => seen.push('init')));
    s.receive({ jsonrpc: '2.0', method: 'notifications/initialized' });
    s.receive({ jsonrpc: '2.0', method: 'notifications/unknown' });
    assert.deepEqual(seen, ['init']);
  });
});

describe('McpSession: requests to the client', () => {
  test('answered: resolves with the result; refused: rejects with the client\'s error; ids start at 1', async () => {
    const { s, sent } = rig();
    const ids: RequestId[] = [];
    const p = s.request('elicitation/create', { message: 'hi' }, { onId: (id) => ids.push(id) });
    const q = s.request('ping', undefined);
    assert.deepEqual(sent.map((x) => x.m), [{ jsonrpc: '2.0', id: 1, method: 'elicitation/create', params: { message: 'hi' } }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
    assert.deepEqual(ids, [1]);
    s.receive({ jsonrpc: '2.0', id: 1, result: { action: 'accept' } });
    s.receive({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: 'Method not found' } });
    assert.deepEqual(await p, { action: 'accept' });
    await assert.rejects(q, (e: RpcError) => e.code === -32601);
  });

  test('timed out: withdrawn with notifications/cancelled, rejects -32001; a late answer goes to onLateResponse', async () => {
    const { s, sent } = rig();
    const late: unknown[] = [];
    s.onLateResponse = (id, m) => late.push([id, m]);
    await assert.rejects(s.request('elicitation/create', {}, { timeoutMs: 10 }), (e: RpcError) => e.code === ErrorCode.RequestTimeout && /Request timed out/.test(e.message));
    assert.equal(sent[1]!.m.method, 'notifications/cancelled');
    assert.equal(sent[1]!.m.params.requestId, 1);
    s.receive({ jsonrpc: '2.0', id: 1, result: { action: 'accept' } });
    assert.deepEqual(late, [[1, { jsonrpc: '2.0', id: 1, result: { action: 'accept' } }]]);
  });

  test('withdrawn by the caller\'s signal: notifications/cancelled with the reason', async () => {
    const { s, sent } = rig();
    const ac = new AbortController();
    const p = s.request('elicitation/create', {}, { signal: ac.signal });
    ac.abort('answered elsewhere');
    await assert.rejects(p);
    assert.deepEqual(sent[1]!.m, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'answered elsewhere' } });
    // Already withdrawn: refused without sending anything (a rejected promise, not a throw).
    const before = sent.length;
    await assert.rejects(s.request('elicitation/create', {}, { signal: ac.signal }));
    assert.equal(sent.length, before);
  });

  test('the session closes: pending requests fail with -32000 Connection closed; new ones fail at once', async () => {
    const { s } = rig();
    const p = s.request('elicitation/create', {}, { timeoutMs: 60_000 });
    s.close();
    await assert.rejects(p, (e: RpcError) => e.code === ErrorCode.ConnectionClosed);
    await assert.rejects(s.request('ping', undefined), (e: RpcError) => e.code === ErrorCode.ConnectionClosed);
  });
});
