// search_output's service on both databases (issue 29, step 8): what the service decides —
// which jobs a caller may search (an agent its subtree, read by a recursive query; job_id and
// label intersected with it; an unknown job named as such to the lead, a job outside the subtree
// refused to an agent without saying whether it exists), `since`, and what the indexer writes in
// one transaction per flush (rows and the attempt's state together, the state never ahead of
// the rows) — on SQLite and on PostgreSQL. The index's own statements are compared in
// sql-search.test.ts.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { transcriptIndex } from '../../src/search/sqlIndex.js';
import { TranscriptIndexer } from '../../src/search/indexer.js';
import { TranscriptSearch } from '../../src/search/service.js';
import { ForbiddenError, NotFoundError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { freshDatabase } from '../helpers/postgres.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const NOW = Date.parse('2026-11-29T03:00:00Z');
const text = (t: string): string => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: t }] } });
const lead = { role: 'lead' } as const;
const agent = (jobId: string) => ({ role: 'agent', jobId }) as const;
const jobsOf = (r: { results: { job_id: string }[] }): string[] => [...new Set(r.results.map((h) => h.job_id))].sort();

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`search_output's service on ${dialect}`, () => {
    let s: SqlDb;
    let drop = async (): Promise<void> => undefined;
    let idx: TranscriptIndexer;
    let search: TranscriptSearch;
    let now = NOW;

    before(async () => {
      const home = mkdtempSync(join(tmpdir(), 'overseer-search-svc-'));
      dirs.push(home);
      const config = { home, databaseUrl: undefined as string | undefined };
      if (dialect === 'postgres') {
        const fresh = await freshDatabase();
        config.databaseUrl = fresh.url;
        drop = fresh.drop;
      }
      s = await openSql(config);
      const jobs: [string, string | null, string[]][] = [
        ['j-root', null, ['api']], ['j-kid', 'j-root', ['api', 'ui']], ['j-grandkid', 'j-kid', []], ['j-other', null, ['ui']], ['j-50%', null, ['a"b']],
      ];
      for (const [i, [id, parent, labels]] of jobs.entries()) {
        await sql`INSERT INTO jobs (id, seq, parent_id, depth, title, prompt, provider, cwd, status, labels_json, created_at, updated_at)
          VALUES (${id}, ${i + 1}, ${parent}, 1, ${`Title ${id}`}, 'p', 'claude', '/w', 'running', ${JSON.stringify(labels)}, ${NOW}, ${NOW})`.execute(s.db);
      }
      const index = transcriptIndex(s.dialect);
      idx = new TranscriptIndexer(s.db, index, { now: () => now, log: silentLogger });
      search = new TranscriptSearch(s.db, index, { now: () => now, countBudgetMs: 60_000 });
      for (const [id] of jobs) idx.line(id, 1, text(`platypus said by ${id}`));
      idx.line('j-other', 1, text('the secret of j-other: pangolin'));
      await idx.flush();
    });
    after(async () => {
      await idx.close();
      await s.close();
      await drop();
    });

    test('a flush writes the rows and the attempts\' line counts in one transaction', async () => {
      const states = await s.db.selectFrom('transcript_index_state').select(['job_id', 'lines', 'done']).orderBy('job_id').execute();
      assert.deepEqual(states.map((r) => [r.job_id, r.lines, r.done]), [['j-50%', 1, 0], ['j-grandkid', 1, 0], ['j-kid', 1, 0], ['j-other', 2, 0], ['j-root', 1, 0]]);
      now = NOW + 5000;
      idx.line('j-kid', 1, text('a late word: wombat'));
      await idx.attemptEnded('j-kid', 1);
      const kid = await s.db.selectFrom('transcript_index_state').select(['lines', 'done']).where('job_id', '=', 'j-kid').executeTakeFirstOrThrow();
      assert.deepEqual([kid.lines, kid.done], [2, 1]);
      assert.deepEqual(jobsOf(await search.search({ query: 'wombat' }, lead)), ['j-kid']);
      // since: only what was said in the last 3 seconds.
      assert.deepEqual((await search.search({ query: 'platypus OR wombat', since: '3s' }, lead)).results.map((h) => h.snippet), ['a late word: «wombat»']);
    });

    test('the lead: job_id and label filter; an unknown job is not found, with ids that exist', async () => {
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus' }, lead)), ['j-50%', 'j-grandkid', 'j-kid', 'j-other', 'j-root']);
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus', job_id: 'j-kid' }, lead)), ['j-kid']);
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'ui' }, lead)), ['j-kid', 'j-other']);
      // A label with LIKE's and JSON's special characters is matched exactly, not as a pattern.
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'a"b' }, lead)), ['j-50%']);
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'a%' }, lead)), []);
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'api', job_id: 'j-other' }, lead)), []);
      await assert.rejects(search.search({ query: 'platypus', job_id: 'j-nothere' }, lead),
        (e: unknown) => e instanceof NotFoundError && /No job "j-nothere"\. Known job ids: .*j-50%/.test(e.message));
    });

    test('an agent searches its subtree only, and learns nothing about jobs outside it', async () => {
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus' }, agent('j-kid'))), ['j-grandkid', 'j-kid']);
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus' }, agent('j-root'))), ['j-grandkid', 'j-kid', 'j-root']);
      assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'ui' }, agent('j-kid'))), ['j-kid']);
      assert.equal((await search.search({ query: 'pangolin' }, agent('j-root'))).total_hint, 0);
      for (const job_id of ['j-other', 'j-nothere']) {
        await assert.rejects(search.search({ query: 'pangolin', job_id }, agent('j-kid')), (e: unknown) => {
          assert.ok(e instanceof ForbiddenError);
          assert.match(e.message, /not in your subtree/);
          assert.doesNotMatch(e.message, /pangolin|secret|exist/);
          return true;
        });
      }
    });
  });
}
