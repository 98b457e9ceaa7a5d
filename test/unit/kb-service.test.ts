// KnowledgeBase on both databases — over two real SQLite files, and over PostgreSQL's kb_entries
// with the project's key: the triage pipeline (reject, merge by title and by word overlap, scope
// from hint / triage agent / default), entry ids, search across scopes, listing with a cursor
// that crosses from the project to the global store, and deletion. On PostgreSQL the project's
// and the global entries share one id sequence, so a global entry made after two project ones is
// g-3 there (the tests read it from the report). Concurrent reports of one learning are merged,
// not stored twice.
import { describe, test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { KnowledgeBase, entryId, globalKbPath, kbPaths, parseEntryId, type TriageAgent } from '../../src/kb/service.js';
import { NotFoundError, InvalidInputError } from '../../src/errors.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { freshDatabase } from '../helpers/postgres.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
describe(`the knowledge base service on ${dialect}`, () => {
let dir: string;
let kb: KnowledgeBase;
let pg: SqlDb | undefined;
let drop = async (): Promise<void> => undefined;
let url = '';
const open = (triageAgent?: TriageAgent): KnowledgeBase => new KnowledgeBase({
  source: pg ? { dialect: 'postgres', db: pg.db, projectKey: '/repo/app' } : { dialect: 'sqlite', projectDb: join(dir, 'state', 'kb.db'), globalDb: join(dir, 'xdg', 'overseer', 'kb.db') },
  projectDir: '/repo/app', triageAgent,
});

before(async () => {
  if (dialect !== 'postgres') return;
  const fresh = await freshDatabase();
  drop = fresh.drop;
  url = fresh.url;
  pg = await openSql({ home: mkdtempSync(join(tmpdir(), 'kb-svc-pg-')), databaseUrl: fresh.url });
});
after(async () => {
  await pg?.close();
  await drop();
});
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kb-svc-'));
  if (pg) await sql`TRUNCATE kb_entries RESTART IDENTITY`.execute(pg.db);
  kb = open();
});
afterEach(async () => {
  await kb.close();
  rmSync(dir, { recursive: true, force: true });
});

const L1 = { title: 'Integration tests need TZ=UTC', content: 'The date formatting test fails on CI machines unless the integration tests run with TZ=UTC set.' };

describe('paths and ids', () => {
  test('global path: XDG_DATA_HOME, else ~/.local/share', async () => {
    assert.equal(globalKbPath({ XDG_DATA_HOME: '/x/data', HOME: '/home/a' }), '/x/data/overseer/kb.db');
    assert.equal(globalKbPath({ HOME: '/home/a' }), '/home/a/.local/share/overseer/kb.db');
    assert.deepEqual(kbPaths('/p/.overseer', { HOME: '/h' }), { projectDb: '/p/.overseer/kb.db', globalDb: '/h/.local/share/overseer/kb.db' });
  });

  test('entry ids round-trip; junk does not parse', async () => {
    assert.equal(entryId('project', 12), 'p-12');
    assert.equal(entryId('global', 3), 'g-3');
    assert.deepEqual(parseEntryId('g-3'), { scope: 'global', id: 3 });
    for (const bad of ['p-0', 'x-1', 'p-', 'p-1a', '12', 'p--1']) assert.equal(parseEntryId(bad), undefined, bad);
  });

  // PostgreSQL has no files: this one is SQLite's.
  if (dialect === 'sqlite') test('the global file is created only when first used', async () => {
    await kb.report([{ ...L1, scope: 'project' }]);
    assert.equal(existsSync(join(dir, 'xdg', 'overseer', 'kb.db')), false);
    await kb.search('date', 'all');
    assert.equal(existsSync(join(dir, 'xdg', 'overseer', 'kb.db')), true);
  });
});

describe('report: the triage pipeline', () => {
  test('stored with a p- id by default, source job recorded', async () => {
    const [r] = await kb.report([L1], { jobId: 'j-1' });
    assert.deepEqual(r, { status: 'stored', entry_id: 'p-1', scope: 'project', title: L1.title });
    const e = (await kb.get('p-1'))!;
    assert.equal(e.source_job, 'j-1');
    assert.equal(e.project, null);
  });

  test('a global entry records the project it came from', async () => {
    const [r] = await kb.report([{ ...L1, scope: 'global' }], { jobId: 'j-1' });
    assert.equal(r!.status === 'stored' && r!.entry_id, 'g-1');
    assert.equal((await kb.get('g-1'))!.project, '/repo/app');
  });

  test('same normalised title → merged into the existing entry: new sentences appended, tags united, count bumped, job recorded', async () => {
    await kb.report([{ ...L1, tags: ['ci'] }], { jobId: 'j-1' });
    const [r] = await kb.report([{ title: '  integration TESTS need tz=utc!! ', content: 'Also LANG=C is required, or the sort order test fails.', tags: ['Tests'] }], { jobId: 'j-2' });
    assert.ok(r && r.status === 'merged', JSON.stringify(r));
    assert.equal(r.entry_id, 'p-1');
    assert.equal(r.into, 'p-1');
    assert.equal(r.new_information, true);
    assert.match(r.why, /same title as p-1/);
    const e = (await kb.get('p-1'))!;
    assert.match(e.content, /unless the integration tests run with TZ=UTC set\.\n\nAlso LANG=C is required/);
    assert.deepEqual(e.tags, ['ci', 'tests']);
    assert.equal(e.merged_count, 1);
    assert.deepEqual(e.sources, ['j-1', 'j-2']);
    assert.equal((await kb.list()).entries.length, 1);
  });

  test('a rephrasing under another title (≥ 60% word overlap) is merged; nothing new → content unchanged', async () => {
    await kb.report([L1], { jobId: 'j-1' });
    const before = (await kb.get('p-1'))!.content;
    const [r] = await kb.report([{ title: 'Date test fails on CI', content: 'Unless TZ=UTC is set, the date formatting test fails on CI machines when integration tests run.' }], { jobId: 'j-3' });
    assert.ok(r && r.status === 'merged', JSON.stringify(r));
    assert.equal(r.into, 'p-1');
    assert.match(r.why, /% word overlap with p-1/);
    assert.equal(r.new_information, false);
    assert.equal((await kb.get('p-1'))!.content, before);
  });

  test('a different learning on a related topic is stored separately', async () => {
    await kb.report([L1]);
    const [r] = await kb.report([{ title: 'CI caches node_modules', content: 'The CI workflow caches node_modules keyed on the lockfile hash; bump the key after changing Node versions.' }]);
    assert.equal(r!.status, 'stored');
  });

  test('two duplicates in one call: the second merges into the first', async () => {
    const r = await kb.report([L1, { ...L1, content: `${L1.content} Set it in the workflow env block.` }], { jobId: 'j-9' });
    assert.deepEqual(r.map((x) => x.status), ['stored', 'merged']);
  });

  test('rejections: too short, empty title, secret — and nothing is stored for them', async () => {
    const r = await kb.report([
      { title: 'Short', content: 'too short' },
      { title: '   ', content: 'a long enough content but no title' },
      { title: 'Deploy token', content: `Deploy with token: ${'ghp_'}${'a1B2c3D4e5'.repeat(4)} from the vault.` },
      L1,
    ]);
    assert.deepEqual(r.map((x) => x.status), ['rejected', 'rejected', 'rejected', 'stored']);
    assert.ok(r[0]!.status === 'rejected' && /content is too short/.test(r[0]!.reason));
    assert.ok(r[2]!.status === 'rejected' && /secret: a GitHub token/.test(r[2]!.reason));
    assert.ok(r[2]!.status === 'rejected' && !r[2]!.reason.includes('a1B2c3D4e5'));
    assert.equal((await kb.list()).entries.length, 1);
  });

  test('the scope hint restricts duplicate lookup to that scope', async () => {
    await kb.report([{ ...L1, scope: 'global' }]);
    const [r] = await kb.report([{ ...L1, scope: 'project' }]);
    assert.ok(r!.status === 'stored' && r!.entry_id.startsWith('p-'), JSON.stringify(r));
    const [r2] = await kb.report([L1]);
    assert.ok(r2!.status === 'merged' && r2!.into === r!.entry_id, 'without a hint, the project entry is found first');
  });

  test('triage agent: decides the scope when there is no hint; discard rejects; failures fall back to project', async () => {
    await kb.close();
    const seen: string[] = [];
    const verdicts = ['global', 'discard', undefined, 'throw'] as const;
    let i = 0;
    kb = open(async (l) => {
      seen.push(l.title);
      const v = verdicts[i++];
      if (v === 'throw') throw new Error('boom');
      return v;
    });
    const r = await kb.report([
      { title: 'Node 20 fetch has no proxy support', content: 'Node 20 global fetch ignores HTTP_PROXY; use undici ProxyAgent explicitly.' },
      { title: 'Finished the refactor today', content: 'I finished refactoring the user service and all tests pass now.' },
      { title: 'Scripts live under tools', content: 'Repository helper scripts live in tools/scripts, not in bin/, and run with tsx.' },
      { title: 'Vite dev server port', content: 'The dev server uses port 5174 here because 5173 is taken by the docs site.' },
      { title: 'Hinted entries skip triage', content: 'A learning with an explicit scope hint never reaches the triage agent.', scope: 'project' },
    ]);
    assert.deepEqual(r.map((x) => x.status), ['stored', 'rejected', 'stored', 'stored', 'stored']);
    assert.ok(r[0]!.status === 'stored' && r[0]!.scope === 'global' && r[0]!.entry_id === 'g-1');
    assert.ok(r[1]!.status === 'rejected' && r[1]!.reason === 'triage: not worth keeping');
    assert.ok(r[2]!.status === 'stored' && r[2]!.scope === 'project');
    assert.ok(r[3]!.status === 'stored' && r[3]!.scope === 'project');
    assert.equal(seen.length, 4, 'the hinted learning did not go to the agent');
  });

  test('duplicates are merged before asking the triage agent', async () => {
    await kb.report([L1]);
    await kb.close();
    let calls = 0;
    kb = open(async () => { calls++; return 'global'; });
    const [r] = await kb.report([L1]);
    assert.equal(r!.status, 'merged');
    assert.equal(calls, 0);
  });
});

describe('reports at the same time', () => {
  test('one learning reported three times at once by this hub is stored once and merged twice', async () => {
    const rs = (await Promise.all([kb.report([L1], { jobId: 'j-1' }), kb.report([L1], { jobId: 'j-2' }), kb.report([L1], { jobId: 'j-3' })])).flat();
    assert.deepEqual(rs.map((r) => r.status).sort(), ['merged', 'merged', 'stored']);
    const [e] = (await kb.list()).entries;
    assert.equal((await kb.list()).entries.length, 1);
    assert.equal(e!.merged_count, 2);
    assert.deepEqual(new Set((await kb.get(e!.entry_id))!.sources), new Set(['j-1', 'j-2', 'j-3']));
  });

  // Two hubs share one knowledge base only on PostgreSQL (on SQLite a state directory has one hub).
  if (dialect === 'postgres') test('two hubs reporting one learning at once: stored once, merged by the other (advisory lock)', async () => {
    // Each hub with its own connections, as hubs are.
    const conns = await Promise.all(Array.from({ length: 4 }, () => openSql({ home: dir, databaseUrl: url })));
    const hubs = conns.map((c) => new KnowledgeBase({ source: { dialect: 'postgres', db: c.db, projectKey: '/repo/app' }, projectDir: '/repo/app' }));
    try {
      const rs = (await Promise.all(hubs.map((h, i) => h.report([L1], { jobId: `j-${i}` })))).flat();
      assert.deepEqual(rs.map((r) => r.status).sort(), ['merged', 'merged', 'merged', 'stored']);
      const { entries } = await kb.list();
      assert.equal(entries.length, 1);
      assert.equal(entries[0]!.merged_count, 3);
    } finally {
      for (const h of hubs) await h.close();
      for (const c of conns) await c.close();
    }
  });
});

describe('search, list, delete', () => {
  let g = 'g-1';
  beforeEach(async () => {
    const r = await kb.report([
      { title: 'Flaky login test', content: 'The login test depends on the clock; freeze it with fakeClock.', scope: 'project', tags: ['tests'] },
      { title: 'Release checklist', content: 'Run the whole suite before tagging; a flaky login is a blocker for the release.', scope: 'project' },
      { title: 'Login cookies need SameSite', content: 'Cross-site login cookies need SameSite=None and Secure in every browser.', scope: 'global', tags: ['web'] },
    ], { jobId: 'j-s' });
    g = r[2]!.status === 'stored' ? r[2]!.entry_id : '?';
  });

  test('search all: both scopes, best first, tool-shaped hits', async () => {
    const hits = await kb.search('flaky login', 'all');
    assert.equal(hits[0]!.entry_id, 'p-1');
    assert.deepEqual(new Set(hits.map((h) => h.scope)), new Set(['project', 'global']));
    for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1]!.score >= hits[i]!.score);
    assert.deepEqual(Object.keys(hits[0]!).sort(), ['entry_id', 'scope', 'score', 'snippet', 'source_job', 'tags', 'title']);
    assert.equal(hits[0]!.source_job, 'j-s');
  });

  test('search one scope; limit', async () => {
    assert.deepEqual((await kb.search('login', 'global')).map((h) => h.entry_id), [g]);
    assert.ok((await kb.search('login', 'project')).every((h) => h.scope === 'project'));
    assert.equal((await kb.search('login', 'all', 1)).length, 1);
  });

  test('list pages across both stores with next_cursor', async () => {
    const p1 = await kb.list({ limit: 2 });
    assert.deepEqual(p1.entries.map((e) => e.entry_id), ['p-2', 'p-1']);
    assert.equal(p1.next_cursor, 'p-1');
    const p2 = await kb.list({ limit: 2, cursor: p1.next_cursor });
    assert.deepEqual(p2.entries.map((e) => e.entry_id), [g]);
    assert.equal(p2.next_cursor, undefined);
    assert.deepEqual((await kb.list({ scope: 'global' })).entries.map((e) => e.entry_id), [g]);
    assert.deepEqual((await kb.list({ tag: 'tests' })).entries.map((e) => e.entry_id), ['p-1']);
    await assert.rejects(kb.list({ scope: 'project', cursor: g }), InvalidInputError);
  });

  test('delete: gone from search and list; unknown id names nearby ids', async () => {
    assert.deepEqual(await kb.delete('p-1'), { deleted: 'p-1', title: 'Flaky login test' });
    assert.ok(!(await kb.search('fakeClock')).some((h) => h.entry_id === 'p-1'));
    await assert.rejects(kb.delete('p-1'), (err: unknown) => err instanceof NotFoundError && /no project knowledge base entry p-1\. Nearby: p-2/.test(err.message));
    await assert.rejects(kb.delete('g-40'), (err: unknown) => err instanceof NotFoundError && new RegExp(`Nearby: ${g}`).test(err.message));
    await assert.rejects(kb.delete('nope'), InvalidInputError);
  });
});
});
}
