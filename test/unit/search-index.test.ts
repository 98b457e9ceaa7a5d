// The transcript index on a real state database (openDb: every migration, 12 included): live
// lines are buffered and written by a flush (rows threshold, timer, attempt end), results come
// newest first with job/attempt/kind/tool/snippet, filters (job, label, since) and the agent's
// subtree hold — also when many jobs are filtered by a join instead of FTS5 tokens —, results
// stay under the result cap, and reindex catches up on transcript files exactly once.
import { describe, test, before, after, beforeEach, afterEach, mock } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setImmediate } from 'node:timers/promises';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/store/db.js';
import type { NewJob } from '../../src/store/jobs.js';
import { insertAttempt, insertJob } from '../../src/store/sql/jobs.js';
import { TranscriptIndexer } from '../../src/search/indexer.js';
import { TranscriptSearch, MAX_TOKEN_JOBS } from '../../src/search/service.js';
import { ROWS_PER_MS } from '../../src/search/store.js';
import { transcriptIndex } from '../../src/search/sqlIndex.js';
import { sqlOver, type SqlDb } from '../../src/store/sql/open.js';
import { silentLogger } from '../../src/log.js';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../../src/errors.js';
import { MAX_RESULT_CHARS, okResult } from '../../src/tools/result.js';

let dir = '';
let n = 0;
let db: Db;
let layer: SqlDb;
let idx: TranscriptIndexer;
let search: TranscriptSearch;
let now = Date.parse('2026-11-22T12:00:00Z');

before(() => { dir = mkdtempSync(join(tmpdir(), 'overseer-search-')); });
after(() => { rmSync(dir, { recursive: true, force: true }); });
beforeEach(() => {
  db = openDb(join(dir, `state-${++n}.db`));
  layer = sqlOver(db);
  idx = new TranscriptIndexer(layer.db, transcriptIndex('sqlite'), { now: () => now, log: silentLogger, maxRows: 50 });
  // A count that is never cut short by time, so total_hint is exact up to the cap here.
  search = new TranscriptSearch(layer.db, transcriptIndex('sqlite'), { now: () => now, countBudgetMs: 60_000 });
});
afterEach(async () => {
  await idx.close();
  await layer.close();
  db.close();
});

async function job(id: string, over: Partial<NewJob> = {}): Promise<void> {
  await insertJob(layer.db, {
    id, parent_id: null, depth: 1, title: `Title ${id}`, prompt: 'p', provider: 'claude', model: null, cwd: '/repo', work_dir: null, repo_root: null,
    worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
    checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'running', session_id: `s-${id}`, token_hash: null,
    workflow_id: null, phase: null, cycle: null, json_schema: null, ...over,
  }, now);
}

async function attempt(jobId: string, a: number, transcript: string, status = 'succeeded', startedAt = now): Promise<void> {
  await insertAttempt(layer.db, {
    job_id: jobId, n: a, kind: a === 1 ? 'initial' : 'retry', status, started_at: startedAt, ended_at: status === 'running' ? null : startedAt + 1,
    session_id: null, pid: null, exit_code: 0, signal: null, turns: 0, cost_usd: 0, failure_class: null, error: null, diagnosis: null, transcript,
  });
}

const text = (t: string, ts?: string): string => JSON.stringify({ type: 'assistant', message: { id: `m-${t.length}`, content: [{ type: 'text', text: t }] }, ...(ts ? { timestamp: ts } : {}) });
const call = (id: string, name: string, input: unknown): string => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name, input }] } });
const result = (id: string, out: string): string => JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: out }] } });
const lead = { role: 'lead' } as const;
const agent = (jobId: string) => ({ role: 'agent', jobId }) as const;

