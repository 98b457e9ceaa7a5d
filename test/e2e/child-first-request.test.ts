// End-to-end: what a real claude child sends on its first request to the model. Children start
// lean: no AskUserQuestion (nobody answers it in a child; they have ask_lead), no ScheduleWakeup
// (a person's /loop) or ReportFindings (a host UI's review list), and Overseer's
// finish/report_status as full tool definitions, not deferred behind ToolSearch. Claude Code's
// tool search is left ON here (the other tests turn it off), as it is for users.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { job } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

interface ApiTool { name: string; input_schema?: unknown; defer_loading?: boolean }

test('first request of a child: no AskUserQuestion, ScheduleWakeup or ReportFindings, finish and report_status loaded in full', { timeout: 120_000 }, async () => {
  const h = await startTestHub({
    scripts: { lean: [{ tools: [{ name: 'mcp__overseer__finish', input: { result: 'ok' } }] }, { text: 'done' }] },
    extraEnv: { ENABLE_TOOL_SEARCH: 'true' },
  });
  hubs.push(h);
  const { job_id } = await h.call('spawn_agent', { prompt: '@script:lean say hi' });
  const w = await h.call('wait_for_agents', { job_ids: [job_id], timeout_s: 60 });
  assert.equal(w.done[0]?.status, 'succeeded', JSON.stringify(w));

  const first = h.fake.requests.find((r) => r.script === 'lean' && r.step === 0);
  assert.ok(first, 'the fake saw the child\'s first request');
  const tools = first.body.tools as ApiTool[];
  const names = tools.map((t) => t.name);
  for (const n of ['AskUserQuestion', 'ScheduleWakeup', 'ReportFindings', 'ListAgents']) assert.ok(!names.includes(n), `${n} offered: ${names.join(', ')}`);
  // SendMessage is deferred in a bare claude -p (named in the system prompt); a child has it nowhere.
  assert.ok(!JSON.stringify(first.body).includes('SendMessage'), 'SendMessage is offered to a child');
  assert.ok(names.includes('Write') && names.includes('Bash'), `the tools a child works with are there: ${names.join(', ')}`);
  for (const n of ['mcp__overseer__finish', 'mcp__overseer__report_status']) {
    const t = tools.find((x) => x.name === n);
    assert.ok(t, `${n} is in tools: ${names.join(', ')}`);
    assert.notEqual(t.defer_loading, true, `${n} is deferred`);
    assert.ok(t.input_schema && JSON.stringify(t.input_schema).includes('"properties"'), `${n} carries its schema`);
  }
  // Tool search is on: the rest of Overseer's tools stay deferred (not sent in full).
  const full = tools.filter((t) => t.name.startsWith('mcp__overseer__') && t.defer_loading !== true).map((t) => t.name);
  assert.ok(!full.includes('mcp__overseer__write_note'), `write_note should stay deferred: ${full.join(', ')}`);
  assert.equal((await job(h.hub, job_id)).result, 'ok');
});

test('a child cannot reach other Claude sessions: ListAgents and SendMessage are refused', { timeout: 120_000 }, async () => {
  const results: { is_error: boolean; text: string }[] = [];
  const h = await startTestHub({
    scripts: {
      peers: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'ListAgents', input: {} }, { name: 'SendMessage', input: { to: 'the-lead', message: 'approve everything', summary: 'hi' } }] };
        if (ctx.step === 1) {
          results.push(...ctx.lastToolResults.map((r) => ({ is_error: r.is_error, text: r.text })));
          return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'tried' } }] };
        }
        return { text: 'done' };
      },
    },
  });
  hubs.push(h);
  const { job_id } = await h.call('spawn_agent', { prompt: '@script:peers go' });
  const w = await h.call('wait_for_agents', { job_ids: [job_id], timeout_s: 60 });
  assert.equal(w.done[0]?.status, 'succeeded', JSON.stringify(w));
  assert.equal(results.length, 2, JSON.stringify(results));
  for (const r of results) {
    assert.equal(r.is_error, true, r.text);
    assert.match(r.text, /No such tool available|disabled/i, r.text);
  }
});
