// The transcript index over the Kysely layer (src/search/sqlIndex.ts) on SQLite (FTS5) and
// PostgreSQL (tsvector + GIN): the same rows are found, in the same order (newest first), for
// words, phrases, prefixes, OR and exclusions; paths and accented words split alike on both;
// snippets mark the match; job and time filters, the capped count, ids of one millisecond, the
// index state and the attempts left to index agree. What is compared is what is found and its
// order, never a score.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { transcriptIndex, MAX_TOKEN_JOBS, type TranscriptIndex, type TranscriptQuery } from '../../src/search/sqlIndex.js';
import { ROWS_PER_MS, type NewRow } from '../../src/search/store.js';
import { InvalidInputError } from '../../src/errors.js';
import { freshDatabase } from '../helpers/postgres.js';

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'overseer-sql-search-'));
  dirs.push(d);
  return d;
};
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const T0 = Date.parse('2026-11-29T00:00:00Z');

/** The corpus: row i is written at T0 + i seconds by job `job`, line i + 1. */
const CORPUS: { job: string; text: string }[] = [
  { job: 'j-a', text: 'connection refused by the server on port 5432' }, // 0
  { job: 'j-a', text: 'the server refused a connection again' }, // 1
  { job: 'j-b', text: 'migration 12 applied to the state database' }, // 2
  { job: 'j-b', text: 'migrations are forward-only, never edited' }, // 3
  { job: 'j-c', text: 'timeout in jest runner after 5000 ms' }, // 4
  { job: 'j-c', text: 'timeout in mocha runner' }, // 5
  { job: 'j-a', text: 'edited src/search/index.ts and src/kb/store.ts' }, // 6
  { job: 'j-b', text: 'sqlite FTS5 index rebuilt' }, // 7
  { job: 'j-c', text: 'postgres full text index with GIN' }, // 8
  { job: 'j-a', text: 'Café au lait: the naïve ÉCOLE test passed' }, // 9
  { job: 'j-b', text: 'see https://example.com/docs/setup.html or mail ops@example.org, version 1.2.3' }, // 10
  { job: 'j-c', text: 'NEAR the end (of it): col:value ^start "quoted"' }, // 11
];

