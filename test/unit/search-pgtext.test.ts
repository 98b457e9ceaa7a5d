// Unit: the transcript index's words on PostgreSQL (src/search/pgText.ts) are FTS5's words — the
// words of SQLite's own index (unicode61 remove_diacritics 2, read back through fts5vocab) for
// texts with paths, accents in both Unicode forms, scripts without spaces, symbols and
// ligatures —, a parsed query compiles to the tsquery that means the same, and the snippet is cut
// around the words that matched.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { indexDocument, indexWords, snippetOf, tsqueryOf } from '../../src/search/pgText.js';
import { parseQuery } from '../../src/search/query.js';

describe('the words of the index', () => {
  test('are the words FTS5 indexes', () => {
    const db = new Database(':memory:');
    db.exec(`CREATE VIRTUAL TABLE t USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
      CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');`);
    const samples = [
      'edited src/search/index.ts and https://example.com/a?b=c, mail ops@example.org v1.2.3',
      'na\u0308ive cafe\u0301 (decomposed)', 'naïve café (composed)', 'ÉCOLE Straße ǅemal',
      "foo_bar don't e-mail -- x+y=z", '日本語テキスト 中文', 'emoji 🎉party x² ½ Ⅻ', 'İstanbul ΟΔΥΣΣΕΥΣ',
      'a\u200Db zero\u200Bwidth', 'ﬁle ﬀ', 'Ⓐbc ㈱', 'ab\u0301\u0302c', 'private x\uE000y use',
    ];
    for (const s of samples) {
      db.exec('DELETE FROM t');
      db.prepare('INSERT INTO t (rowid, body) VALUES (1, ?)').run(s);
      const fts = (db.prepare('SELECT term FROM v ORDER BY offset').all() as { term: string }[]).map((r) => r.term);
      assert.deepEqual(indexWords(s), fts, JSON.stringify(s));
    }
    db.close();
  });

  test('a row becomes a tsvector literal with positions; words too long for PostgreSQL are left out', () => {
    assert.equal(indexDocument('The server, the SERVER.'), "'the':1 'server':2 'the':3 'server':4");
    assert.equal(indexDocument(`a ${'x'.repeat(3000)} b`), "'a':1 'b':3");
    assert.equal(indexDocument('!!!'), '');
  });
});

describe('tsqueryOf', () => {
  const tq = (q: string): string => tsqueryOf(parseQuery(q));
  test('words AND, phrases <->, prefixes :*, OR groups, exclusions', () => {
    assert.equal(tq('connection refused'), "'connection' & 'refused'");
    assert.equal(tq('"connection refused"'), "('connection' <-> 'refused')");
    assert.equal(tq('migrat*'), "'migrat':*");
    assert.equal(tq('"state data"*'), "('state' <-> 'data':*)");
    assert.equal(tq('index sqlite OR postgres'), "'index' & ('sqlite' | 'postgres')");
    assert.equal(tq('timeout -jest -"mocha runner"'), "('timeout') & !('jest' | ('mocha' <-> 'runner'))");
    assert.equal(tq('src/search/index.ts'), "('src' <-> 'search' <-> 'index' <-> 'ts')");
    assert.equal(tq("Café it's & | ! <-> :*"), "'cafe' & ('it' <-> 's')");
  });
});

describe('snippetOf', () => {
  const o = { size: 6, open: '«', close: '»', cut: '…' };
  const snip = (text: string, q: string, size = 6): string => snippetOf(text, parseQuery(q), { ...o, size });
  test('the window holds the most different terms, centred; cuts are marked', () => {
    const text = 'one two three four five six seven eight alpha nine ten beta eleven twelve thirteen';
    assert.equal(snip(text, 'alpha beta'), '…eight «alpha» nine ten «beta» eleven…');
    assert.equal(snip(text, 'one'), '«one» two three four five six…');
    assert.equal(snip(text, 'thirteen'), '…nine ten beta eleven twelve «thirteen»');
    assert.equal(snip('short text here', 'text', 16), 'short «text» here');
  });
  test('a phrase is marked as one run; a prefix marks the whole word; the text between words is kept', () => {
    assert.equal(snip('error: connection refused (ECONNREFUSED) at port', '"connection refused"'), 'error: «connection refused» (ECONNREFUSED) at port');
    assert.equal(snip('running migrations now', 'migrat*', 16), 'running «migrations» now');
    assert.equal(snip('edited src/search/index.ts today', 'index', 16), 'edited src/search/«index».ts today');
    assert.equal(snip('Café crème', 'cafe', 16), '«Café» crème');
  });
  test('without an occurrence (the match was a negated word elsewhere): the first words', () => {
    assert.equal(snip('a b c d e f g h', 'zzz'), 'a b c d e f…');
    assert.equal(snip('', 'zzz'), '');
  });
});
