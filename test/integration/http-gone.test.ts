// Integration: a client whose HTTP request goes away (timeout, crash, dropped connection) while
// it waits for a lock never ends up holding that lock: its wait is cancelled at once, and the
// lock goes to the next live waiter (issue 9: "a lock is granted to a waiter whose HTTP request
// is gone").
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { TokenRecorder } from '../helpers/tokens.js';
import { waitForJob, eventually } from '../helpers/wait.js';
import { count, rows } from '../helpers/state.js';
import { sql } from 'kysely';
import { callAs } from '../helpers/mcp.js';

const ACCEPT = 'application/json, text/event-stream';
let h: TestHub | undefined;
after(async () => { await h?.stop(); });

test('a waiter whose HTTP request closes is dropped and never granted the lock', async () => {
  const rec = new TokenRecorder();
  h = await startTestHub({ processes: rec, scripts: { hang: [{ delayMs: 120_000, text: 'never' }] }, progressEveryMs: 50 });
  const spawn = async (title: string): Promise<string> => {
    const id = (await h!.call('spawn_agent', { prompt: '@script:hang', title })).job_id as string;
    await waitForJob(h!.hub, id, (j) => j.status === 'running');
    return id;
  };
  const holder = await spawn('holder');
  const gone = await spawn('gone');
  const url = h.hub.http!.url;
  const token = await rec.token(gone, 30_000);
  const post = (body: unknown, session?: string, signal?: AbortSignal): Promise<Response> => fetch(url, {
    method: 'POST', signal,
    headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${token}`, ...(session ? { 'mcp-session-id': session } : {}) },
    body: JSON.stringify(body),
  });
  const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'gone', version: '1' } } });
  const session = init.headers.get('mcp-session-id')!;
  await init.text();
  await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();

  const holderClient = await h.connect({ role: 'agent', jobId: holder });
  assert.equal((await callAs(holderClient, 'lock_files', { files: ['shared.txt'] })).isError, false);

  const abort = new AbortController();
  const waiting = post({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'lock_files', arguments: { files: ['shared.txt'], timeout_s: 120 } } }, session, abort.signal)
    .then((r) => r.text()).catch((e: unknown) => String(e));
  const waitRows = (): Promise<number> => count(h!.hub, sql`SELECT COUNT(*) AS n FROM lock_waits WHERE holder = ${gone} AND status = 'waiting'`);
  await eventually('the request waits for the lock', async () => ((await waitRows()) === 1 ? true : undefined), 10_000, 5);
  abort.abort();
  await waiting;
  await eventually('the wait is dropped when the request closes', async () => ((await waitRows()) === 0 ? true : undefined), 10_000, 5);

  assert.equal((await callAs(holderClient, 'release_files', {})).isError, false);
  const held = await rows(h.hub, sql<{ holder: string }>`SELECT holder FROM locks`);
  assert.deepEqual(held, [], 'nobody holds shared.txt: the gone waiter was never granted it');
});
