// The one body reader (src/http/body.ts): readJsonBody, the body of every hub request, read with
// shared listeners and one state object per request; readBody and readBodyText, its promise
// forms, with their limits and a BodyError that says what was wrong. A real node:http server on
// 127.0.0.1 and real requests.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BodyError, MAX_BODY, readBody, readBodyText, readJsonBody } from '../../src/http/body.js';

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
    const done = (body: unknown): void => {
      const s = seen.get(path);
      seen.set(path, { body, calls: (s?.calls ?? 0) + 1 });
      for (const w of waiters.filter((x) => x.path === path)) w.resolve();
      waiters = waiters.filter((x) => x.path !== path);
      if (!res.headersSent) res.end(body instanceof BodyError ? `bad ${body.status}: ${body.message}` : 'ok');
    };
    // /text…: the text, at most 10 bytes; /promise…: JSON, at most 100 bytes, empty = {}.
    if (path.startsWith('/text')) readBodyText(req, 10).then(done, done);
    else if (path.startsWith('/promise')) readBody(req, { limit: 100, empty: {} }).then(done, done);
    else readJsonBody(req, done);
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

const bodyError = (path: string): { status: number; message: string } => {
  const b = seen.get(path)!.body;
  assert.ok(b instanceof BodyError, `${path}: expected a BodyError, got ${JSON.stringify(b)}`);
  assert.equal(seen.get(path)!.calls, 1);
  return { status: b.status, message: b.message };
};

test('not JSON, or empty: a 400 BodyError that says so, once', async () => {
  assert.match(await post('/bad', ['{"jsonrpc": ']), /^bad 400: the body is not valid JSON \(.+\); send a JSON value$/);
  assert.match(bodyError('/bad').message, /^the body is not valid JSON \(Unexpected end of JSON input\); send a JSON value$/);
  assert.equal(await post('/empty', []), 'bad 400: the body is not valid JSON (it is empty); send a JSON value');
  assert.equal(bodyError('/empty').status, 400);
});

test('over MAX_BODY: a 413 BodyError once, as soon as the limit is passed; the rest is drained', async () => {
  const piece = Buffer.alloc(1024 * 1024, 0x20); // JSON whitespace
  const chunks = Array.from({ length: MAX_BODY / piece.length + 2 }, () => piece);
  assert.equal(await post('/big', chunks), `bad 413: the body is over ${MAX_BODY} bytes; send less`);
  assert.equal(bodyError('/big').status, 413);
});

test('readBody: its own limit, an empty body as the given value, JSON otherwise', async () => {
  assert.equal(await post('/promise-ok', ['[1,2,3]']), 'ok');
  assert.deepEqual(seen.get('/promise-ok'), { body: [1, 2, 3], calls: 1 });
  assert.equal(await post('/promise-empty', []), 'ok');
  assert.deepEqual(seen.get('/promise-empty'), { body: {}, calls: 1 });
  assert.equal(await post('/promise-big', [`"${'x'.repeat(100)}"`]), 'bad 413: the body is over 100 bytes; send less');
  assert.equal(await post('/promise-bad', ['nope']), 'bad 400: the body is not valid JSON (Unexpected token \'o\', "nope" is not valid JSON); send a JSON value');
});

test('readBodyText: the text as sent (not parsed), up to its limit', async () => {
  assert.equal(await post('/text-ok', ['not ', 'json']), 'ok');
  assert.deepEqual(seen.get('/text-ok'), { body: 'not json', calls: 1 });
  assert.equal(await post('/text-big', ['0123456789', 'x']), 'bad 413: the body is over 10 bytes; send less');
});

test('a request that dies before its body ends: a BodyError once', async () => {
  const arrived = new Promise<void>((r) => arrival.set('/dies', r));
  const req = request({ host: '127.0.0.1', port, path: '/dies', method: 'POST', headers: { 'content-length': '1000' } });
  req.on('error', () => undefined);
  req.write('{"half":');
  await arrived; // the server is reading the body
  const gone = heard('/dies');
  req.destroy();
  await gone;
  assert.deepEqual(bodyError('/dies'), { status: 400, message: 'the request ended before its body did' });
});
