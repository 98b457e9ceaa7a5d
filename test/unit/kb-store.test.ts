// KbStore on a real SQLite file: bm25 ranking (title beats body), snippets, hostile queries
// that must never reach FTS5 as syntax, the FTS index following inserts, updates and
// deletes, listing with tag filter and cursor, and the schema migration being recorded.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KbStore } from '../../src/kb/store.js';
import { InvalidInputError } from '../../src/errors.js';

let dir: string;
let s: KbStore;
let t = 1_700_000_000_000;
const now = (): number => t;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-store-'));
  s = KbStore.open(join(dir, 'kb.db'), 'project', now);
});
after(() => {
  s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('KbStore basics', () => {
  test('insert and get round-trip every column; migration recorded', () => {
    const e = s.insert({ title: 'Build: use npm ci', content: 'npm ci respects the lockfile and is faster on CI machines.', tags: ['ci', 'npm'], source_job: 'j-1' });
    assert.equal(e.title, 'Build: use npm ci');
    assert.equal(e.norm_title, 'build use npm ci');
    assert.deepEqual(e.tags, ['ci', 'npm']);
    assert.equal(e.scope, 'project');
    assert.equal(e.source_job, 'j-1');
    assert.deepEqual(e.sources, ['j-1']);
    assert.equal(e.merged_count, 0);
    assert.equal(e.created_at, t);
    assert.deepEqual(s.get(e.id), e);
    const v = s.db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number };
    assert.equal(v.v, 1);
    assert.equal(s.byNormTitle('build use npm ci')?.id, e.id);
    s.delete(e.id);
  });

  test('ids are never reused after a delete', () => {
    const a = s.insert({ title: 'Temp one', content: 'temporary entry number one' });
    s.delete(a.id);
    const b = s.insert({ title: 'Temp two', content: 'temporary entry number two' });
    assert.ok(b.id > a.id);
    s.delete(b.id);
  });

  test('reopening the file keeps the data and does not re-migrate', () => {
    const e = s.insert({ title: 'Persisted entry', content: 'this survives closing the database' });
    const again = KbStore.open(join(dir, 'kb.db'), 'project');
    try {
      assert.equal(again.get(e.id)?.title, 'Persisted entry');
    } finally {
      again.close();
    }
    s.delete(e.id);
  });
});

describe('search ranking and snippets', () => {
  let titleHit: number;
  let bodyHit: number;
  let tagHit: number;
  before(() => {
    bodyHit = s.insert({ title: 'Release checklist', content: 'Before tagging, run the whole suite; a flaky suite blocks the release and someone must rerun it by hand.' }).id;
    titleHit = s.insert({ title: 'Flaky suite on CI', content: 'The date tests depend on the machine time zone; set TZ=UTC in the workflow.' }).id;
    tagHit = s.insert({ title: 'Unrelated title', content: 'Nothing about the topic in this body at all, only words.', tags: ['flaky'] }).id;
    for (let i = 0; i < 20; i++) s.insert({ title: `Filler ${i}`, content: `Some generic content about builds and deploys number ${i}.` });
  });

  test('a title hit outranks body and tag hits', () => {
    const hits = s.search('flaky suite');
    const ids = hits.map((h) => h.entry.id);
    assert.equal(ids[0], titleHit);
    assert.ok(ids.includes(bodyHit));
    assert.ok(ids.indexOf(titleHit) < ids.indexOf(bodyHit));
    assert.ok(hits[0]!.score > hits[1]!.score, 'scores descend');
    assert.ok(ids.includes(tagHit), 'tags are searchable');
  });

  test('snippets come from the content and bold the matched terms', () => {
    const hit = s.search('flaky').find((h) => h.entry.id === bodyHit)!;
    assert.match(hit.snippet, /\*\*flaky\*\*/);
    assert.ok(!hit.snippet.includes('Release checklist'), 'snippet is content, not title');
    // A title-only hit still gets the opening of its content.
    const th = s.search('ci').find((h) => h.entry.id === titleHit)!;
    assert.match(th.snippet, /date tests depend/);
  });

  test('porter stemming: plural and -ing forms match', () => {
    assert.ok(s.search('tagging').some((h) => h.entry.id === bodyHit));
    assert.ok(s.search('zones').some((h) => h.entry.id === titleHit));
  });

  test('limit caps the hits; no match → []', () => {
    assert.equal(s.search('content', 5).length, 5);
    assert.deepEqual(s.search('xylophone'), []);
  });

  test('hostile queries never throw an FTS5 syntax error', () => {
    const nasty = [
      'AND OR NOT', 'flaky AND', 'OR flaky', 'NOT', 'NEAR(flaky suite, 2)', 'title:flaky', '{title content}: flaky', 'flaky*', '^flaky',
      'flaky"suite', '"unbalanced', "it's flaky", 'a - b + c', '(flaky', 'flaky)', 'c++ && ||', '日本語 テスト', 'naïve café résumé', '🙂 flaky 🙂',
      'x'.repeat(2000), Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ').slice(0, 2000), 'flaky\u0000suite', 'rowid = 1; DROP TABLE entries',
    ];
    for (const q of nasty) assert.doesNotThrow(() => s.search(q), `query ${JSON.stringify(q.slice(0, 40))}`);
    assert.ok(s.search('AND OR NOT flaky').some((h) => h.entry.id === titleHit), 'operators are plain words');
    assert.ok(s.search('title:flaky').some((h) => h.entry.id === titleHit), 'no column filter');
    assert.equal(s.count() > 0, true, 'the table is still there');
  });

  test('queries without a word are a clear invalid_input error', () => {
    for (const q of ['', '   ', '"', '*', '()', '-- ++ ::', '""""']) {
      assert.throws(() => s.search(q), (err: unknown) => {
        assert.ok(err instanceof InvalidInputError);
        assert.match(err.message, /query (is empty|has no letters or digits).*search with words/);
        return true;
      }, JSON.stringify(q));
    }
  });

  test('searchTerms with no terms is [] (not an error)', () => {
    assert.deepEqual(s.searchTerms([]), []);
    assert.ok(s.searchTerms(['flaky', 'nothing']).length > 0);
  });
});

describe('the FTS index follows updates and deletes', () => {
  test('update of title, content and tags re-indexes; old words no longer match', () => {
    const e = s.insert({ title: 'Kangaroo config', content: 'The kangaroo setting lives in wombat.toml.', tags: ['marsupial'] });
    t += 1000;
    const u = s.update(e.id, { title: 'Platypus config', content: 'The platypus setting lives in echidna.toml.', tags: ['monotreme'] })!;
    assert.equal(u.norm_title, 'platypus config');
    assert.equal(u.updated_at, t);
    assert.equal(u.created_at, t - 1000);
    for (const gone of ['kangaroo', 'wombat', 'marsupial']) assert.ok(!s.search(gone).some((h) => h.entry.id === e.id), gone);
    for (const there of ['platypus', 'echidna', 'monotreme']) assert.ok(s.search(there).some((h) => h.entry.id === e.id), there);
    s.checkIndex();
    assert.equal(s.byNormTitle('kangaroo config'), undefined);
    assert.equal(s.byNormTitle('platypus config')?.id, e.id);
  });

  test('an update that touches only counters keeps the index as it was', () => {
    const e = s.insert({ title: 'Counter only', content: 'the quokka entry keeps its words' });
    s.update(e.id, { merged_count: 3, sources: ['j-a', 'j-b'] });
    assert.deepEqual(s.get(e.id)?.sources, ['j-a', 'j-b']);
    assert.ok(s.search('quokka').some((h) => h.entry.id === e.id));
    s.checkIndex();
  });

  test('delete removes the entry from search; the index stays consistent', () => {
    const e = s.insert({ title: 'Doomed entry', content: 'the numbat word appears only here', tags: ['numbat'] });
    assert.equal(s.search('numbat').length, 1);
    assert.equal(s.delete(e.id), true);
    assert.equal(s.delete(e.id), false);
    assert.deepEqual(s.search('numbat'), []);
    assert.equal(s.get(e.id), undefined);
    s.checkIndex();
  });

  test('checkIndex does catch an index that disagrees with the entries', () => {
    const x = KbStore.open(join(dir, 'broken.db'), 'project');
    try {
      const e = x.insert({ title: 'Will drift', content: 'the bilby word is indexed' });
      x.checkIndex();
      x.db.exec('DROP TRIGGER entries_au');
      x.db.prepare('UPDATE entries SET content = ? WHERE id = ?').run('changed behind the index', e.id);
      assert.throws(() => x.checkIndex(), (err: unknown) => (err as { code?: string }).code === 'SQLITE_CORRUPT_VTAB');
    } finally {
      x.close();
    }
  });

  test('modify runs read-modify-write; unknown ids give undefined', () => {
    const e = s.insert({ title: 'Modify me', content: 'content for the modify test' });
    const m = s.modify(e.id, (cur) => ({ merged_count: cur.merged_count + 1, content: `${cur.content} and more` }))!;
    assert.equal(m.merged_count, 1);
    assert.equal(m.content, 'content for the modify test and more');
    assert.equal(s.modify(999_999, () => ({ merged_count: 1 })), undefined);
    assert.equal(s.update(999_999, { title: 'x' }), undefined);
  });
});

describe('list', () => {
  test('newest first, tag filter, paging by id', () => {
    const other = KbStore.open(join(dir, 'list.db'), 'global', now);
    try {
      const ids = Array.from({ length: 7 }, (_, i) => other.insert({ title: `Entry ${i}`, content: `content of entry ${i}`, tags: i % 2 ? ['odd'] : ['even'] }).id);
      assert.deepEqual(other.list().map((e) => e.id), [...ids].reverse());
      assert.ok(other.list().every((e) => e.scope === 'global'));
      assert.deepEqual(other.list({ tag: 'odd' }).map((e) => e.id), [ids[5], ids[3], ids[1]]);
      const p1 = other.list({ limit: 3 });
      const p2 = other.list({ limit: 3, beforeId: p1.at(-1)!.id });
      assert.deepEqual([...p1, ...p2].map((e) => e.id), [...ids].reverse().slice(0, 6));
      assert.deepEqual(other.list({ tag: 'none' }), []);
      assert.deepEqual(other.nearbyIds(ids[3]! + 100, 2), [ids[6], ids[5]]);
      assert.equal(other.count(), 7);
    } finally {
      other.close();
    }
  });
});
