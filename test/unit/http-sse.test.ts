// The one SSE writer and parser (src/http/sse.ts): frames as the standard writes them (event,
// several data lines for multi-line data, id, retry), comments as keep-alives, the parser across
// arbitrary chunk splits and line endings, and a round trip through a real node:http stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SSE_HEADERS, SseParser, keepAlive, readSse, sseComment, sseFrame, type SseEvent } from '../../src/http/sse.js';

test('sseFrame: event, data, id and retry lines, then a blank line', () => {
  assert.equal(sseFrame({ event: 'floor', data: '{"a":1}' }), 'event: floor\ndata: {"a":1}\n\n');
  assert.equal(sseFrame({ data: 'x', id: '3:120' }), 'data: x\nid: 3:120\n\n');
  assert.equal(sseFrame({ retry: 1000 }), 'retry: 1000\n\n');
  assert.equal(sseFrame({ event: 'message', data: '' }), 'event: message\ndata: \n\n');
});

test('sseFrame: multi-line data becomes one data line per line (LF, CRLF or CR)', () => {
  assert.equal(sseFrame({ data: 'one\ntwo\r\nthree\rfour' }), 'data: one\ndata: two\ndata: three\ndata: four\n\n');
  assert.equal(sseFrame({ data: 'ends\n' }), 'data: ends\ndata: \n\n');
});

test('sseFrame refuses a line break in an event name or id (it would end the field)', () => {
  assert.throws(() => sseFrame({ event: 'a\nb', data: 'x' }), /an SSE event cannot hold a line break/);
  assert.throws(() => sseFrame({ data: 'x', id: '1\r2' }), /an SSE id cannot hold a line break/);
});

test('sseComment: a comment frame the parser ignores', () => {
  assert.equal(sseComment('ping'), ': ping\n\n');
  assert.equal(sseComment(), ':\n\n');
  assert.deepEqual(new SseParser().push(`${sseComment('keepalive')}${sseComment()}`), []);
});

test('SseParser: events whole, named or not, with their id; comments and unknown fields skipped', () => {
  const p = new SseParser();
  const got = p.push(': hello\nevent: floor\ndata: {"n":1}\nid: 7\nfoo: bar\n\ndata: plain\n\nevent: empty\n\n');
  assert.deepEqual(got, [{ event: 'floor', data: '{"n":1}', id: '7' }, { event: 'message', data: 'plain', id: '7' }]);
});

test('SseParser: a field without a space after the colon, and one without a colon', () => {
  assert.deepEqual(new SseParser().push('event:x\ndata:1\ndata\n\n'), [{ event: 'x', data: '1\n' }]);
});

test('SseParser: split at every position of the stream, with LF, CRLF and CR line ends, the same events', () => {
  const frames = [sseFrame({ event: 'a', data: 'one\ntwo' }), sseComment('ping'), sseFrame({ data: '{"ü":"é"}', id: '1' })].join('');
  const want: SseEvent[] = [{ event: 'a', data: 'one\ntwo' }, { event: 'message', data: '{"ü":"é"}', id: '1' }];
  for (const eol of ['\n', '\r\n', '\r']) {
    const text = frames.replace(/\n/g, eol);
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const got = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut))];
      assert.deepEqual(got, want, `eol ${JSON.stringify(eol)}, cut at ${cut}`);
    }
  }
});

test('SseParser: an event without its closing blank line when the stream ends is dropped', () => {
  const p = new SseParser();
  assert.deepEqual(p.push('data: half'), []);
  assert.deepEqual(p.end(), []);
});

test('round trip: frames written on a real HTTP stream with keep-alives, read back by readSse', async () => {
  const sent = [{ event: 'floor', data: JSON.stringify({ jobs: [1, 2], text: 'a\nb' }) }, { event: 'lines', data: 'first\nsecond', id: '1:20' }];
  const server = createServer((_req, res) => {
    res.writeHead(200, SSE_HEADERS);
    const stop = keepAlive(res, 5);
    res.write(sseFrame(sent[0]!));
    // a keep-alive or two between the frames, then the second frame in two writes
    setTimeout(() => {
      const f = sseFrame(sent[1]!);
      res.write(f.slice(0, 9));
      res.end(f.slice(9));
      stop();
    }, 30);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const got: SseEvent[] = [];
    let chunks = 0;
    await readSse(res.body!, (e) => got.push(e), () => { chunks++; });
    assert.deepEqual(got, [{ event: 'floor', data: sent[0]!.data }, { event: 'lines', data: 'first\nsecond', id: '1:20' }]);
    assert.deepEqual(JSON.parse(got[0]!.data), { jobs: [1, 2], text: 'a\nb' });
    assert.ok(chunks >= 2, `readSse told of each chunk (${chunks})`);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});
