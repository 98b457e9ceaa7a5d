// Unit: the search syntax becomes an FTS5 expression where every word and phrase is quoted —
// FTS5 operators typed by a person or a model (NEAR, column filters, ^, parentheses, AND/NOT)
// are only words; bad queries get an error that says how to write them; `since` parsing.
// The expressions are also run against a real FTS5 table, so "valid" means SQLite accepts it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { ftsExpression, MAX_TERMS, parseSince } from '../../src/search/query.js';
import { InvalidInputError } from '../../src/errors.js';

const db = new Database(':memory:');
db.exec(`CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')`);
const docs = [
  'connection refused by the server',
  'the server refused a connection',
  'migration 12 applied to the state database',
  'migrations are forward-only',
  'timeout in jest runner',
  'timeout in mocha runner',
  'src/search/index.ts was written',
  'NEAR the end (of it): col:value ^start',
  'sqlite FTS5 index',
  'postgres full text index',
];
const ins = db.prepare('INSERT INTO t (rowid, body) VALUES (?, ?)');
docs.forEach((d, i) => ins.run(i + 1, d));

/** The docs (by 1-based number) a query finds. */
function find(q: string): number[] {
  return (db.prepare('SELECT rowid FROM t WHERE t MATCH ? ORDER BY rowid').all(`body : (${ftsExpression(q)})`) as { rowid: number }[]).map((r) => r.rowid);
}

const bad = (q: string, re: RegExp): void => {
  assert.throws(() => ftsExpression(q), (err: unknown) => err instanceof InvalidInputError && re.test(err.message), `query ${JSON.stringify(q)}`);
};

describe('ftsExpression', () => {
  test('words are all required, in any order; phrases need their words together', () => {
    assert.deepEqual(find('connection refused'), [1, 2]);
    assert.deepEqual(find('"connection refused"'), [1]);
    assert.deepEqual(find('refused "by the server"'), [1]);
    assert.deepEqual(find('"server refused"'), [2]);
  });

  test('prefix*, OR, and -exclusion', () => {
    assert.deepEqual(find('migrat*'), [3, 4]);
    assert.deepEqual(find('sqlite OR postgres'), [9, 10]);
    assert.deepEqual(find('index sqlite OR postgres'), [9, 10]);
    assert.deepEqual(find('timeout -jest'), [6]);
    assert.deepEqual(find('timeout -"jest runner" -mocha'), []);
    assert.deepEqual(find('"state data"*'), [3]);
  });

  test('FTS5 syntax is text: NEAR, column filters, ^, parentheses, AND/NOT, + are words or separators', () => {
    assert.deepEqual(find('NEAR'), [8]);
    assert.deepEqual(find('NEAR(the end)'), [8]);
    assert.deepEqual(find('col:value'), [8]);
    assert.deepEqual(find('^start'), [8]);
    assert.deepEqual(find('body:server'), []); // "body" is a word here, not a column
    assert.deepEqual(find('(of it)'), [8]);
    assert.deepEqual(find('server AND refused'), []); // AND is the word "and", which no doc has
    assert.deepEqual(find('src/search/index.ts'), [7]);
    assert.deepEqual(find('+server'), [1, 2]);
    assert.deepEqual(find('server*refused'), [2]); // * inside a word separates: the phrase "server refused"
  });

  test('quotes inside words and doubled quotes cannot break out of a phrase', () => {
    for (const q of ['a"b', '"" server', 'server ""', '"x"" OR "y"', `'single' quotes`]) {
      try {
        db.prepare('SELECT rowid FROM t WHERE t MATCH ?').all(`body : (${ftsExpression(q)})`);
      } catch (err) {
        if (!(err instanceof InvalidInputError)) throw new Error(`${JSON.stringify(q)} reached SQLite as bad syntax: ${String(err)}`);
      }
    }
    assert.deepEqual(find('"" server'), [1, 2]); // the empty phrase is dropped, not an "find nothing"
  });

  test('bad queries say what is wrong and how to write them', () => {
    bad('', /no words to search for/);
    bad('   ', /no words to search for/);
    bad('*', /no words/);
    bad('-- () :', /no words/);
    bad('"connection refused', /unmatched double quote/);
    bad('server "', /unmatched double quote/);
    bad('-server', /only excludes words/);
    bad('-"a b" -c', /only excludes/);
    bad('OR server', /OR needs a word/);
    bad('server OR', /OR needs a word/);
    bad('a OR OR b', /OR needs a word/);
    bad('a OR -b', /OR cannot join an excluded/);
    bad('mi*', /at least 3 letters before the \*/);
    bad('"the a"*', /at least 3 letters/);
    bad(Array.from({ length: MAX_TERMS + 1 }, (_, i) => `w${i}`).join(' '), new RegExp(`at most ${MAX_TERMS}`));
  });

  test('lowercase or is a word; a dash inside a word separates', () => {
    assert.deepEqual(find('sqlite or postgres'), []);
    assert.deepEqual(find('forward-only'), [4]);
  });
});

describe('parseSince', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  test('how long ago', () => {
    assert.equal(parseSince('2h', now), now - 2 * 3_600_000);
    assert.equal(parseSince('30m', now), now - 30 * 60_000);
    assert.equal(parseSince('7d', now), now - 7 * 86_400_000);
    assert.equal(parseSince('1w', now), now - 604_800_000);
    assert.equal(parseSince('45 s', now), now - 45_000);
    assert.equal(parseSince('3 hours ago', now), now - 3 * 3_600_000);
    assert.equal(parseSince(' 10min ', now), now - 600_000);
  });
  test('ISO times and dates', () => {
    assert.equal(parseSince('2026-11-22T10:00:00Z', now), Date.parse('2026-11-22T10:00:00Z'));
    assert.equal(parseSince('2026-11-22T10:00Z', now), Date.parse('2026-11-22T10:00:00Z'));
    assert.equal(parseSince('2026-11-22T10:00:00.250+02:00', now), Date.parse('2026-11-22T08:00:00.250Z'));
    assert.equal(parseSince('2026-11-20', now), Date.parse('2026-11-20T00:00:00Z'));
  });
  test('anything else, and the future, is a clear error', () => {
    for (const v of ['yesterday', '2 fortnights', '-2h', '2h30m', '2026-13-45', '12:00', '']) {
      assert.throws(() => parseSince(v, now), (e: unknown) => e instanceof InvalidInputError && /is not a time: give how long ago/.test(e.message), v);
    }
    assert.throws(() => parseSince('2027-01-01T00:00:00Z', now), /in the future/);
  });
});