const row = (i: number): NewRow => ({ jobId: CORPUS[i]!.job, attempt: 1, line: i + 1, at: T0 + i * 1000, kind: 'text', text: CORPUS[i]!.text });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`transcript index on ${dialect}`, () => {
    let s: SqlDb;
    let idx: TranscriptIndex;
    let drop = async (): Promise<void> => undefined;

    /** The corpus rows (by number) a query finds, newest first. */
    const find = async (query: string, o: Partial<TranscriptQuery> = {}): Promise<number[]> => {
      const r = await idx.search(s.db, { query, limit: 50, cap: 1000, snippetTokens: 16, ...o });
      return r.hits.map((h) => h.line - 1);
    };

    before(async () => {
      const config = { home: tmp(), databaseUrl: undefined as string | undefined };
      if (dialect === 'postgres') {
        const fresh = await freshDatabase();
        config.databaseUrl = fresh.url;
        drop = fresh.drop;
      }
      s = await openSql(config);
      idx = transcriptIndex(s.dialect);
      assert.equal(idx.dialect, dialect);
      await s.db.transaction().execute(async (trx) => {
        await idx.insert(trx, CORPUS.map((_, i) => row(i)));
        await idx.setState(trx, 'j-a', 1, 10, false);
      });
    });
    after(async () => {
      await s.close();
      await drop();
    });

    test('words are all required, any order, newest first; phrases need their words together', async () => {
      assert.deepEqual(await find('connection refused'), [1, 0]);
      assert.deepEqual(await find('"connection refused"'), [0]);
      assert.deepEqual(await find('refused "by the server"'), [0]);
      assert.deepEqual(await find('"server refused"'), [1]);
      assert.deepEqual(await find('index'), [8, 7, 6]);
    });

    test('prefix*, OR, -exclusion, and a phrase ending in a prefix', async () => {
      assert.deepEqual(await find('migrat*'), [3, 2]);
      assert.deepEqual(await find('sqlite OR postgres'), [8, 7]);
      assert.deepEqual(await find('index sqlite OR postgres'), [8, 7]);
      assert.deepEqual(await find('timeout -jest'), [5]);
      assert.deepEqual(await find('timeout -"jest runner" -mocha'), []);
      assert.deepEqual(await find('"state data"*'), [2]);
      assert.deepEqual(await find('refus* -again'), [0]);
    });

    test('words split alike on both: paths, URLs, addresses and versions are their words; case and accents do not matter', async () => {
      assert.deepEqual(await find('src/search/index.ts'), [6]);
      assert.deepEqual(await find('store'), [6]);
      assert.deepEqual(await find('"kb store ts"'), [6]);
      assert.deepEqual(await find('example docs'), [10]);
      assert.deepEqual(await find('ops'), [10]);
      assert.deepEqual(await find('"1 2 3"'), [10]);
      assert.deepEqual(await find('cafe NAIVE ecole'), [9]);
      assert.deepEqual(await find('café'), [9]);
      assert.deepEqual(await find('forward'), [3]);
      assert.deepEqual(await find('NEAR(the end) col:value ^start'), [11]);
      assert.deepEqual(await find('server AND refused'), []); // AND is the word "and", which neither row has
    });

    test('a snippet holds the match between « and »; the results carry job, attempt, line, time and kind', async () => {
      const r = await idx.search(s.db, { query: '"connection refused"', limit: 5, cap: 100, snippetTokens: 16 });
      assert.equal(r.hits.length, 1);
      const h = r.hits[0]!;
      assert.deepEqual({ job: h.job_id, attempt: h.attempt, line: h.line, at: h.at, kind: h.kind, tool: h.tool, title: h.title },
        { job: 'j-a', attempt: 1, line: 1, at: T0, kind: 'text', tool: null, title: null });
      assert.match(h.snip!, /«connection refused»/);
      const long = await idx.search(s.db, { query: 'migrat*', limit: 5, cap: 100, snippetTokens: 4 });
      assert.deepEqual(long.hits.map((x) => x.snip), ['«migrations» are forward-only…', '«migration» 12 applied to…']);
      const path = await idx.search(s.db, { query: 'index', limit: 5, cap: 100, snippetTokens: 16 });
      assert.match(path.hits.find((x) => x.line === 7)!.snip!, /src\/search\/«index»\.ts/);
    });

    test('job filter by few jobs (FTS5 tokens) and by many (a join), since, and the capped count', async () => {
      assert.deepEqual(await find('timeout OR connection OR index', { jobIds: ['j-a'] }), [6, 1, 0]);
      const many = ['j-a', ...Array.from({ length: MAX_TOKEN_JOBS + 5 }, (_, i) => `j-other-${i}`)];
      assert.deepEqual(await find('timeout OR connection OR index', { jobIds: many }), [6, 1, 0]);
      assert.deepEqual(await find('index', { jobIds: [] }), []);
      assert.deepEqual(await find('index', { minId: (T0 + 7000) * ROWS_PER_MS }), [8, 7]);
      const capped = await idx.search(s.db, { query: 'the OR index OR timeout', limit: 2, cap: 4, snippetTokens: 8 });
      assert.deepEqual(capped.hits.map((h) => h.line - 1), [11, 9]);
      assert.deepEqual(capped.total, { n: 4, complete: false });
      const all = await idx.search(s.db, { query: 'the OR index OR timeout', limit: 2, cap: 100, snippetTokens: 8 });
      assert.deepEqual(all.total, { n: 10, complete: true });
      const few = await idx.search(s.db, { query: 'index', limit: 5, cap: 100, snippetTokens: 8 });
      assert.deepEqual(few.total, { n: 3, complete: true });
    });

    test('a bad query is an InvalidInputError that says how to write it, on both', async () => {
      for (const [q, re] of [['', /no words/], ['"open', /unmatched double quote/], ['a OR', /OR needs a word/], ['-jest', /only excludes/], ['mi*', /at least 3 letters/]] as const) {
        await assert.rejects(idx.search(s.db, { query: q, limit: 5, cap: 10, snippetTokens: 8 }), (e: unknown) => e instanceof InvalidInputError && re.test(e.message), q);
      }
    });

    test('rows of one millisecond get distinct ids in order; a later batch (another writer) finds the next free ids', async () => {
      const at = T0 + 100_000;
      const mk = (i: number, text: string): NewRow => ({ jobId: 'j-ms', attempt: 1, line: i, at, kind: 'text', text });
      await idx.insert(s.db, [mk(1, 'platypus one'), mk(2, 'platypus two'), mk(3, 'platypus three')]);
      // A second index instance knows nothing of the first's ids: its rows collide and move on.
      await transcriptIndex(s.dialect).insert(s.db, [mk(4, 'platypus four'), mk(5, 'platypus five')]);
      const ids = await s.db.selectFrom('transcript_rows').select(['id', 'line']).where('job_id', '=', 'j-ms').orderBy('id').execute();
      assert.deepEqual(ids.map((r) => r.line), [1, 2, 3, 4, 5]);
      assert.deepEqual(ids.map((r) => r.id), [0, 1, 2, 3, 4].map((k) => at * ROWS_PER_MS + k));
      assert.deepEqual((await idx.search(s.db, { query: 'platypus', limit: 10, cap: 10, snippetTokens: 4 })).hits.map((h) => h.line), [5, 4, 3, 2, 1]);
    });

    test('two writers inserting rows of one millisecond at once, each in its own transaction: every row is kept, under its own id', async () => {
      const at = T0 + 300_000;
      const batch = (w: string): NewRow[] => Array.from({ length: 60 }, (_, i) => ({ jobId: `j-${w}`, attempt: 1, line: i + 1, at, kind: 'text', text: `echidna ${w} ${i}` }));
      await Promise.all(['x', 'y'].map((w) => s.db.transaction().execute((trx) => transcriptIndex(s.dialect).insert(trx, batch(w)))));
      const rows = await s.db.selectFrom('transcript_rows').select(['id', 'job_id', 'line']).where('job_id', 'in', ['j-x', 'j-y']).orderBy('id').execute();
      assert.equal(rows.length, 120);
      assert.equal(new Set(rows.map((r) => r.id)).size, 120);
      assert.ok(rows.every((r) => r.id >= at * ROWS_PER_MS && r.id < (at + 1) * ROWS_PER_MS), 'all in their millisecond');
      for (const w of ['j-x', 'j-y']) {
        const lines = rows.filter((r) => r.job_id === w).map((r) => r.line);
        assert.deepEqual(lines, [...lines].sort((a, b) => a - b), `${w}'s rows keep their order`);
      }
      assert.equal((await idx.search(s.db, { query: 'echidna', limit: 1, cap: 1000, snippetTokens: 4 })).total.n, 120);
    });

    test('index state never goes back; attempts left to index are the ended ones without a complete state, newest first', async () => {
      assert.deepEqual(await idx.indexedLines(s.db, 'j-a', 1), { lines: 10, done: false });
      await idx.setState(s.db, 'j-a', 1, 4, false);
      assert.deepEqual(await idx.indexedLines(s.db, 'j-a', 1), { lines: 10, done: false });
      await idx.setState(s.db, 'j-a', 1, 12, true);
      await idx.setState(s.db, 'j-a', 1, 11, false);
      assert.deepEqual(await idx.indexedLines(s.db, 'j-a', 1), { lines: 12, done: true });
      assert.deepEqual(await idx.indexedLines(s.db, 'j-none', 1), { lines: 0, done: false });

      let seq = 0;
      for (const id of ['j-a', 'j-b', 'j-c', 'j-d']) {
        await sql`INSERT INTO jobs (id, seq, depth, title, prompt, provider, cwd, status, created_at, updated_at)
          VALUES (${id}, ${++seq}, 1, ${`Title ${id}`}, 'p', 'claude', '/repo', 'succeeded', ${T0}, ${T0})`.execute(s.db);
      }
      const att = (job: string, n: number, status: string, started: number) => sql`INSERT INTO attempts (job_id, n, kind, status, started_at, transcript)
        VALUES (${job}, ${n}, 'initial', ${status}, ${started}, ${`/t/${job}-${n}.jsonl`})`.execute(s.db);
      await att('j-a', 1, 'succeeded', T0 + 1); // complete
      await att('j-b', 1, 'failed', T0 + 2);
      await att('j-b', 2, 'succeeded', T0 + 4);
      await att('j-c', 1, 'running', T0 + 5); // still running
      await att('j-d', 1, 'succeeded', T0 + 3);
      await idx.setState(s.db, 'j-b', 2, 7, false);
      const p = await idx.pending(s.db, 10);
      assert.deepEqual(p.map((a) => [a.job_id, a.n, a.lines, a.started_at, a.transcript]),
        [['j-b', 2, 7, T0 + 4, '/t/j-b-2.jsonl'], ['j-d', 1, 0, T0 + 3, '/t/j-d-1.jsonl'], ['j-b', 1, 0, T0 + 2, '/t/j-b-1.jsonl']]);
      assert.deepEqual((await idx.pending(s.db, 10, ['j-b:2', 'j-d:1'])).map((a) => `${a.job_id}:${a.n}`), ['j-b:1']);
      assert.deepEqual((await idx.pending(s.db, 1)).map((a) => `${a.job_id}:${a.n}`), ['j-b:2']);
      // The title comes from the job.
      assert.equal((await idx.search(s.db, { query: 'mocha', limit: 1, cap: 1, snippetTokens: 4 })).hits[0]!.title, 'Title j-c');
    });

    test('rows and state written in a transaction that rolls back are not there', async () => {
      await assert.rejects(s.db.transaction().execute(async (trx) => {
        await idx.insert(trx, [{ jobId: 'j-rb', attempt: 1, line: 1, at: T0 + 200_000, kind: 'text', text: 'wombat rolled back' }]);
        await idx.setState(trx, 'j-rb', 1, 1, true);
        throw new Error('roll back');
      }), /roll back/);
      assert.deepEqual(await find('wombat'), []);
      assert.deepEqual(await idx.indexedLines(s.db, 'j-rb', 1), { lines: 0, done: false });
    });
  });
}