describe('live indexing', () => {
  test('lines are searchable after a flush, not before; rows carry job, attempt, kind, tool and a snippet', async () => {
    await job('j-a');
    idx.line('j-a', 1, '{"type":"system","subtype":"init","session_id":"s"}');
    idx.line('j-a', 1, text('The parser chokes on quokka tokens.'));
    idx.line('j-a', 1, call('t1', 'Bash', { command: 'npm test -- --grep wallaby' }));
    idx.line('j-a', 1, result('t1', '3 failing: expected numbat to equal wombat'));
    assert.equal((await search.search({ query: 'quokka' }, lead)).results.length, 0, 'buffered, not written yet');
    await idx.flush();
    const q = (await search.search({ query: 'quokka' }, lead)).results;
    assert.equal(q.length, 1);
    assert.equal(q[0]!.job_id, 'j-a');
    assert.equal(q[0]!.title, 'Title j-a');
    assert.equal(q[0]!.attempt, 1);
    assert.equal(q[0]!.kind, 'text');
    assert.equal(q[0]!.at, new Date(now).toISOString());
    assert.match(q[0]!.snippet, /«quokka»/);
    const c = (await search.search({ query: 'wallaby' }, lead)).results;
    assert.deepEqual([c[0]!.kind, c[0]!.tool], ['tool_call', 'Bash']);
    const r = (await search.search({ query: 'numbat wombat' }, lead)).results;
    assert.deepEqual([r[0]!.kind, r[0]!.tool], ['tool_result', 'Bash']);
    assert.deepEqual(db.prepare('SELECT lines, done FROM transcript_index_state WHERE job_id = ?').get('j-a'), { lines: 4, done: 0 });
  });

  test('the buffer is written right after the line that fills it (not inside that call), and by the timer', async () => {
    await job('j-a');
    for (let i = 0; i < 49; i++) idx.line('j-a', 1, text(`filler line ${i}`));
    assert.equal(idx.buffered, 49);
    idx.line('j-a', 1, text('the fiftieth row mentions capybara'));
    assert.equal(idx.buffered, 50, 'the supervisor\'s call returns before the write');
    await setImmediate(); // the flush was queued before this: it has run
    assert.equal(idx.buffered, 0);
    assert.equal((await search.search({ query: 'capybara' }, lead)).results.length, 1);

    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      idx.line('j-a', 1, text('a lone row about axolotl'));
      assert.equal(idx.buffered, 1);
      mock.timers.tick(99);
      assert.equal(idx.buffered, 1);
      mock.timers.tick(1);
      assert.equal(idx.buffered, 0);
      assert.equal((await search.search({ query: 'axolotl' }, lead)).results.length, 1);
    } finally {
      mock.timers.reset();
    }
  });

  test('attempt end writes the rest and marks the transcript complete', async () => {
    await job('j-a');
    idx.line('j-a', 2, text('last words about okapi'));
    await idx.attemptEnded('j-a', 2);
    assert.equal((await search.search({ query: 'okapi' }, lead)).results[0]!.attempt, 2);
    assert.deepEqual(db.prepare('SELECT lines, done FROM transcript_index_state WHERE job_id = ? AND attempt = 2').get('j-a'), { lines: 1, done: 1 });
  });

  test('newest first; since; many rows in one millisecond get distinct, ordered ids', async () => {
    await job('j-a');
    const t0 = now;
    for (let i = 0; i < 1500; i++) idx.line('j-a', 1, text(`lemur number ${i}`));
    now = t0 + 3_600_000;
    idx.line('j-a', 1, text('a later lemur'));
    await idx.flush();
    const all = await search.search({ query: 'lemur', limit: 3 }, lead);
    assert.match(all.results[0]!.snippet, /a later «lemur»/);
    assert.match(all.results[1]!.snippet, /number 1499/);
    assert.equal(all.total_hint, 1000, 'counted up to the cap');
    assert.equal(all.total_capped, true);
    const recent = await search.search({ query: 'lemur', since: '30m' }, lead);
    assert.equal(recent.results.length, 1);
    assert.equal(recent.total_hint, 1);
    assert.equal(recent.total_capped, undefined);
    const older = await search.search({ query: 'lemur', since: '2h', limit: 3 }, lead);
    assert.deepEqual([older.results.length, older.total_hint, older.total_capped], [3, 1000, true]);
    assert.deepEqual((await search.search({ query: 'lemur', since: new Date(now + 30_000).toISOString() }, lead)).results, [], 'nothing that recent');
    const hurried = await new TranscriptSearch(layer.db, transcriptIndex('sqlite'), { now: () => now, countBudgetMs: 0 }).search({ query: 'lemur', limit: 3 }, lead);
    assert.ok(hurried.total_hint < 1000 && hurried.total_capped === true, `${hurried.total_hint}: counting stops at the time budget`);
    assert.equal(hurried.results.length, 3, 'the budget never cuts the results');
    assert.ok(hurried.total_hint >= 3);
    const ids = db.prepare('SELECT id FROM transcript_rows ORDER BY line').all() as { id: number }[];
    assert.equal(new Set(ids.map((r) => r.id)).size, 1501);
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i]!.id > ids[i - 1]!.id);
    assert.ok(ids[1024]!.id >= (t0 + 1) * ROWS_PER_MS, 'the 1025th row of a millisecond spills into the next');
    now = t0;
  });
});

