// LineSplitter under hostile input: byte-by-byte chunks, split UTF-8, CRLF, huge lines, garbage.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { LineSplitter } from '../../src/launch/lineSplitter.js';

function collect(opts?: ConstructorParameters<typeof LineSplitter>[1]): { s: LineSplitter; lines: string[] } {
  const lines: string[] = [];
  return { s: new LineSplitter((l) => lines.push(l), opts), lines };
}

describe('LineSplitter', () => {
  test('whole chunks, empty and blank lines skipped', () => {
    const { s, lines } = collect();
    s.push('a\n\nb\n   \n\nc\n');
    s.end();
    assert.deepEqual(lines, ['a', 'b', 'c']);
  });

  test('1-byte chunks with multi-byte UTF-8 split between chunks', () => {
    const text = 'café 🎉 naïve\n{"t":"日本語"}\r\nlast é';
    const { s, lines } = collect();
    const bytes = Buffer.from(text, 'utf8');
    for (let i = 0; i < bytes.length; i++) s.push(bytes.subarray(i, i + 1));
    assert.deepEqual(lines, ['café 🎉 naïve', '{"t":"日本語"}']);
    s.end();
    assert.deepEqual(lines, ['café 🎉 naïve', '{"t":"日本語"}', 'last é']);
  });

  test('emoji split at every possible offset', () => {
    const bytes = Buffer.from('x🎉y\n', 'utf8');
    for (let cut = 0; cut <= bytes.length; cut++) {
      const { s, lines } = collect();
      s.push(bytes.subarray(0, cut));
      s.push(bytes.subarray(cut));
      s.end();
      assert.deepEqual(lines, ['x🎉y'], `cut at ${cut}`);
    }
  });

  test('CRLF split between chunks; lone CR inside a line is content', () => {
    const { s, lines } = collect();
    s.push('one\r');
    s.push('\ntwo\r');
    s.push('x\r\n');
    s.push('three\r');
    s.end();
    assert.deepEqual(lines, ['one', 'two\rx', 'three']);
  });

  test('final line without newline only appears on end()', () => {
    const { s, lines } = collect();
    s.push('{"a":1}\n{"b":');
    assert.deepEqual(lines, ['{"a":1}']);
    s.push('2}');
    s.end();
    assert.deepEqual(lines, ['{"a":1}', '{"b":2}']);
    s.end();
    assert.equal(lines.length, 2);
  });

  test('string and Uint8Array chunks are accepted', () => {
    const { s, lines } = collect();
    s.push(new Uint8Array(Buffer.from('ab')));
    s.push('c\n');
    assert.deepEqual(lines, ['abc']);
  });

  test('a 20 MB line without newline is dropped with bounded memory, then lines parse again', () => {
    const cap = 1024 * 1024;
    const overflows: number[] = [];
    const { s, lines } = collect({ maxLineBytes: cap, onOverflow: (n) => overflows.push(n) });
    s.push('before\n');
    const block = Buffer.alloc(64 * 1024, 0x61);
    let maxSeen = 0;
    const total = 20 * 1024 * 1024;
    for (let sent = 0; sent < total; sent += block.length) {
      s.push(block);
      maxSeen = Math.max(maxSeen, s.bufferedBytes);
    }
    assert.ok(maxSeen <= cap, `buffered ${maxSeen} > cap`);
    assert.equal(s.bufferedBytes, 0, 'nothing held while dropping');
    assert.deepEqual(overflows, [], 'reported when the line ends');
    s.push('tail\n{"ok":true}\n');
    assert.deepEqual(overflows, [total + 4]);
    assert.deepEqual(lines, ['before', '{"ok":true}']);
  });

  test('one huge chunk over the cap, and overflow at end()', () => {
    const overflows: number[] = [];
    const { s, lines } = collect({ maxLineBytes: 10, onOverflow: (n) => overflows.push(n) });
    s.push(Buffer.alloc(5 * 1024 * 1024, 0x62));
    assert.equal(s.bufferedBytes, 0);
    s.end();
    assert.deepEqual(overflows, [5 * 1024 * 1024]);
    s.push('0123456789\r\n01234567890\nok\n');
    assert.deepEqual(lines, ['0123456789', 'ok'], 'exactly maxLineBytes kept even with CRLF');
    assert.deepEqual(overflows, [5 * 1024 * 1024, 11]);
  });

  test('CR held across a chunk boundary at exactly the cap', () => {
    const overflows: number[] = [];
    const { s, lines } = collect({ maxLineBytes: 4, onOverflow: (n) => overflows.push(n) });
    s.push('abcd\r');
    assert.ok(s.bufferedBytes <= 4);
    s.push('\nabcd\r');
    s.push('e\n');
    assert.deepEqual(lines, ['abcd']);
    assert.equal(overflows.length, 1);
  });

  test('binary garbage never throws and keeps line structure', () => {
    let seed = 42;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff;
    const garbage = Buffer.alloc(200_000);
    for (let i = 0; i < garbage.length; i++) garbage[i] = rnd();
    const { s, lines } = collect({ maxLineBytes: 4096 });
    for (let i = 0; i < garbage.length; i += 997) s.push(garbage.subarray(i, i + 997));
    s.push('\n{"after":"garbage"}\n');
    s.end();
    assert.equal(lines.at(-1), '{"after":"garbage"}');
    assert.ok(lines.every((l) => !l.includes('\n')));
  });

  test('invalid UTF-8 becomes U+FFFD and does not leak into the next line', () => {
    const { s, lines } = collect();
    s.push(Buffer.from([0x61, 0xe2, 0x82])); // truncated 3-byte sequence
    s.push('\nb\n');
    assert.deepEqual(lines, ['a\uFFFD', 'b']);
  });

  test('rejects a nonsensical cap', () => {
    assert.throws(() => new LineSplitter(() => {}, { maxLineBytes: 0 }), RangeError);
  });
});
