// The knowledge base's entries over the Kysely layer (src/kb/sqlEntries.ts): on SQLite a file per
// knowledge base with FTS5 (bm25), on PostgreSQL one kb_entries table for every project and the
// global one (ts_rank_cd over a weighted tsvector). The same semantics as kb/store.ts on both:
// what a search finds and in what order on clear cases (never the scores), stemming, snippets,
// an entry changed or deleted is found by its new words only, lists and paging, and a project's
// entries are never another project's or the global ones.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import type { Schema } from '../../src/store/sql/schema.js';
import { kbEntries, openKbFile, type KbEntries } from '../../src/kb/sqlEntries.js';
import type { KbScope } from '../../src/kb/triage.js';
import { InvalidInputError } from '../../src/errors.js';
import { freshDatabase } from '../helpers/postgres.js';
import { all, startRacer } from '../helpers/sqlRacers.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'overseer-sql-kb-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const T0 = Date.parse('2026-11-29T00:00:00Z');

interface Kb {
  db: Kysely<Schema>;
  e: KbEntries;
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`knowledge base entries on ${dialect}`, () => {
    let home = '';
    let s: SqlDb | undefined;
    let drop = async (): Promise<void> => undefined;
    let url = '';
    const files: Kysely<Schema>[] = [];
    let clock = T0;
    const now = (): number => clock;

    /** A project's knowledge base (or the global one): a file of its own on SQLite, rows of kb_entries on PostgreSQL. */
    const kb = (scope: KbScope, project = '/work/alpha'): Kb => {
      if (dialect === 'postgres') return { db: s!.db, e: kbEntries({ dialect, scope, project }, now) };
      const dir = join(home, scope === 'global' ? 'global' : project.replace(/\W/g, '_'));
      mkdirSync(dir, { recursive: true });
      const db = openKbFile(join(dir, 'kb.db'));
      files.push(db);
      return { db, e: kbEntries({ dialect, scope }, now) };
    };

    before(async () => {
      home = tmp();
      if (dialect === 'postgres') {
        const fresh = await freshDatabase();
        drop = fresh.drop;
        url = fresh.url;
        s = await openSql({ home, databaseUrl: fresh.url });
      }
    });
    after(async () => {
      for (const f of files) await f.destroy();
      await s?.close();
      await drop();
    });

    describe('search', () => {
      let k: Kb;
      const ids: Record<string, number> = {};
      before(async () => {
        k = kb('project', '/work/search');
        const add = async (name: string, title: string, content: string, tags: string[] = []): Promise<void> => {
          ids[name] = (await k.e.insert(k.db, { title, content, tags })).id;
        };
        await add('body', 'Release checklist', 'Before tagging, run the whole suite; a flaky suite blocks the release and someone must rerun it by hand.');
        await add('title', 'Flaky suite on CI', 'The date tests depend on the machine time zone; set TZ=UTC in the workflow.');
        await add('tag', 'Unrelated title', 'Nothing about the topic in this body at all, only words.', ['flaky']);
        await add('path', 'Where the search index lives', 'The index is written by src/search/indexer.ts, its queries are in src/search/store.ts.');
        await add('accent', 'Café naïve', 'Entries about the café next door and the naïve approach.');
        for (let i = 0; i < 12; i++) await add(`filler${i}`, `Filler ${i}`, `Some generic content about builds and deploys number ${i}.`);
      });

      test('a title hit outranks a tag hit, which outranks a body hit; unrelated entries are not found', async () => {
        const hits = await k.e.search(k.db, 'flaky');
        assert.deepEqual(hits.map((h) => h.entry.id), [ids.title, ids.tag, ids.body]);
        assert.ok(hits.every((h, i) => i === 0 || h.score <= hits[i - 1]!.score), 'best first');
      });

      test('any of the words: an entry with more of them comes first', async () => {
        const hits = await k.e.search(k.db, 'machine time zone');
        assert.equal(hits[0]!.entry.id, ids.title);
        assert.deepEqual((await k.e.search(k.db, 'deploys')).length, 10, 'ten by default');
        assert.deepEqual((await k.e.search(k.db, 'deploys', 20)).length, 12);
        assert.deepEqual((await k.e.search(k.db, 'deploys', 3)).length, 3);
        assert.deepEqual(await k.e.search(k.db, 'platypus'), []);
      });

      test('stemming: plural and -ing forms find each other', async () => {
        assert.deepEqual((await k.e.search(k.db, 'tags')).map((h) => h.entry.id), [ids.body]); // "tagging"
        assert.deepEqual((await k.e.search(k.db, 'blocking releases')).map((h) => h.entry.id), [ids.body]);
        assert.deepEqual((await k.e.search(k.db, 'entry')).map((h) => h.entry.id), [ids.accent]); // "Entries"
      });

      test('words split alike on both: the parts of a path, accents and case do not matter', async () => {
        assert.deepEqual((await k.e.search(k.db, 'indexer')).map((h) => h.entry.id), [ids.path]);
        assert.deepEqual((await k.e.search(k.db, 'store ts')).map((h) => h.entry.id), [ids.path]);
        assert.deepEqual((await k.e.search(k.db, 'CAFE NAIVE')).map((h) => h.entry.id), [ids.accent]);
      });

      test('a snippet comes from the content with the matches in **bold**, cut with … where the content goes on', async () => {
        const [h] = await k.e.search(k.db, 'rerun');
        assert.match(h!.snippet, /\*\*rerun\*\*/);
        const [z] = await k.e.search(k.db, 'workflow');
        assert.match(z!.snippet, /\*\*workflow\*\*/);
        const long = (await k.e.insert(k.db, { title: 'Long entry', content: `${Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ')} kangaroo ${Array.from({ length: 60 }, (_, i) => `more${i}`).join(' ')}` })).id;
        const [l] = await k.e.search(k.db, 'kangaroo');
        assert.equal(l!.entry.id, long);
        assert.match(l!.snippet, /^….*\*\*kangaroo\*\*.*…$/);
        await k.e.delete(k.db, long);
      });

      test('searchTerms looks for any of the terms; none is []; text without words is a clear error; hostile text is only words', async () => {
        assert.deepEqual((await k.e.searchTerms(k.db, ['kangaroo', 'rerun'])).map((h) => h.entry.id), [ids.body]);
        assert.deepEqual(await k.e.searchTerms(k.db, []), []);
        for (const q of ['', '  ', '!!! ???', '(((']) {
          await assert.rejects(k.e.search(k.db, q), (e: unknown) => e instanceof InvalidInputError && /search with words/.test(e.message), JSON.stringify(q));
        }
        for (const q of ['title:flaky', 'NEAR(a b)', '"unterminated', "it's & | ! <-> :*", 'flaky AND NOT suite', 'a\\b']) {
          await k.e.search(k.db, q); // never a syntax error from the engine
        }
      });
    });

    test('an entry updated is found by its new words only; counters alone keep its words; deleted, it is gone and its id is not reused', async () => {
      const k = kb('project', '/work/edits');
      const a = await k.e.insert(k.db, { title: 'Wombat burrows', content: 'Wombats dig long burrows with their claws.', tags: ['animals'], source_job: 'j-1' });
      const b = await k.e.insert(k.db, { title: 'Other', content: 'An entry about something else entirely.' });
      assert.deepEqual(a.sources, ['j-1']);
      assert.deepEqual((await k.e.search(k.db, 'wombat')).map((h) => h.entry.id), [a.id]);

      clock = T0 + 5000;
      const u = await k.e.update(k.db, a.id, { title: 'Echidna spines', content: 'Echidnas are covered in spines.', tags: ['monotremes'] });
      assert.equal(u?.title, 'Echidna spines');
      assert.equal(u?.norm_title, 'echidna spines');
      assert.equal(u?.updated_at, T0 + 5000);
      assert.deepEqual(await k.e.search(k.db, 'wombat burrows claws animals'), []);
      assert.deepEqual((await k.e.search(k.db, 'echidna')).map((h) => h.entry.id), [a.id]);
      assert.deepEqual((await k.e.search(k.db, 'monotremes')).map((h) => h.entry.id), [a.id]);

      const c = await k.e.update(k.db, a.id, { merged_count: 3, sources: ['j-1', 'j-2'] });
      assert.deepEqual([c?.merged_count, c?.sources, c?.title], [3, ['j-1', 'j-2'], 'Echidna spines']);
      assert.deepEqual((await k.e.search(k.db, 'spines')).map((h) => h.entry.id), [a.id]);
      assert.equal(await k.e.update(k.db, 9999, { title: 'nope' }), undefined);

      assert.equal(await k.e.delete(k.db, a.id), true);
      assert.equal(await k.e.delete(k.db, a.id), false);
      assert.equal(await k.e.get(k.db, a.id), undefined);
      assert.deepEqual(await k.e.search(k.db, 'echidna spines monotremes'), []);
      const d = await k.e.insert(k.db, { title: 'New', content: 'A new entry after the delete.' });
      assert.ok(d.id > b.id, 'ids are never reused');
      clock = T0;
    });

    test('list: newest first, by tag, paged by id; count, byNormTitle (the oldest), nearbyIds', async () => {
      const k = kb('project', '/work/lists');
      const made: number[] = [];
      for (let i = 0; i < 7; i++) made.push((await k.e.insert(k.db, { title: i % 2 ? 'Same title' : `Entry ${i}`, content: `Content number ${i}.`, tags: i % 3 === 0 ? ['ci', 'x'] : ['y'] })).id);
      assert.deepEqual((await k.e.list(k.db)).map((e) => e.id), [...made].reverse());
      assert.deepEqual((await k.e.list(k.db, { tag: 'ci' })).map((e) => e.id), [made[6], made[3], made[0]]);
      assert.deepEqual((await k.e.list(k.db, { tag: 'c' })).map((e) => e.id), [], 'a tag is matched whole');
      assert.deepEqual((await k.e.list(k.db, { limit: 2, beforeId: made[4] })).map((e) => e.id), [made[3], made[2]]);
      assert.equal(await k.e.count(k.db), 7);
      assert.equal((await k.e.byNormTitle(k.db, 'same title'))?.id, made[1]);
      assert.equal(await k.e.byNormTitle(k.db, 'absent'), undefined);
      assert.deepEqual(await k.e.nearbyIds(k.db, made[3]!, 3), [made[3], made[4], made[2]]);
      const e = (await k.e.get(k.db, made[0]!))!;
      assert.deepEqual({ ...e, id: 0 }, {
        id: 0, title: 'Entry 0', content: 'Content number 0.', tags: ['ci', 'x'], scope: 'project', source_job: null, project: null,
        norm_title: 'entry 0', created_at: T0, updated_at: T0, merged_count: 0, sources: [],
      });
    });

    test('per project and global: each knowledge base sees its own entries only, though on PostgreSQL they share one table', async () => {
      const alpha = kb('project', '/work/alpha');
      const beta = kb('project', '/work/beta');
      const global = kb('global');
      const a = await alpha.e.insert(alpha.db, { title: 'Alpha quokka', content: 'Quokkas live on Rottnest island.' });
      const b = await beta.e.insert(beta.db, { title: 'Beta quokka', content: 'Quokkas smile in photos.' });
      const g = await global.e.insert(global.db, { title: 'Global quokka', content: 'Quokkas are marsupials.', project: '/work/alpha' });
      assert.equal(g.scope, 'global');
      assert.equal(g.project, '/work/alpha', 'a global entry keeps the project it came from');
      assert.deepEqual((await alpha.e.search(alpha.db, 'quokka')).map((h) => h.entry.id), [a.id]);
      assert.deepEqual((await beta.e.search(beta.db, 'quokka')).map((h) => h.entry.id), [b.id]);
      assert.deepEqual((await global.e.search(global.db, 'quokka')).map((h) => h.entry.id), [g.id]);
      assert.deepEqual((await beta.e.list(beta.db)).map((e) => e.id), [b.id]);
      assert.equal(await beta.e.count(beta.db), 1);
      assert.equal(await alpha.e.byNormTitle(alpha.db, 'beta quokka'), undefined);
      if (dialect === 'postgres') {
        // One table, one id sequence: another knowledge base's id is not found here, nor changed or deleted.
        assert.equal(await beta.e.get(beta.db, a.id), undefined);
        assert.equal(await beta.e.update(beta.db, a.id, { title: 'hijacked' }), undefined);
        assert.equal(await global.e.delete(global.db, a.id), false);
        assert.equal((await alpha.e.get(alpha.db, a.id))?.title, 'Alpha quokka');
        assert.deepEqual(await beta.e.nearbyIds(beta.db, a.id), [b.id]);
      }
    });

    test('modify holds the entry: ten concurrent read-modify-writes lose none', async () => {
      const k = kb('project', '/work/race');
      const e = await k.e.insert(k.db, { title: 'Counter', content: 'Merged into many times.' });
      await Promise.all(Array.from({ length: 10 }, (_, i) => k.e.modify(k.db, e.id, (cur) => ({ merged_count: cur.merged_count + 1, sources: [...cur.sources, `j-${i}`] }))));
      const after = (await k.e.get(k.db, e.id))!;
      assert.equal(after.merged_count, 10);
      assert.equal(after.sources.length, 10);
      assert.equal(await k.e.modify(k.db, 9999, () => ({ merged_count: 1 })), undefined);
    });

    test('two processes merging into one entry at once, 25 times each: every merge counts, none fails', async (t) => {
      const k = kb('project', '/work/procs');
      const e = await k.e.insert(k.db, { title: 'Shared', content: 'Merged into by two processes.' });
      const pair = [await startRacer(), await startRacer()];
      t.after(() => all(pair, { op: 'close' }).catch(() => pair.forEach((r) => r.kill())));
      const where = dialect === 'sqlite' ? { file: join(home, '_work_procs', 'kb.db') } : { url, project: '/work/procs' };
      await all(pair, { op: 'kbOpen', ...where });
      assert.deepEqual(await all(pair, { op: 'kbMerge', id: e.id, times: 25 }), [{ ok: true }, { ok: true }]);
      const after = (await k.e.get(k.db, e.id))!;
      assert.equal(after.merged_count, 50);
      assert.deepEqual(new Set(after.sources.map((x) => after.sources.filter((y) => y === x).length)), new Set([25]));
    });
  });
}