test('a writer that finds its millisecond taken (rows written by another, e.g. a catch-up) takes the next free id', async () => {
  await job('j-a');
  const first = transcriptIndex('sqlite');
  const second = transcriptIndex('sqlite');
  const row = (text: string) => ({ jobId: 'j-a', attempt: 1, line: 1, at: now, kind: 'text' as const, text });
  await first.insert(layer.db, [row('one')]);
  await first.insert(layer.db, [row('two')]);
  await second.insert(layer.db, [row('three')]);
  await first.insert(layer.db, [row('four')]);
  const ids = (db.prepare('SELECT id, body FROM transcript_rows ORDER BY id').all() as { id: number; body: string }[]);
  assert.deepEqual(ids.map((r) => [r.id - now * ROWS_PER_MS, r.body]), [[0, 'one'], [1, 'two'], [2, 'three'], [3, 'four']]);
});

describe('filters and who sees what', () => {
  beforeEach(async () => {
    await job('j-root', { labels_json: '["api"]' });
    await job('j-kid', { parent_id: 'j-root', depth: 2, labels_json: '["api","ui"]' });
    await job('j-grandkid', { parent_id: 'j-kid', depth: 3 });
    await job('j-other', { labels_json: '["ui"]' });
    for (const id of ['j-root', 'j-kid', 'j-grandkid', 'j-other']) idx.line(id, 1, text(`platypus said by ${id}`));
    idx.line('j-other', 1, text('the secret of j-other: pangolin'));
    await idx.flush();
  });
  const jobsOf = (r: { results: { job_id: string }[] }): string[] => r.results.map((h) => h.job_id).sort();

  test('job_id and label', async () => {
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus' }, lead)), ['j-grandkid', 'j-kid', 'j-other', 'j-root']);
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus', job_id: 'j-kid' }, lead)), ['j-kid']);
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'ui' }, lead)), ['j-kid', 'j-other']);
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'api', job_id: 'j-other' }, lead)), []);
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'nope' }, lead)), []);
    await assert.rejects(search.search({ query: 'platypus', job_id: 'j-nothere' }, lead), (e: unknown) => e instanceof NotFoundError && /No job "j-nothere"/.test(e.message));
  });

  test('an agent sees itself and its descendants only; outside its subtree nothing, and nothing about it', async () => {
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus' }, agent('j-kid'))), ['j-grandkid', 'j-kid']);
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus', label: 'ui' }, agent('j-kid'))), ['j-kid']);
    const none = await search.search({ query: 'pangolin' }, agent('j-root'));
    assert.deepEqual(none, { results: [], total_hint: 0, took_ms: none.took_ms });
    for (const job_id of ['j-other', 'j-nothere']) {
      await assert.rejects(search.search({ query: 'pangolin', job_id }, agent('j-kid')), (e: unknown) => {
        assert.ok(e instanceof ForbiddenError);
        assert.match(e.message, /not in your subtree/);
        assert.doesNotMatch(e.message, /pangolin|secret|exist/);
        return true;
      });
    }
    assert.deepEqual(jobsOf(await search.search({ query: 'platypus', job_id: 'j-grandkid' }, agent('j-root'))), ['j-grandkid']);
  });

  test(`more than ${MAX_TOKEN_JOBS} jobs are filtered by a join, with the same answers`, async () => {
    const many = Array.from({ length: MAX_TOKEN_JOBS + 6 }, (_, i) => `j-m${i}`);
    for (const id of many) await job(id, { labels_json: '["swarm"]' });
    for (const id of many) idx.line(id, 1, text(`platypus from the swarm ${id}`));
    await idx.flush();
    const r = await search.search({ query: 'platypus', label: 'swarm', limit: 100 }, lead);
    assert.deepEqual(jobsOf(r), [...many].sort());
    assert.equal(r.total_hint, many.length);
    // As an agent whose subtree is that large: its own, never j-other's.
    for (const id of many) db.prepare('UPDATE jobs SET parent_id = ? WHERE id = ?').run('j-kid', id);
    const mine = await search.search({ query: 'platypus', limit: 100 }, agent('j-kid'));
    assert.equal(mine.results.length, many.length + 2);
    assert.ok(!jobsOf(mine).includes('j-other') && !jobsOf(mine).includes('j-root'));
    assert.equal((await search.search({ query: 'pangolin' }, agent('j-kid'))).results.length, 0);
  });

  test('a bad query or since is an InvalidInputError naming the fix, never a SQL error', async () => {
    for (const [o, re] of [
      [{ query: '"unbalanced' }, /unmatched double quote/],
      [{ query: '' }, /no words/],
      [{ query: 'x', since: 'last tuesday' }, /not a time/],
      [{ query: 'x', limit: 0 }, /limit 0 is not valid/],
      [{ query: 'x', limit: 101 }, /from 1 to 100/],
    ] as const) {
      await assert.rejects(search.search(o, lead), (e: unknown) => e instanceof InvalidInputError && re.test(e.message), JSON.stringify(o));
    }
  });
});

