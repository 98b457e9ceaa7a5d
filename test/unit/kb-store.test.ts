// A knowledge-base file through the layer (KbEntries over openKbFile's SQLite, as the service
// uses it) on a real SQLite file: bm25 ranking (title beats body), snippets, hostile queries
// that must never reach FTS5 as syntax, the FTS index following inserts, updates and
// deletes, listing with tag filter and cursor, and the schema migration being recorded.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KB_MIGRATIONS, type EntryPatch, type KbEntry, type ListFilter, type NewEntry } from '../../src/kb/store.js';
import { kbEntries, kbFileOver, type KbEntries } from '../../src/kb/sqlEntries.js';
import { openDb, type Db as RawDb } from '../../src/store/db.js';
import type { KbScope } from '../../src/kb/triage.js';
import { InvalidInputError } from '../../src/errors.js';

/** One file's entries, bound to its queryable (the calls the service makes). */
class KbFile {
  readonly db;
  private readonly e: KbEntries;
  constructor(readonly raw: RawDb, scope: KbScope, now?: () => number) {
    this.db = kbFileOver(raw);
    this.e = kbEntries({ dialect: 'sqlite', scope }, now);
  }
  static open(file: string, scope: KbScope, now?: () => number): KbFile { return new KbFile(openDb(file, KB_MIGRATIONS), scope, now); }
  insert(x: NewEntry) { return this.e.insert(this.db, x); }
  get(id: number) { return this.e.get(this.db, id); }
  update(id: number, p: EntryPatch) { return this.e.update(this.db, id, p); }
  modify(id: number, fn: (e: KbEntry) => EntryPatch) { return this.e.modify(this.db, id, fn); }
  delete(id: number) { return this.e.delete(this.db, id); }
  byNormTitle(n: string) { return this.e.byNormTitle(this.db, n); }
  list(f?: ListFilter) { return this.e.list(this.db, f); }
  count() { return this.e.count(this.db); }
  nearbyIds(id: number, n?: number) { return this.e.nearbyIds(this.db, id, n); }
  search(q: string, limit?: number) { return this.e.search(this.db, q, limit); }
  searchTerms(t: readonly string[], limit?: number) { return this.e.searchTerms(this.db, t, limit); }
  /** FTS5's own consistency check of the index against the entries (throws SQLITE_CORRUPT_VTAB if they differ). */
  checkIndex(): void { this.raw.prepare("INSERT INTO entries_fts(entries_fts, rank) VALUES ('integrity-check', 1)").run(); }
  close(): Promise<void> { return this.db.destroy(); }
}

