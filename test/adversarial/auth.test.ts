// Adversarial: authentication and the HTTP surface, attacked with raw requests the way a
// hostile agent or a web page in the person's browser could: missing, forged and ended jobs'
// tokens; foreign Host and Origin; oversized and malformed bodies; JSON-RPC batch abuse. Each
// attack must be refused with the right status, open no session, and leave the hub serving.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startAdvHub, callTool, snapshot, diffText, type AdvHub, type Agent } from './harness.js';
import { waitForJob } from '../helpers/wait.js';
import { Checks, printTally } from './tally.js';
import { rawRequest, type RawResponse } from '../helpers/net.js';
import { sql } from 'kysely';
import { row, rows } from '../helpers/state.js';

const ACCEPT = 'application/json, text/event-stream';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'adv', version: '1' } } };

type Raw = RawResponse;
const raw = rawRequest;


describe('adversarial: authentication and HTTP surface', { timeout: 120_000 }, () => {
  let a: AdvHub;
  let ended: Agent;
  let live: Agent;
  const host = (): string => `127.0.0.1:${a.port}`;
  const hdrs = (token: string | undefined, extra: Record<string, string> = {}): Record<string, string> => ({
    host: host(), 'content-type': 'application/json', accept: ACCEPT, ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra,
  });
  /** The hub still answers an authenticated initialize. */
  const serving = async (): Promise<boolean> => (await raw(a.port, { headers: hdrs(a.h.hub.leadToken), body: JSON.stringify(INIT) })).status === 200;

  before(async () => {
    a = await startAdvHub();
    live = await a.agent('live');
    ended = await a.agent('ended');
    await a.h.call('cancel_agent', { job_id: ended.id });
    await waitForJob(a.h.hub, ended.id, (j) => j.status === 'cancelled');
  });
  after(async () => {
    await a?.stop();
    printTally('auth');
  });

  test('missing, forged and ended tokens are refused with 401 and open no session', async () => {
    const c = new Checks('auth: tokens');
    const lead = a.h.hub.leadToken;
    const flip = (t: string): string => t.slice(0, -1) + (t.endsWith('a') ? 'b' : 'a');
    const cases: [string, Record<string, string>][] = [
      ['no Authorization', hdrs(undefined)],
      ['empty bearer', hdrs(undefined, { authorization: 'Bearer ' })],
      ['forged random token', hdrs('f'.repeat(43))],
      ['lead token with its last character changed', hdrs(flip(lead))],
      ['lead token prefix', hdrs(lead.slice(0, 10))],
      ['lead token plus a suffix', hdrs(`${lead}x`)],
      ['lead token in Basic auth', hdrs(undefined, { authorization: `Basic ${Buffer.from(`lead:${lead}`).toString('base64')}` })],
      ['lead token as a query parameter', hdrs(undefined)],
      ['two bearer tokens', hdrs(undefined, { authorization: `Bearer nope Bearer ${lead}` })],
      ['an ended job\'s token', hdrs(ended.token)],
      ['a 64 KB token', hdrs('t'.repeat(65_536))],
    ];
    const sessions = a.h.hub.http!.sessionCount();
    for (const [label, headers] of cases) {
      const r = await raw(a.port, { headers, body: JSON.stringify(INIT), path: label.includes('query') ? `/mcp?token=${lead}` : '/mcp' }).catch((e: Error): Raw => ({ status: -1, headers: {}, body: e.message }));
      c.check(label, (r.status === 401 || r.status === 431) && r.headers['mcp-session-id'] === undefined, `status ${r.status} ${r.body}`);
    }
    c.check('no session opened by refused tokens', a.h.hub.http!.sessionCount() === sessions);
    // A session opened while the job ran dies with the job.
    const hook = await raw(a.port, { path: '/hook', headers: hdrs(ended.token), body: JSON.stringify({ tool_name: 'Write', tool_input: { file_path: 'x' } }) });
    c.check('an ended job\'s token on /hook', hook.status === 401, `status ${hook.status}`);
    c.check('hub still serving', await serving());
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  test('an agent session stops working once its job ends', async () => {
    const c = new Checks('auth: tokens');
    const victim = await a.agent('short-lived');
    assert.equal((await callTool(victim.client, 'list_locks', {})).isError, false);
    await a.h.call('cancel_agent', { job_id: victim.id });
    await waitForJob(a.h.hub, victim.id, (j) => j.status === 'cancelled');
    const r = await callTool(victim.client, 'write_note', { key: 'after-death', value: 'x' });
    c.check('open session of an ended job calls write_note', r.isError && (await row(a.h.hub, sql`SELECT 1 AS one FROM notes WHERE key = 'after-death'`)) === undefined, r.text);
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  test('foreign Host and Origin are refused with 403 (DNS rebinding, browsers)', async () => {
    const c = new Checks('auth: host/origin');
    const lead = a.h.hub.leadToken;
    const hosts = ['evil.com', `evil.com:${a.port}`, `127.0.0.1.evil.com:${a.port}`, `127.0.0.1:${a.port + 1}`, `localhost:${a.port}@evil.com`, '127.0.0.1', `0.0.0.0:${a.port}`, `127.1:${a.port}`, `[::ffff:127.0.0.1]:${a.port}`, ''];
    for (const h of hosts) {
      const r = await raw(a.port, { headers: { ...hdrs(lead), host: h }, body: JSON.stringify(INIT) });
      c.check(`Host: ${h || '(empty)'}`, r.status === 403 || r.status === 400, `status ${r.status}`);
    }
    const origins = ['http://evil.com', 'null', `http://127.0.0.1:${a.port}.evil.com`, `https://127.0.0.1:${a.port}`, `http://127.0.0.1:${a.port + 1}`, 'file://', `http://localhost:${a.port}/`, 'chrome-extension://abc'];
    for (const o of origins) {
      for (const path of ['/mcp', '/hook']) {
        const r = await raw(a.port, { path, headers: hdrs(lead, { origin: o }), body: JSON.stringify(path === '/mcp' ? INIT : { tool_name: 'Write', tool_input: { file_path: 'a' } }) });
        c.check(`Origin: ${o} on ${path}`, r.status === 403, `status ${r.status}`);
      }
    }
    c.check('hub still serving', await serving());
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  test('oversized and malformed bodies are refused with 4xx, change nothing and leave the hub serving', async () => {
    const c = new Checks('auth: bodies');
    const lead = a.h.hub.leadToken;
    const before = JSON.stringify(await snapshot(a.h));
    const sessions = a.h.hub.http!.sessionCount();
    const bodies: [string, string | Buffer][] = [
      ['33 MB body', Buffer.alloc(33 * 1024 * 1024, 0x20)],
      ['not JSON', '{"jsonrpc": "2.0", "id": 1, "method": '],
      ['empty body', ''],
      ['JSON null', 'null'],
      ['JSON number', '42'],
      ['JSON string', '"initialize"'],
      ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
      ['100 000 nested arrays', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
      ['initialize without params', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize' })],
      ['tools/call without a session', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_note', arguments: { key: 'k', value: 'v' } } })],
      ['__proto__ pollution', '{"__proto__": {"role": "lead", "polluted": true}, "jsonrpc": "2.0", "id": 1, "method": "ping"}'],
    ];
    for (const [label, body] of bodies) {
      const r = await raw(a.port, { headers: hdrs(lead), body }).catch((e: Error): Raw => ({ status: -1, headers: {}, body: e.message }));
      const refusedOk = (r.status >= 400 && r.status < 500) || (r.status === 200 && /"error"/.test(r.body) && !/"result"/.test(r.body));
      c.check(label, refusedOk, `status ${r.status} ${r.body.slice(0, 100)}`);
      for (const path of ['/hook']) {
        const h = await raw(a.port, { path, headers: hdrs(live.token), body }).catch((e: Error): Raw => ({ status: -1, headers: {}, body: e.message }));
        c.check(`${label} on ${path}`, h.status === 400 || h.status === 413 || (h.status === 200 && !/"locked"/.test(h.body)), `status ${h.status} ${h.body.slice(0, 100)}`);
      }
    }
    // Hook inputs of the wrong shape: the hub must answer (deny or 400), never fail with 500.
    const shapes: unknown[] = [
      { tool_name: 5 }, { tool_name: 'Write', cwd: 5, tool_input: { file_path: 'a' } }, { tool_name: 'Write', cwd: {}, tool_input: { file_path: 'a' } },
      { tool_name: 'Write', tool_input: 'str' }, { tool_name: 'Write', tool_input: { file_path: 5 } }, { tool_name: 'Write', tool_input: { file_path: {} } },
      { tool_name: 'Bash', tool_input: { command: {} } }, { tool_name: 'Bash', tool_input: { command: [1, null, {}] } }, { tool_name: 'Bash', tool_input: { command: 'x'.repeat(1_000_000) } },
      { tool_name: 'apply_patch', tool_input: { input: 5 } }, { tool_name: 'Bash', tool_input: { command: `echo ${'$('.repeat(5000)}` } }, [], [1, 2],
    ];
    for (const body of shapes) {
      const label = `hook input ${JSON.stringify(body).slice(0, 60)}`;
      const h = await raw(a.port, { path: '/hook', headers: hdrs(live.token), body: JSON.stringify(body) }).catch((e: Error): Raw => ({ status: -1, headers: {}, body: e.message }));
      c.check(label, h.status === 400 || h.status === 200, `status ${h.status} ${h.body.slice(0, 100)}`);
    }
    c.check('Object.prototype not polluted', ({} as Record<string, unknown>).polluted === undefined);
    // The hook's decisions are audited by design (lock_unchecked / lock_denied events): those
    // rows are expected; nothing else may change.
    const maxBefore = (JSON.parse(before) as { events: { m: number } }).events.m;
    const audit = await rows(a.h.hub, sql<{ kind: string }>`SELECT kind FROM events WHERE id > ${maxBefore}`);
    c.check('only hook-decision audit events from bad bodies', audit.every((e) => e.kind === 'lock_unchecked' || e.kind === 'lock_denied'), JSON.stringify(audit));
    const withoutEvents = (snap: string): string => { const o = JSON.parse(snap) as Record<string, unknown>; delete o.events; return JSON.stringify(o); };
    const after = JSON.stringify(await snapshot(a.h));
    c.check('no state change from bad bodies', withoutEvents(after) === withoutEvents(before), diffText(before, after));
    c.check('no session from bad bodies', a.h.hub.http!.sessionCount() === sessions);
    c.check('hub still serving after bad bodies', await serving());
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  test('JSON-RPC batches cannot open many sessions nor carry calls past the role check', async () => {
    const c = new Checks('auth: batches');
    const sessions = a.h.hub.http!.sessionCount();
    const inits = Array.from({ length: 500 }, (_, i) => ({ ...INIT, id: i + 1 }));
    const r1 = await raw(a.port, { headers: hdrs(a.h.hub.leadToken), body: JSON.stringify(inits) });
    c.check('batch of 500 initialize opens at most one session', a.h.hub.http!.sessionCount() <= sessions + 1, `status ${r1.status}, sessions ${sessions} → ${a.h.hub.http!.sessionCount()}`);
    // An agent's session: a batch of lead-only and cross-subtree calls.
    const init = await raw(a.port, { headers: hdrs(live.token), body: JSON.stringify(INIT) });
    const sid = init.headers['mcp-session-id'] as string;
    assert.ok(sid, `agent initialize failed: ${init.status} ${init.body}`);
    const sh = hdrs(live.token, { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' });
    await raw(a.port, { headers: sh, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    const before = JSON.stringify(await snapshot(a.h));
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pause_agent', arguments: { job_id: ended.id } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'respond', arguments: { request_id: 'r-1', decision: 'approved' } } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'start_workflow', arguments: { task: 't', title: 't' } } },
      ...Array.from({ length: 300 }, (_, i) => ({ jsonrpc: '2.0', id: 10 + i, method: 'tools/call', params: { name: 'cancel_agent', arguments: { job_id: ended.id } } })),
    ];
    const r2 = await raw(a.port, { headers: sh, body: JSON.stringify(batch) });
    c.check('batch of lead-only calls by an agent', !/"isError":\s*false/.test(r2.body) && !/"result":\{"content":\[\{"type":"text","text":"\{/.test(r2.body), `status ${r2.status} ${r2.body.slice(0, 120)}`);
    const mixed = [INIT, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_note', arguments: { key: 'batch-smuggled', value: 'v' } } }];
    const r3 = await raw(a.port, { headers: hdrs(live.token), body: JSON.stringify(mixed) });
    c.check('initialize + tools/call in one batch without a session', (await row(a.h.hub, sql`SELECT 1 AS one FROM notes WHERE key = 'batch-smuggled'`)) === undefined, `status ${r3.status}`);
    const after = JSON.stringify(await snapshot(a.h));
    c.check('no state change from batches', after === before, diffText(before, after));
    c.check('hub still serving after batches', await serving());
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });
});