test('results stay under the tool result cap; what does not fit is counted in omitted', async () => {
  await job('j-big');
  const long = Array.from({ length: 300 }, (_, i) => `aardvark${i % 3 === 0 ? ' aardvark' : ''} filler${i}`).join(' ');
  for (let i = 0; i < 120; i++) idx.line('j-big', 1, text(`${long} row${i}`));
  await idx.flush();
  const r = await search.search({ query: 'aardvark', limit: 100 }, lead);
  const text1 = (okResult(r).content[0] as { text: string }).text;
  assert.ok(text1.length < MAX_RESULT_CHARS, `${text1.length} characters`);
  assert.ok(r.results.length >= 20, `${r.results.length} results`);
  assert.equal(r.results.length + (r.omitted ?? 0), 100);
  assert.ok((r.omitted ?? 0) > 0);
  for (const h of r.results) assert.match(h.snippet, /«aardvark»/);
  assert.ok(!('truncated' in (okResult(r).structuredContent ?? {})), 'fitted by the service, not cut by okResult');
});

describe('reindex', () => {
  function transcript(name: string, lines: string[]): string {
    const p = join(dir, `t-${n}-${name}.jsonl`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(p, `${lines.join('\n')}\n`);
    return p;
  }

  test('ended attempts without a complete index are read from their files once; running ones are left alone', async () => {
    await job('j-old');
    await job('j-run');
    await attempt('j-old', 1, transcript('old1', [text('first attempt mentions tapir', '2026-11-20T10:00:00Z')]), 'failed', Date.parse('2026-11-20T09:59:00Z'));
    await attempt('j-old', 2, transcript('old2', [call('t9', 'Grep', { pattern: 'tapir' }), result('t9', 'src/zoo.ts: tapir enclosure')]), 'succeeded', Date.parse('2026-11-21T09:00:00Z'));
    await attempt('j-run', 1, transcript('run', [text('running tapir')]), 'running');
    await attempt('j-old', 3, join(dir, 'never-written.jsonl'), 'failed');
    const r1 = await idx.reindex();
    assert.deepEqual(r1, { attempts: 3, rows: 3, lines: 3 });
    const hits = (await search.search({ query: 'tapir' }, lead)).results;
    assert.deepEqual(hits.map((h) => [h.job_id, h.attempt, h.kind, h.tool ?? null]), [
      ['j-old', 2, 'tool_result', 'Grep'],
      ['j-old', 2, 'tool_call', 'Grep'],
      ['j-old', 1, 'text', null],
    ]);
    assert.equal(hits[2]!.at, '2026-11-20T10:00:00.000Z', 'the line\'s own time');
    assert.equal(hits[0]!.at, '2026-11-21T09:00:00.000Z', 'no time in the line: the attempt\'s start');
    assert.deepEqual(await idx.reindex(), { attempts: 0, rows: 0, lines: 0 }, 'idempotent');
  });

  test('a partly indexed transcript (a crash) resumes after its last indexed line, naming tools from before', async () => {
    await job('j-crash');
    const lines = [text('before the crash: gecko'), call('t1', 'Read', { file_path: '/w/iguana.ts' }), result('t1', 'export const iguana = 1;'), text('after: gecko again')];
    await attempt('j-crash', 1, transcript('crash', lines), 'interrupted');
    idx.line('j-crash', 1, lines[0]!);
    idx.line('j-crash', 1, lines[1]!);
    await idx.flush(); // two lines indexed, then the hub "dies" before the rest
    const fresh = new TranscriptIndexer(layer.db, transcriptIndex('sqlite'), { now: () => now, log: silentLogger });
    try {
      assert.deepEqual(await fresh.reindex(), { attempts: 1, rows: 2, lines: 2 });
    } finally {
      await fresh.close();
    }
    assert.equal((await search.search({ query: 'gecko' }, lead)).results.length, 2, 'no duplicates');
    assert.equal((await search.search({ query: 'iguana' }, lead)).results.find((h) => h.kind === 'tool_result')!.tool, 'Read');
    assert.deepEqual(db.prepare('SELECT lines, done FROM transcript_index_state WHERE job_id = ?').get('j-crash'), { lines: 4, done: 1 });
  });
});
