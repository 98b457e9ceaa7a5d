// Integration: the knowledge base tools on a bare MCP server (built exactly as the hub builds
// its tool tables: src/mcp, role filter), driven by real MCP clients linked in memory
// as the lead and as an agent; then the real triage agent: the `claude` CLI against the fake
// Anthropic API, answering through Claude Code's StructuredOutput tool.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { KnowledgeBase, type TriageAgent, type TriageVerdict } from '../../src/kb/service.js';
import { kbTools } from '../../src/tools/kb.js';
import { NativeMcpServer } from '../../src/mcp/server.js';
import { silentLogger } from '../../src/log.js';
import type { Caller } from '../../src/services/context.js';
import { PromptLibrary } from '../../src/prompts/load.js';
import { createTriageAgent, parseTriageOutput, TRIAGE_MODEL } from '../../src/kb/triageAgent.js';
import type { RunUsage } from '../../src/money/usageStore.js';
import { startFakeAnthropic, type FakeAnthropic, type StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv } from '../helpers/claude.js';
import { callAs } from '../helpers/mcp.js';

const PROMPTS = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'prompts');

interface Rig {
  kb: KnowledgeBase;
  lead: Client;
  agent: Client;
  close(): Promise<void>;
}

async function rig(dir: string, triageAgent?: TriageAgent): Promise<Rig> {
  const kb = new KnowledgeBase({ source: { dialect: 'sqlite', projectDb: join(dir, 'state', 'kb.db'), globalDb: join(dir, 'xdg', 'overseer', 'kb.db') }, projectDir: dir, triageAgent });
  const tools = kbTools(kb);
  const clients: Client[] = [];
  const connect = async (caller: Caller): Promise<Client> => {
    const server = new NativeMcpServer({ tools, version: '0.0.0-test', log: silentLogger }).connection(caller);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: 'kb-test', version: '1.0.0' });
    await client.connect(b);
    clients.push(client);
    return client;
  };
  const lead = await connect({ role: 'lead' });
  const agent = await connect({ role: 'agent', jobId: 'j-agent1' });
  return { kb, lead, agent, async close() { for (const c of clients) await c.close(); await kb.close(); } };
}

const CLOCK = { title: 'Login tests need a frozen clock', content: 'The login session tests compare expiry times; freeze the clock with the fakeClock helper or they fail near midnight.', tags: ['tests', 'login'] };

