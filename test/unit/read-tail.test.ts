// readTailLines on big files (reads only the end) and followLines driven by fs.watch.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, open, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { followLines, readTailLines } from '../../src/launch/readTail.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'overseer-readtail-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Rejects if `p` does not settle within `ms` (a deadline, not a sleep). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** Counts bytes read through any FileHandle while `fn` runs. */
async function countBytesRead<T>(fn: () => Promise<T>): Promise<{ value: T; bytes: number }> {
  const probe = await open(fileURLToPath(import.meta.url), 'r');
  const proto = Object.getPrototypeOf(probe) as { read: (...a: unknown[]) => Promise<{ bytesRead: number }> };
  await probe.close();
  const original = proto.read;
  let bytes = 0;
  proto.read = async function (this: unknown, ...args: unknown[]) {
    const r = await original.apply(this, args);
    bytes += r.bytesRead;
    return r;
  };
  try {
    return { value: await fn(), bytes };
  } finally {
    proto.read = original;
  }
}

describe('readTailLines', () => {
  let big = '';
  const LINES = 500_000;
  before(async () => {
    big = join(dir, 'big.jsonl');
    const parts: string[] = [];
    for (let i = 0; i < LINES; i++) parts.push(`{"i":${i},"pad":"${'p'.repeat(80)}"}\n`);
    await writeFile(big, parts.join(''));
  });

  test('50 MB file: last lines, correct, reading only the end', async () => {
    const t0 = performance.now();
    const { value, bytes } = await countBytesRead(() => readTailLines(big, 100));
    const ms = performance.now() - t0;
    assert.equal(value.length, 100);
    assert.deepEqual(value.map((l) => JSON.parse(l).i), Array.from({ length: 100 }, (_, k) => LINES - 100 + k));
    assert.ok(bytes < 5 * 1024 * 1024, `read ${bytes} bytes`);
    assert.ok(bytes < 256 * 1024, `only the needed chunk: read ${bytes} bytes`);
    assert.ok(ms < 2000, `took ${ms} ms`);
  });

  test('asking for more lines than maxBytes holds stops at maxBytes', async () => {
    const { value, bytes } = await countBytesRead(() => readTailLines(big, 1_000_000, 64 * 1024));
    assert.ok(bytes <= 64 * 1024, `read ${bytes} bytes`);
    assert.ok(value.length > 500 && value.length < 1000);
    assert.equal(JSON.parse(value.at(-1)!).i, LINES - 1);
    const ids = value.map((l) => JSON.parse(l).i as number);
    ids.forEach((id, k) => assert.equal(id, ids[0]! + k), 'contiguous, no partial first line');
  });

  test('small maxBytes with lines spanning chunk boundaries', async () => {
    const value = await readTailLines(big, 3, 1000);
    assert.deepEqual(value.map((l) => JSON.parse(l).i), [LINES - 3, LINES - 2, LINES - 1]);
  });

  test('missing file, empty file, no newline, blank lines, CRLF, whole small file', async () => {
    assert.deepEqual(await readTailLines(join(dir, 'nope.jsonl'), 10), []);
    const f = join(dir, 'small.jsonl');
    await writeFile(f, '');
    assert.deepEqual(await readTailLines(f, 10), []);
    await writeFile(f, 'partial');
    assert.deepEqual(await readTailLines(f, 10), [], 'an unterminated line is not complete');
    await writeFile(f, 'a\r\n\n\nb\n  \nc\nhalf');
    assert.deepEqual(await readTailLines(f, 10), ['a', 'b', 'c']);
    assert.deepEqual(await readTailLines(f, 2), ['b', 'c']);
    assert.deepEqual(await readTailLines(f, 0), []);
  });

  test('a line longer than maxBytes yields nothing rather than a fragment', async () => {
    const f = join(dir, 'long.jsonl');
    await writeFile(f, `short\n${'L'.repeat(10_000)}\n`);
    assert.deepEqual(await readTailLines(f, 5, 1000), []);
    assert.deepEqual(await readTailLines(f, 5, 20_000), ['short', 'L'.repeat(10_000)]);
  });
});

describe('followLines', () => {
  test('yields lines appended after the call, across partial writes, then stops on abort', async () => {
    const f = join(dir, 'follow.jsonl');
    await writeFile(f, 'old1\nold2\n');
    const ac = new AbortController();
    const it = followLines(f, ac.signal);
    const first = it.next();
    await appendFile(f, 'a\nb\n');
    assert.deepEqual(await within(first, 5000, 'a'), { value: 'a', done: false });
    assert.deepEqual(await within(it.next(), 5000, 'b'), { value: 'b', done: false });
    const third = it.next();
    await appendFile(f, '{"half":');
    await appendFile(f, 'true}\n');
    assert.deepEqual(await within(third, 5000, 'joined line'), { value: '{"half":true}', done: false });
    const pending = it.next();
    ac.abort();
    assert.deepEqual(await within(pending, 5000, 'end on abort'), { value: undefined, done: true });
    assert.deepEqual(await it.next(), { value: undefined, done: true });
  });

  test('lines written between the call and the first next() are not lost', async () => {
    const f = join(dir, 'early.jsonl');
    await writeFile(f, 'old\n');
    const ac = new AbortController();
    const it = followLines(f, ac.signal);
    await appendFile(f, 'early\n');
    assert.deepEqual(await within(it.next(), 5000, 'early'), { value: 'early', done: false });
    ac.abort();
    assert.equal((await within(it.next(), 5000, 'end')).done, true);
  });

  test('starting mid-line skips the rest of that line', async () => {
    const f = join(dir, 'midline.jsonl');
    await writeFile(f, 'done\nhalf-writ');
    const ac = new AbortController();
    const it = followLines(f, ac.signal);
    const next = it.next();
    await appendFile(f, 'ten\nfresh\n');
    assert.deepEqual(await within(next, 5000, 'fresh'), { value: 'fresh', done: false });
    ac.abort();
    await it.return(undefined);
  });

  test('file that does not exist yet (directory watched), then truncation', async () => {
    const f = join(dir, 'later.jsonl');
    const ac = new AbortController();
    const it = followLines(f, ac.signal);
    const first = it.next();
    await writeFile(f, 'created\n');
    assert.deepEqual(await within(first, 5000, 'line of created file'), { value: 'created', done: false });
    const second = it.next();
    await appendFile(f, 'appended\n');
    assert.deepEqual(await within(second, 5000, 'appended'), { value: 'appended', done: false });
    const third = it.next();
    await truncate(f, 0);
    await appendFile(f, 'after-truncate\n');
    assert.deepEqual(await within(third, 5000, 'after truncate'), { value: 'after-truncate', done: false });
    const fourth = it.next();
    await unlink(f);
    await writeFile(f, 'recreated\n');
    assert.deepEqual(await within(fourth, 5000, 'recreated'), { value: 'recreated', done: false });
    ac.abort();
    assert.equal((await within(it.next(), 5000, 'end')).done, true);
  });

  test('already-aborted signal ends at once', async () => {
    const ac = new AbortController();
    ac.abort();
    const it = followLines(join(dir, 'whatever.jsonl'), ac.signal);
    assert.deepEqual(await within(it.next(), 1000, 'immediate end'), { value: undefined, done: true });
  });
});
