// Unit: prefix range bounds over UTF-8 ordered text, and JSON-budgeted string pieces.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { prefixRange, prefixUpperBound } from '../../src/store/prefix.js';
import { chunkEnd, jsonLength } from '../../src/domain/jsonChunk.js';

describe('prefixUpperBound', () => {
  test('increments the last code point, carrying past U+10FFFF and skipping surrogates', () => {
    assert.equal(prefixUpperBound('ab'), 'ac');
    assert.equal(prefixUpperBound(''), undefined);
    assert.equal(prefixUpperBound('a\u{10FFFF}'), 'b');
    assert.equal(prefixUpperBound('\u{10FFFF}'), undefined);
    assert.equal(prefixUpperBound('a\uD7FF'), 'a\uE000');
  });

  test('SQLite selects exactly the keys that start with the prefix, astral characters included', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY)');
    const keys = ['p/a', 'p/😀', 'p/\u{10FFFF}x', 'p/\uFFFF', 'p0', 'p', 'q/😀', 'o/z', 'p/'];
    for (const k of keys) db.prepare('INSERT INTO t VALUES (?)').run(k);
    for (const prefix of ['p/', 'p', '', '😀', 'p/\u{10FFFF}']) {
      const r = prefixRange('k', prefix);
      const got = (db.prepare(`SELECT k FROM t WHERE ${r.sql} ORDER BY k`).all(...r.params) as { k: string }[]).map((x) => x.k);
      const want = keys.filter((k) => k.startsWith(prefix)).sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
      assert.deepEqual(got, want, `prefix ${JSON.stringify(prefix)}`);
    }
    db.close();
  });
});

describe('chunkEnd', () => {
  test('pieces cover the string exactly, each within budget, surrogate pairs never split', () => {
    const s = `${'a"\\\n\u0001😀'.repeat(700)}tail`;
    for (const budget of [1, 2, 5, 6, 7, 100, 4096]) {
      let at = 0;
      let joined = '';
      let guard = 0;
      while (at < s.length && guard++ < 100_000) {
        const end = chunkEnd(s, at, budget);
        if (end === at) { assert.ok(budget < 6, `budget ${budget} fits one character`); break; }
        const piece = s.slice(at, end);
        assert.ok(jsonLength(piece) <= budget, `piece over budget ${budget}`);
        assert.ok(!/[\uD800-\uDBFF]$/.test(piece), 'piece ends in a high surrogate');
        joined += piece;
        at = end;
      }
      if (budget >= 6) assert.equal(joined, s);
    }
  });

  test('a string that fits is one piece', () => {
    assert.equal(chunkEnd('hello', 0, 5), 5);
    assert.equal(chunkEnd('hello', 0, 4), 4);
  });
});