describe('kb tools over MCP', () => {
  let dir: string;
  let r: Rig;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kb-int-'));
    r = await rig(dir);
  });
  after(async () => {
    await r.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the lead sees all four tools; an agent only search_kb and report_learnings', async () => {
    const lead = (await r.lead.listTools()).tools.map((t) => t.name).sort();
    const agent = (await r.agent.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(lead, ['delete_kb_entry', 'list_kb', 'report_learnings', 'search_kb']);
    assert.deepEqual(agent, ['report_learnings', 'search_kb']);
  });

  test('an agent reports: stored; the same again: merged with the id; a secret: rejected with a reason', async () => {
    const first = await callAs(r.agent, 'report_learnings', { learnings: [CLOCK] });
    assert.equal(first.isError, false, first.text);
    assert.deepEqual(first.value.results, [{ status: 'stored', entry_id: 'p-1', scope: 'project', title: CLOCK.title }]);

    const again = await callAs(r.agent, 'report_learnings', { learnings: [{ ...CLOCK, tags: ['flaky'] }] });
    assert.equal(again.value.results[0].status, 'merged');
    assert.equal(again.value.results[0].entry_id, 'p-1');
    assert.equal(again.value.results[0].into, 'p-1');

    const key = `${'AKIA'}${'Q7ZP3XK2M9LW4RTV'}`;
    const secret = await callAs(r.agent, 'report_learnings', { learnings: [{ title: 'S3 upload credentials', content: `Upload the fixtures with access key ${key} from the shared account.` }] });
    const res = secret.value.results[0];
    assert.equal(res.status, 'rejected');
    assert.match(res.reason, /secret: an AWS access key id/);
    assert.ok(!secret.text.includes(key), 'the secret is not echoed');

    const entry = (await r.kb.get('p-1'))!;
    assert.equal(entry.source_job, 'j-agent1', 'the agent\'s job id is the source');
    assert.deepEqual(entry.tags, ['tests', 'login', 'flaky']);
    assert.equal(entry.merged_count, 1);
  });

  test('the lead can report too (no source job)', async () => {
    const res = await callAs(r.lead, 'report_learnings', { learnings: [{ title: 'Release notes live in CHANGES.md', content: 'The release script reads CHANGES.md, not the GitHub releases page; update it before tagging.' }] });
    assert.equal(res.value.results[0].status, 'stored');
    assert.equal((await r.kb.get(res.value.results[0].entry_id))!.source_job, null);
  });

  test('search_kb: scope project / global / all', async () => {
    await callAs(r.agent, 'report_learnings', { learnings: [{ title: 'Session cookies need SameSite=None', content: 'Cross-site login session cookies are dropped by browsers without SameSite=None; Secure.', scope: 'global' }] });
    const all = await callAs(r.agent, 'search_kb', { query: 'login session' });
    assert.equal(all.isError, false, all.text);
    const ids = all.value.entries.map((e: { entry_id: string }) => e.entry_id);
    assert.ok(ids.includes('p-1') && ids.includes('g-1'), ids.join(','));
    const hit = all.value.entries[0];
    assert.deepEqual(Object.keys(hit).sort(), ['entry_id', 'scope', 'score', 'snippet', 'source_job', 'tags', 'title']);
    assert.match(JSON.stringify(all.value.entries), /\*\*session\*\*/i);
    const project = await callAs(r.lead, 'search_kb', { query: 'login session', scope: 'project' });
    assert.ok(project.value.entries.every((e: { scope: string }) => e.scope === 'project'));
    assert.ok(project.value.entries.length > 0);
    const global = await callAs(r.lead, 'search_kb', { query: 'login session', scope: 'global' });
    assert.deepEqual(global.value.entries.map((e: { entry_id: string }) => e.entry_id), ['g-1']);
    const none = await callAs(r.lead, 'search_kb', { query: 'xylophone quartet' });
    assert.deepEqual(none.value.entries, []);
  });

  test('hostile and empty queries: no FTS5 error; a word-less query says how to fix it', async () => {
    for (const q of ['AND OR NOT', 'login*', '(login', 'login" OR "x', 'title:login', 'x'.repeat(2000)]) {
      const res = await callAs(r.agent, 'search_kb', { query: q });
      assert.equal(res.isError, false, `${q.slice(0, 30)}: ${res.text}`);
    }
    // Punctuation only: a clear input error, never an FTS5 syntax error.
    for (const q of ['"', '*', '()']) {
      const res = await callAs(r.agent, 'search_kb', { query: q });
      assert.equal(res.isError, true);
      assert.doesNotMatch(res.text, /fts5|syntax/i);
      assert.match(res.text, /search with words/);
    }
    const empty = await callAs(r.agent, 'search_kb', { query: '?!' });
    assert.equal(empty.isError, true);
    assert.match(empty.text, /^invalid_input: query has no letters or digits/);
    const blank = await callAs(r.agent, 'search_kb', { query: '' });
    assert.equal(blank.isError, true);
    assert.match(blank.text, /query is empty/);
  });

  test('invalid input: clear messages naming the field and the fix; nothing stored', async () => {
    const before = (await r.kb.list()).entries.length;
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['report_learnings', { learnings: [] }, /learnings.*at least one/],
      ['report_learnings', { learnings: Array.from({ length: 6 }, (_, i) => ({ title: `Learning ${i}`, content: 'long enough content for a learning' })) }, /at most 5 learnings/],
      ['report_learnings', { learnings: [{ title: 'No content here' }] }, /content/],
      ['report_learnings', { learnings: [{ title: 'Bad scope value', content: 'long enough content for a learning', scope: 'team' }] }, /scope must be "project".*or "global"/],
      ['report_learnings', { learnings: [{ title: 'x', content: 'y', extra: 1 }] }, /extra|Unrecognized/i],
      ['search_kb', { query: 'x', limit: 500 }, /limit must be at most 50/],
      ['search_kb', { query: 'x', scope: 'everything' }, /scope must be "project", "global" or "all"/],
      ['delete_kb_entry', { entry_id: '12' }, /entry_id looks like "p-12"/],
    ];
    for (const [tool, args, re] of cases) {
      const res = await callAs(r.lead, tool, args);
      assert.equal(res.isError, true, `${tool} ${JSON.stringify(args).slice(0, 60)} should fail`);
      assert.match(res.text, re);
    }
    assert.equal((await r.kb.list()).entries.length, before);
  });

  test('one bad learning among good ones is rejected alone', async () => {
    const res = await callAs(r.agent, 'report_learnings', { learnings: [
      { title: 'Too short', content: 'meh' },
      { title: 'Docker builds need BuildKit', content: 'The Dockerfile uses RUN --mount=type=cache, which only works with DOCKER_BUILDKIT=1.' },
    ] });
    assert.deepEqual(res.value.results.map((x: { status: string }) => x.status), ['rejected', 'stored']);
    assert.match(res.value.results[0].reason, /content is too short/);
  });

  test('list_kb and delete_kb_entry are lead-only', async () => {
    for (const [tool, args] of [['list_kb', {}], ['delete_kb_entry', { entry_id: 'p-1' }]] as const) {
      const res = await callAs(r.agent, tool, args);
      assert.equal(res.isError, true);
      assert.match(res.text, /not found/i);
    }
    assert.ok(await r.kb.get('p-1'), 'the agent did not delete anything');
  });

  test('list_kb pages; delete_kb_entry deletes; an unknown id lists nearby ids', async () => {
    const page = await callAs(r.lead, 'list_kb', { limit: 2 });
    assert.equal(page.value.entries.length, 2);
    assert.ok(page.value.next_cursor);
    const rest = await callAs(r.lead, 'list_kb', { limit: 200, cursor: page.value.next_cursor });
    const all = [...page.value.entries, ...rest.value.entries].map((e: { entry_id: string }) => e.entry_id);
    assert.equal(new Set(all).size, all.length, 'no entry twice');
    assert.ok(all.includes('p-1') && all.includes('g-1'));
    const tagged = await callAs(r.lead, 'list_kb', { tag: 'flaky' });
    assert.deepEqual(tagged.value.entries.map((e: { entry_id: string }) => e.entry_id), ['p-1']);

    const del = await callAs(r.lead, 'delete_kb_entry', { entry_id: 'p-1' });
    assert.deepEqual(del.value, { deleted: 'p-1', title: CLOCK.title });
    const gone = await callAs(r.lead, 'search_kb', { query: 'fakeClock midnight' });
    assert.ok(!gone.value.entries.some((e: { entry_id: string }) => e.entry_id === 'p-1'));
    const unknown = await callAs(r.lead, 'delete_kb_entry', { entry_id: 'p-1' });
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, /^not_found: no project knowledge base entry p-1\. Nearby: p-2/);
  });

  test('results stay under 20,000 characters', async () => {
    for (let i = 0; i < 10; i++) {
      const learnings = Array.from({ length: 5 }, (_, j) => ({
        title: `Bulk learning ${i}-${j} about gizmo widgets`,
        content: `Gizmo widget rule ${i * 5 + j}: ${Array.from({ length: 120 }, (_, k) => `term${(i * 5 + j) * 1000 + k}`).join(' ')}. Gizmo widgets matter.`,
      }));
      const res = await callAs(r.lead, 'report_learnings', { learnings });
      assert.ok(res.value.results.every((x: { status: string }) => x.status === 'stored'), res.text.slice(0, 300));
    }
    const search = await callAs(r.lead, 'search_kb', { query: 'gizmo widgets', limit: 50 });
    assert.equal(search.value.entries.length, 50);
    assert.ok(search.text.length <= 20_000, String(search.text.length));
    const list = await callAs(r.lead, 'list_kb', { limit: 200 });
    assert.ok(list.text.length <= 20_000, String(list.text.length));
  });
});

