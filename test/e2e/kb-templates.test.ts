// End-to-end: the crew's memory and templates with real claude children — a learning one
// agent reports reaches the next agent's prompt under ## Memory, a duplicate is merged, a
// template's guidelines and model reach the child, and a real lead claude sees Overseer's MCP
// prompts (recipes and templates) as slash commands.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { claudeBin, claudeEnv, runClaude } from '../helpers/claude.js';
import type { Script } from '../../src/fakemodel/fakeAnthropic.js';
import { job as jobRow } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

const LEARNING = { title: 'Date tests need TZ=UTC', content: 'The date formatting tests fail unless the TZ environment variable is set to UTC before running npm test.', tags: ['tests', 'ci'] };

const reporter: Script = (ctx) => {
  if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_learnings', input: { learnings: [LEARNING] } }] };
  if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: ctx.lastToolResults[0]!.text } }] };
  return { text: 'done' };
};

describe('memory and templates', () => {
  test('a learning reported by one agent reaches the next agent\'s ## Memory; reporting it again merges it', async () => {
    const h = await startTestHub({ scripts: { report: reporter, next: [{ text: 'ok' }] } });
    hubs.push(h);
    const a = (await h.call('spawn_agent', { prompt: '@script:report learn something' })).job_id;
    const wa = await h.call('wait_for_agents', { job_ids: [a], timeout_s: 60 });
    const first = JSON.parse(wa.done[0].result);
    assert.equal(first.results[0].status, 'stored');
    const entryId = first.results[0].entry_id;

    const b = (await h.call('spawn_agent', { prompt: '@script:next fix the date formatting tests that fail in CI' })).job_id;
    await h.call('wait_for_agents', { job_ids: [b], timeout_s: 60 });
    const req = h.fake.requests.find((r) => r.script === 'next')!;
    const prompt = JSON.stringify(req.body.messages);
    assert.match(prompt, /## Memory/);
    assert.match(prompt, /Date tests need TZ=UTC/);
    assert.match(prompt, new RegExp(`from job ${a}`));

    const c = (await h.call('spawn_agent', { prompt: '@script:report learn it again' })).job_id;
    const wc = await h.call('wait_for_agents', { job_ids: [c], timeout_s: 60 });
    const again = JSON.parse(wc.done[0].result);
    assert.equal(again.results[0].status, 'merged');
    assert.equal(again.results[0].into ?? again.results[0].entry_id, entryId);
    const found = await h.call('search_kb', { query: 'TZ UTC date tests' });
    assert.equal(found.entries.length, 1, 'one entry, not two');
  });

  test('a template\'s guidelines, model and checks reach the child', async () => {
    const h = await startTestHub({ scripts: { tpl: [{ text: 'ok' }] } });
    hubs.push(h);
    mkdirSync(join(h.home, 'templates'), { recursive: true });
    writeFileSync(join(h.home, 'templates', 'careful.md'), '---\ndescription: careful worker\nmodel: claude-careful-1\nmax_turns: 7\n---\nAlways run the tests with TZ=UTC before you finish.\n');
    const s = await h.call('spawn_agent', { prompt: '@script:tpl do the thing', template: 'careful' });
    await h.call('wait_for_agents', { job_ids: [s.job_id], timeout_s: 60 });
    const req = h.fake.requests.find((r) => r.script === 'tpl')!;
    assert.equal(req.body.model, 'claude-careful-1');
    assert.match(JSON.stringify(req.body.messages), /## Guidelines\\n\\nAlways run the tests with TZ=UTC/);
    const job = await jobRow(h.hub, s.job_id);
    assert.equal(job.template, 'careful');
    assert.equal(job.max_turns, 7);
    const bad = await h.callRaw('spawn_agent', { prompt: 'x', template: 'nope' });
    assert.match(bad.text, /careful/, 'the error lists the templates that exist');
  });

  test('a real lead claude lists Overseer\'s MCP prompts as slash commands', async () => {
    const h = await startTestHub({ scripts: { lead: [{ text: 'hello' }] } });
    hubs.push(h);
    mkdirSync(join(h.home, 'templates'), { recursive: true });
    writeFileSync(join(h.home, 'templates', 'reviewer.md'), '---\ndescription: reviews things\n---\nBe thorough.\n');
    const env = { ...claudeEnv({ home: join(h.dir, 'lead-home'), baseUrl: h.fake.url }), OVERSEER_HOME: join(h.dir, 'lead-state'), CLAUDE_BIN: claudeBin() };
    mkdirSync(join(h.dir, 'lead-state', 'templates'), { recursive: true });
    writeFileSync(join(h.dir, 'lead-state', 'templates', 'reviewer.md'), '---\ndescription: reviews things\n---\nBe thorough.\n');
    const mcp = { mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [join(process.cwd(), 'dist/cli/main.js'), 'mcp'] } } };
    const r = await runClaude(['-p', '@script:lead hi', '--output-format', 'stream-json', '--verbose', '--mcp-config', JSON.stringify(mcp), '--strict-mcp-config'], { cwd: h.dir, env, timeoutMs: 60_000 });
    const init = r.events.find((e) => e.type === 'system' && e.subtype === 'init');
    assert.deepEqual(init.mcp_servers, [{ name: 'overseer', status: 'connected', source: 'dynamic' }]);
    const cmds = (init.slash_commands as string[]).filter((c) => c.includes('overseer'));
    for (const want of ['fan-out', 'review-branch', 'run-workflow', 'template-reviewer']) {
      assert.ok(cmds.some((c) => c.endsWith(want)), `${want} in ${cmds.join(', ')}`);
    }
  });
});
