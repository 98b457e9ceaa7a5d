// readJsonBody (src/server/body.ts): the body of every hub request, read with shared listeners
// and one state object per request. A real node:http server on 127.0.0.1 and real requests.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BAD_BODY, MAX_BODY, readJsonBody } from '../../src/server/body.js';

let server: Server;
let port = 0;
/** What each request's `done` was called with, and how many times, by request path. */
const seen = new Map<string, { body: unknown; calls: number }>();
let waiters: { path: string; resolve: () => void }[] = [];
/** Told when a request's headers reached the server (path → resolve). */
const arrival = new Map<string, () => void>();

before(async () => {
  server = createServer((req, res) => {
    const path = req.url!;
    arrival.get(path)?.();
    readJsonBody(req, (body) => {
      const s = seen.get(path);
      seen.set(path, { body, calls: (s?.calls ?? 0) + 1 });
      for (const w of waiters.filter((x) => x.path === path)) w.resolve();
      waiters = waiters.filter((x) => x.path !== path);
      if (!res.headersSent) res.end(body === BAD_BODY ? 'bad' : 'ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function heard(path: string): Promise<void> {
  if (seen.has(path)) return Promise.resolve();
  return new Promise((resolve) => waiters.push({ path, resolve }));
}

function post(path: string, chunks: (string | Buffer)[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
    for (const c of chunks) req.write(c);
    req.end();
  });
}

test('a JSON body in one chunk is parsed', async () => {
  assert.equal(await post('/one', ['{"jsonrpc":"2.0","id":1,"method":"ping"}']), 'ok');
  assert.deepEqual(seen.get('/one'), { body: { jsonrpc: '2.0', id: 1, method: 'ping' }, calls: 1 });
});

test('a body in many chunks (2 MB, a multi-byte character split between writes) is joined before parsing', async () => {
  const value = 'ü'.repeat(1_000_000);
  const whole = Buffer.from(JSON.stringify({ value }));
  const cut = whole.indexOf(Buffer.from('ü')) + 1; // inside the two bytes of a ü
  assert.equal(await post('/many', [whole.subarray(0, cut), whole.subarray(cut)]), 'ok');
  assert.equal((seen.get('/many')!.body as { value: string }).value, value);
  assert.equal(seen.get('/many')!.calls, 1);
});

test('not JSON, or empty: BAD_BODY, once', async () => {
  assert.equal(await post('/bad', ['{"jsonrpc": ']), 'bad');
  assert.deepEqual(seen.get('/bad'), { body: BAD_BODY, calls: 1 });
  assert.equal(await post('/empty', []), 'bad');
  assert.deepEqual(seen.get('/empty'), { body: BAD_BODY, calls: 1 });
});

test('over MAX_BODY: BAD_BODY once, as soon as the limit is passed; the rest is drained', async () => {
  const piece = Buffer.alloc(1024 * 1024, 0x20); // JSON whitespace
  const chunks = Array.from({ length: MAX_BODY / piece.length + 2 }, () => piece);
  assert.equal(await post('/big', chunks), 'bad');
  assert.deepEqual(seen.get('/big'), { body: BAD_BODY, calls: 1 });
});

test('a request that dies before its body ends: BAD_BODY once', async () => {
  const arrived = new Promise<void>((r) => arrival.set('/dies', r));
  const req = request({ host: '127.0.0.1', port, path: '/dies', method: 'POST', headers: { 'content-length': '1000' } });
  req.on('error', () => undefined);
  req.write('{"half":');
  await arrived; // the server is reading the body
  const gone = heard('/dies');
  req.destroy();
  await gone;
  assert.deepEqual(seen.get('/dies'), { body: BAD_BODY, calls: 1 });
});
