// The `## Memory` section: pure rendering within a budget (whole entries, rank order,
// truncation only when nothing fits), and memorySection over a real two-store knowledge base
// (most relevant first across scopes, '' when nothing matches).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KnowledgeBase } from '../../src/kb/service.js';
import { MEMORY_HEADER, memorySection, memoryTerms, renderMemory, renderMemoryItem, type MemoryItem } from '../../src/kb/memory.js';

const item = (id: string, title: string, content: string, job: string | null = 'j-1'): MemoryItem => ({ entry_id: id, title, content, source_job: job });

describe('renderMemory (pure)', () => {
  const a = item('p-1', 'First', 'a'.repeat(100));
  const b = item('g-2', 'Second', 'b'.repeat(3000), null);
  const c = item('p-3', 'Third', 'c'.repeat(100));

  test('the format: header, then "### title (id, from job j)" and the content', async () => {
    assert.equal(renderMemoryItem(a), `### First (p-1, from job j-1)\n${'a'.repeat(100)}`);
    assert.equal(renderMemoryItem(b).split('\n')[0], '### Second (g-2)');
    const out = renderMemory([a, c], 6000);
    assert.equal(out, `${MEMORY_HEADER}${renderMemoryItem(a)}\n\n${renderMemoryItem(c)}`);
  });

  test('the budget is respected; an entry that does not fit is skipped whole, later smaller ones still come in', async () => {
    const budget = 500;
    const out = renderMemory([a, b, c], budget);
    assert.ok(out.length <= budget, `${out.length} > ${budget}`);
    assert.ok(out.includes('### First') && out.includes('### Third'));
    assert.ok(!out.includes('### Second'), 'the 3,000-character entry is not truncated in');
    assert.ok(!out.includes('…'));
  });

  test('rank order is kept', async () => {
    const out = renderMemory([c, a], 6000);
    assert.ok(out.indexOf('### Third') < out.indexOf('### First'));
  });

  test('when nothing fits whole, the best entry is truncated to the budget', async () => {
    const huge = item('p-9', 'Huge', 'h'.repeat(5000));
    const out = renderMemory([b, huge], 200);
    assert.ok(out.length <= 200, String(out.length));
    assert.ok(!out.includes('### Huge'), 'only the best one is truncated in');
    assert.ok(out.startsWith(`${MEMORY_HEADER}### Second (g-2)\nbbb`));
    assert.ok(out.endsWith('…'));
  });

  test('budgets exactly at the size of the section fit; one less does not', async () => {
    const exact = `${MEMORY_HEADER}${renderMemoryItem(a)}`;
    assert.equal(renderMemory([a], exact.length), exact);
    assert.notEqual(renderMemory([a], exact.length - 1), exact);
  });

  test('no items, or a budget too small for a heading → ""', async () => {
    assert.equal(renderMemory([], 6000), '');
    assert.equal(renderMemory([a], 20), '');
  });
});

describe('memorySection over a knowledge base', () => {
  let dir: string;
  let kb: KnowledgeBase;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kb-mem-'));
    kb = new KnowledgeBase({ source: { dialect: 'sqlite', projectDb: join(dir, 'state', 'kb.db'), globalDb: join(dir, 'xdg', 'overseer', 'kb.db') } });
    const r = await kb.report([
      { title: 'Login tests need a fixed clock', content: 'The login session tests compare expiry times; freeze the clock with the fakeClock helper or they fail near midnight.', scope: 'project', tags: ['tests', 'login'] },
      { title: 'Webpack cache after upgrades', content: 'Delete node_modules/.cache after upgrading webpack, otherwise stale chunks are served in development.', scope: 'project' },
      { title: 'Session cookies and SameSite', content: 'Browsers drop cross-site session cookies without SameSite=None; Secure. Login redirects through the identity provider need it.', scope: 'global' },
      { title: 'Postgres advisory locks', content: 'pg_advisory_lock is held per connection; with a pool, use pg_advisory_xact_lock inside a transaction instead.', scope: 'global' },
    ], { jobId: 'j-mem' });
    assert.deepEqual(r.map((x) => x.status), ['stored', 'stored', 'stored', 'stored']);
  });
  after(async () => {
    await kb.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('terms: stop words stripped, at most 12', async () => {
    const t = memoryTerms('Please fix the flaky login tests in the session module so that the login tests pass, thanks; with many more words here to exceed twelve distinct terms easily today and tomorrow evening');
    assert.ok(t.length <= 12);
    assert.deepEqual(t.slice(0, 2), ['login', 'tests'], 'the repeated words first');
    assert.ok(t.includes('login') && t.includes('tests'));
    assert.ok(!t.includes('the') && !t.includes('please'));
  });

  test('the most relevant entries come first, from both scopes', async () => {
    const out = await memorySection(kb, 'Fix the flaky login session tests: they fail around midnight.');
    assert.ok(out.startsWith(MEMORY_HEADER), out);
    const first = out.indexOf('### Login tests need a fixed clock (p-');
    const cookies = out.indexOf('### Session cookies and SameSite (g-');
    assert.ok(first >= 0, out);
    assert.ok(cookies > first, 'the global entry about sessions/login comes after the better project match');
    assert.ok(out.includes('from job j-mem'));
    assert.ok(!out.includes('Webpack'), 'unrelated entries stay out');
  });

  test('the budget is respected by the real section', async () => {
    const prompt = 'login session tests cookies webpack cache postgres advisory locks';
    const full = await memorySection(kb, prompt, 100_000);
    assert.equal((full.match(/^### /gm) ?? []).length, 4);
    const small = await memorySection(kb, prompt, 400);
    assert.ok(small.length <= 400 && small.length > 0, String(small.length));
    assert.ok((small.match(/^### /gm) ?? []).length < 4);
  });

  test('nothing relevant → ""', async () => {
    assert.equal(await memorySection(kb, 'Translate the README into Portuguese.'), '');
    assert.equal(await memorySection(kb, ''), '');
    assert.equal(await memorySection(kb, '?!?! ... ---'), '');
  });

  test('an unopenable global store does not hide the project entries', async () => {
    // A regular file where the global directory should be: opening fails with ENOTDIR.
    writeFileSync(join(dir, 'not-a-dir'), '');
    const broken = new KnowledgeBase({ source: { dialect: 'sqlite', projectDb: join(dir, 'state', 'kb.db'), globalDb: join(dir, 'not-a-dir', 'overseer', 'kb.db') } });
    await assert.rejects(broken.search('login', 'global'), /cannot open the global knowledge base/);
    try {
      const out = await memorySection(broken, 'login tests clock');
      assert.match(out, /### Login tests need a fixed clock/);
    } finally {
      broken.close();
    }
  });
});