let dir: string;
let s: KbFile;
let t = 1_700_000_000_000;
const now = (): number => t;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'kb-store-'));
  s = KbFile.open(join(dir, 'kb.db'), 'project', now);
});
after(async () => {
  await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('KbEntries basics', () => {
  test('insert and get round-trip every column; migration recorded', async () => {
    const e = await s.insert({ title: 'Build: use npm ci', content: 'npm ci respects the lockfile and is faster on CI machines.', tags: ['ci', 'npm'], source_job: 'j-1' });
    assert.equal(e.title, 'Build: use npm ci');
    assert.equal(e.norm_title, 'build use npm ci');
    assert.deepEqual(e.tags, ['ci', 'npm']);
    assert.equal(e.scope, 'project');
    assert.equal(e.source_job, 'j-1');
    assert.deepEqual(e.sources, ['j-1']);
    assert.equal(e.merged_count, 0);
    assert.equal(e.created_at, t);
    assert.deepEqual(await s.get(e.id), e);
    const v = s.raw.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number };
    assert.equal(v.v, 1);
    assert.equal((await s.byNormTitle('build use npm ci'))?.id, e.id);
    await s.delete(e.id);
  });

  test('ids are never reused after a delete', async () => {
    const a = await s.insert({ title: 'Temp one', content: 'temporary entry number one' });
    await s.delete(a.id);
    const b = await s.insert({ title: 'Temp two', content: 'temporary entry number two' });
    assert.ok(b.id > a.id);
    await s.delete(b.id);
  });

  test('reopening the file keeps the data and does not re-migrate', async () => {
    const e = await s.insert({ title: 'Persisted entry', content: 'this survives closing the database' });
    const again = KbFile.open(join(dir, 'kb.db'), 'project');
    try {
      assert.equal((await again.get(e.id))?.title, 'Persisted entry');
    } finally {
      await again.close();
    }
    await s.delete(e.id);
  });
});

describe('search ranking and snippets', () => {
  let titleHit: number;
  let bodyHit: number;
  let tagHit: number;
  before(async () => {
    bodyHit = (await s.insert({ title: 'Release checklist', content: 'Before tagging, run the whole suite; a flaky suite blocks the release and someone must rerun it by hand.' })).id;
    titleHit = (await s.insert({ title: 'Flaky suite on CI', content: 'The date tests depend on the machine time zone; set TZ=UTC in the workflow.' })).id;
    tagHit = (await s.insert({ title: 'Unrelated title', content: 'Nothing about the topic in this body at all, only words.', tags: ['flaky'] })).id;
    for (let i = 0; i < 20; i++) await s.insert({ title: `Filler ${i}`, content: `Some generic content about builds and deploys number ${i}.` });
  });

  test('a title hit outranks body and tag hits', async () => {
    const hits = await s.search('flaky suite');
    const ids = hits.map((h) => h.entry.id);
    assert.equal(ids[0], titleHit);
    assert.ok(ids.includes(bodyHit));
    assert.ok(ids.indexOf(titleHit) < ids.indexOf(bodyHit));
    assert.ok(hits[0]!.score > hits[1]!.score, 'scores descend');
    assert.ok(ids.includes(tagHit), 'tags are searchable');
  });

  test('snippets come from the content and bold the matched terms', async () => {
    const hit = (await s.search('flaky')).find((h) => h.entry.id === bodyHit)!;
    assert.match(hit.snippet, /\*\*flaky\*\*/);
    assert.ok(!hit.snippet.includes('Release checklist'), 'snippet is content, not title');
    // A title-only hit still gets the opening of its content.
    const th = (await s.search('ci')).find((h) => h.entry.id === titleHit)!;
    assert.match(th.snippet, /date tests depend/);
  });

  test('porter stemming: plural and -ing forms match', async () => {
    assert.ok((await s.search('tagging')).some((h) => h.entry.id === bodyHit));
    assert.ok((await s.search('zones')).some((h) => h.entry.id === titleHit));
  });

  test('limit caps the hits; no match → []', async () => {
    assert.equal((await s.search('content', 5)).length, 5);
    assert.deepEqual(await s.search('xylophone'), []);
  });

  test('hostile queries never throw an FTS5 syntax error', async () => {
    const nasty = [
      'AND OR NOT', 'flaky AND', 'OR flaky', 'NOT', 'NEAR(flaky suite, 2)', 'title:flaky', '{title content}: flaky', 'flaky*', '^flaky',
      'flaky"suite', '"unbalanced', "it's flaky", 'a - b + c', '(flaky', 'flaky)', 'c++ && ||', '日本語 テスト', 'naïve café résumé', '🙂 flaky 🙂',
      'x'.repeat(2000), Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ').slice(0, 2000), 'flaky\u0000suite', 'rowid = 1; DROP TABLE entries',
    ];
    for (const q of nasty) await assert.doesNotReject(s.search(q), `query ${JSON.stringify(q.slice(0, 40))}`);
    assert.ok((await s.search('AND OR NOT flaky')).some((h) => h.entry.id === titleHit), 'operators are plain words');
    assert.ok((await s.search('title:flaky')).some((h) => h.entry.id === titleHit), 'no column filter');
    assert.equal(await s.count() > 0, true, 'the table is still there');
  });

  test('queries without a word are a clear invalid_input error', async () => {
    for (const q of ['', '   ', '"', '*', '()', '-- ++ ::', '""""']) {
      await assert.rejects(s.search(q), (err: unknown) => {
        assert.ok(err instanceof InvalidInputError);
        assert.match(err.message, /query (is empty|has no letters or digits).*search with words/);
        return true;
      }, JSON.stringify(q));
    }
  });

  test('searchTerms with no terms is [] (not an error)', async () => {
    assert.deepEqual(await s.searchTerms([]), []);
    assert.ok((await s.searchTerms(['flaky', 'nothing'])).length > 0);
  });
});

describe('the FTS index follows updates and deletes', () => {
  test('update of title, content and tags re-indexes; old words no longer match', async () => {
    const e = await s.insert({ title: 'Kangaroo config', content: 'The kangaroo setting lives in wombat.toml.', tags: ['marsupial'] });
    t += 1000;
    const u = (await s.update(e.id, { title: 'Platypus config', content: 'The platypus setting lives in echidna.toml.', tags: ['monotreme'] }))!;
    assert.equal(u.norm_title, 'platypus config');
    assert.equal(u.updated_at, t);
    assert.equal(u.created_at, t - 1000);
    for (const gone of ['kangaroo', 'wombat', 'marsupial']) assert.ok(!(await s.search(gone)).some((h) => h.entry.id === e.id), gone);
    for (const there of ['platypus', 'echidna', 'monotreme']) assert.ok((await s.search(there)).some((h) => h.entry.id === e.id), there);
    s.checkIndex();
    assert.equal(await s.byNormTitle('kangaroo config'), undefined);
    assert.equal((await s.byNormTitle('platypus config'))?.id, e.id);
  });

  test('an update that touches only counters keeps the index as it was', async () => {
    const e = await s.insert({ title: 'Counter only', content: 'the quokka entry keeps its words' });
    await s.update(e.id, { merged_count: 3, sources: ['j-a', 'j-b'] });
    assert.deepEqual((await s.get(e.id))?.sources, ['j-a', 'j-b']);
    assert.ok((await s.search('quokka')).some((h) => h.entry.id === e.id));
    s.checkIndex();
  });

  test('delete removes the entry from search; the index stays consistent', async () => {
    const e = await s.insert({ title: 'Doomed entry', content: 'the numbat word appears only here', tags: ['numbat'] });
    assert.equal((await s.search('numbat')).length, 1);
    assert.equal(await s.delete(e.id), true);
    assert.equal(await s.delete(e.id), false);
    assert.deepEqual(await s.search('numbat'), []);
    assert.equal(await s.get(e.id), undefined);
    s.checkIndex();
  });

  test('checkIndex does catch an index that disagrees with the entries', async () => {
    const x = KbFile.open(join(dir, 'broken.db'), 'project');
    try {
      const e = await x.insert({ title: 'Will drift', content: 'the bilby word is indexed' });
      x.checkIndex();
      x.raw.exec('DROP TRIGGER entries_au');
      x.raw.prepare('UPDATE entries SET content = ? WHERE id = ?').run('changed behind the index', e.id);
      assert.throws(() => x.checkIndex(), (err: unknown) => (err as { code?: string }).code === 'SQLITE_CORRUPT_VTAB');
    } finally {
      await x.close();
    }
  });

  test('modify runs read-modify-write; unknown ids give undefined', async () => {
    const e = await s.insert({ title: 'Modify me', content: 'content for the modify test' });
    const m = (await s.modify(e.id, (cur) => ({ merged_count: cur.merged_count + 1, content: `${cur.content} and more` })))!;
    assert.equal(m.merged_count, 1);
    assert.equal(m.content, 'content for the modify test and more');
    assert.equal(await s.modify(999_999, () => ({ merged_count: 1 })), undefined);
    assert.equal(await s.update(999_999, { title: 'x' }), undefined);
  });
});

describe('list', () => {
  test('newest first, tag filter, paging by id', async () => {
    const other = KbFile.open(join(dir, 'list.db'), 'global', now);
    try {
      const ids: number[] = [];
      for (let i = 0; i < 7; i++) ids.push((await other.insert({ title: `Entry ${i}`, content: `content of entry ${i}`, tags: i % 2 ? ['odd'] : ['even'] })).id);
      assert.deepEqual((await other.list()).map((e) => e.id), [...ids].reverse());
      assert.ok((await other.list()).every((e) => e.scope === 'global'));
      assert.deepEqual((await other.list({ tag: 'odd' })).map((e) => e.id), [ids[5], ids[3], ids[1]]);
      const p1 = await other.list({ limit: 3 });
      const p2 = await other.list({ limit: 3, beforeId: p1.at(-1)!.id });
      assert.deepEqual([...p1, ...p2].map((e) => e.id), [...ids].reverse().slice(0, 6));
      assert.deepEqual(await other.list({ tag: 'none' }), []);
      assert.deepEqual(await other.nearbyIds(ids[3]! + 100, 2), [ids[6], ids[5]]);
      assert.equal(await other.count(), 7);
    } finally {
      await other.close();
    }
  });
});