describe('kb tools with a triage agent (stub)', () => {
  test('no scope hint → the agent decides: global is stored in the global KB, discard is rejected', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kb-int-tri-'));
    const asked: string[] = [];
    const verdicts: Record<string, TriageVerdict> = { 'Node fetch ignores HTTP_PROXY': 'global', 'Done with the refactor': 'discard' };
    const r = await rig(dir, async (l) => { asked.push(l.title); return verdicts[l.title]; });
    try {
      const res = await callAs(r.agent, 'report_learnings', { learnings: [
        { title: 'Node fetch ignores HTTP_PROXY', content: 'Node 20 global fetch ignores HTTP_PROXY; pass an undici ProxyAgent as dispatcher.' },
        { title: 'Done with the refactor', content: 'I finished the refactor of the user service and the tests pass.' },
        { title: 'Seeds run with npm run db:seed', content: 'Local seeds need npm run db:seed after every migration, or the e2e tests see an empty db.', scope: 'project' },
      ] });
      assert.deepEqual(res.value.results.map((x: { status: string }) => x.status), ['stored', 'rejected', 'stored']);
      assert.equal(res.value.results[0].entry_id, 'g-1');
      assert.equal(res.value.results[0].scope, 'global');
      assert.equal(res.value.results[1].reason, 'triage: not worth keeping');
      assert.equal(res.value.results[2].entry_id, 'p-1');
      assert.deepEqual(asked, ['Node fetch ignores HTTP_PROXY', 'Done with the refactor'], 'hinted learnings skip the agent');
      assert.equal((await r.kb.get('g-1'))!.project, dir, 'global entries record their project');
    } finally {
      await r.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the real triage agent (claude CLI against the fake API)', () => {
  let fake: FakeAnthropic;
  let dir: string;
  const seen: StepContext[] = [];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kb-e2e-'));
    fake = await startFakeAnthropic({
      scripts: {
        // The verdict through Claude Code's StructuredOutput tool (what --json-schema offers the model).
        'tri-global': (ctx) => { seen.push(ctx); return { tools: [{ name: 'StructuredOutput', input: { scope: 'global', reason: 'true of Node anywhere' } }] }; },
        'tri-discard': [{ tools: [{ name: 'StructuredOutput', input: { scope: 'discard', reason: 'a status update' } }] }],
        // Text first: Claude nudges once ("[structured-output-enforce]"), the second turn uses the tool.
        'tri-text-then-tool': [{ text: '{"scope":"project","reason":"repo layout"}' }, { tools: [{ name: 'StructuredOutput', input: { scope: 'project', reason: 'repo layout' } }] }],
        'tri-error': [{ error: { status: 400, message: 'bad request from the fake' } }],
        'tri-bad-scope': [{ tools: [{ name: 'StructuredOutput', input: { scope: 'team', reason: 'x' } }] }, { tools: [{ name: 'StructuredOutput', input: { scope: 'team', reason: 'x' } }] }],
      },
    });
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const agent = (): TriageAgent => createTriageAgent({
    bin: claudeBin(), prompts: new PromptLibrary(PROMPTS), env: claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), cwd: dir, timeoutMs: 60_000,
  });
  const learning = (marker: string) => ({ title: 'Node fetch ignores HTTP_PROXY', content: `Node 20 global fetch ignores HTTP_PROXY; use an undici ProxyAgent. @script:${marker}`, tags: ['node', 'proxy'], normTitle: 'node fetch ignores http proxy' });

  test('the verdict comes back through StructuredOutput; the request is one tool-less haiku call with our prompt', async () => {
    assert.equal(await agent()(learning('tri-global')), 'global');
    const ctx = seen.at(-1)!;
    assert.equal(ctx.body.model, TRIAGE_MODEL);
    assert.deepEqual((ctx.body.tools as { name: string }[]).map((t) => t.name), ['StructuredOutput']);
    const schema = (ctx.body.tools as { input_schema: { properties: { scope: { enum: string[] } } } }[])[0]!.input_schema;
    assert.deepEqual(schema.properties.scope.enum, ['project', 'global', 'discard']);
    assert.match(ctx.prompt, /<title>\nNode fetch ignores HTTP_PROXY\n<\/title>/);
    assert.match(ctx.prompt, /<tags>node, proxy<\/tags>/);
    assert.ok(!/\{\{\w+\}\}/.test(ctx.prompt), 'every placeholder filled');
  });

  test('each run reports what it cost (haiku prices, tokens from the JSON result), for the job whose learning it triaged', async () => {
    const got: { usage: RunUsage; jobId: string | null }[] = [];
    const a = createTriageAgent({
      bin: claudeBin(), prompts: new PromptLibrary(PROMPTS), env: claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), cwd: dir, timeoutMs: 60_000,
      onUsage: (usage, jobId) => got.push({ usage, jobId }),
    });
    assert.equal(await a(learning('tri-global'), 'j-123456'), 'global');
    assert.equal(got.length, 1);
    const { usage, jobId } = got[0]!;
    assert.deepEqual([jobId, usage.model, usage.tokens.input, usage.tokens.output], ['j-123456', TRIAGE_MODEL, 100, 20]);
    assert.ok(usage.costUsd !== null && Math.abs(usage.costUsd - (100 * 1 + 20 * 5) / 1e6) < 1e-12, `cost ${usage.costUsd}`);
  });

  test('discard, and a text answer followed by the tool after Claude\'s nudge', async () => {
    assert.equal(await agent()(learning('tri-discard')), 'discard');
    assert.equal(await agent()(learning('tri-text-then-tool')), 'project');
  });

  test('failures yield undefined: API error, invalid verdict, missing binary', async () => {
    assert.equal(await agent()(learning('tri-error')), undefined);
    assert.equal(await agent()(learning('tri-bad-scope')), undefined);
    const none = createTriageAgent({ bin: join(dir, 'no-such-claude'), prompts: new PromptLibrary(PROMPTS), env: {} });
    assert.equal(await none(learning('tri-global')), undefined);
    assert.equal(await createTriageAgent({ bin: () => undefined, prompts: new PromptLibrary(PROMPTS) })(learning('tri-global')), undefined);
  });

  test('through report_learnings: the real agent puts a learning in the global KB', async () => {
    const r = await rig(join(dir, 'rig'), agent());
    try {
      const res = await callAs(r.agent, 'report_learnings', { learnings: [{ title: 'Node fetch ignores HTTP_PROXY', content: 'Node 20 global fetch ignores HTTP_PROXY; use an undici ProxyAgent. @script:tri-global' }] });
      assert.equal(res.value.results[0].status, 'stored', res.text);
      assert.equal(res.value.results[0].entry_id, 'g-1');
    } finally {
      await r.close();
    }
  });
});

describe('parseTriageOutput', () => {
  test('structured_output first, JSON in result second, errors and junk → undefined', async () => {
    assert.deepEqual(parseTriageOutput(JSON.stringify({ is_error: false, structured_output: { scope: 'global', reason: 'r' }, result: '' })), { scope: 'global', reason: 'r' });
    assert.deepEqual(parseTriageOutput(JSON.stringify({ is_error: false, result: 'Here: ```json\n{"scope":"discard","reason":"meh"}\n```' })), { scope: 'discard', reason: 'meh' });
    assert.equal(parseTriageOutput(JSON.stringify({ is_error: true, structured_output: { scope: 'global', reason: 'r' } })), undefined);
    assert.equal(parseTriageOutput(JSON.stringify({ is_error: false, result: '{"scope":"team"}' })), undefined);
    assert.equal(parseTriageOutput('not json'), undefined);
    assert.equal(parseTriageOutput(''), undefined);
  });
});
