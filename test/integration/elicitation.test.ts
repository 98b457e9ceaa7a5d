// Integration: the person's form (MCP form elicitation through a lead client that can ask, as an
// interactive Claude Code does). The form names the agent by title and id, shows the plan as
// text, asks once (accept = approve, decline = reject, one optional comment; questions get the
// answer field); `who: lead` is never asked of the person; a request that closes elsewhere
// (timeout, the person's CLI) withdraws its form with notifications/cancelled; a reply from a
// client that ignored the withdrawal is kept and shown as a late answer.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { callAs } from '../helpers/mcp.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { lateAnswers, request } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

type Asked = { params: ElicitRequest['params']; signal: AbortSignal; withdrawn: Promise<string> };
type Handler = (a: Asked) => ElicitResult | Promise<ElicitResult>;

/** A hub, a lead client that can elicit (answering with `handler`), and a running agent titled `title`. */
async function setup(handler: Handler, o: { ignoreCancel?: boolean; title?: string } = {}) {
  const h = await startTestHub({ scripts: { hang: [{ delayMs: 120_000, text: 'never' }] } });
  hubs.push(h);
  const asked: Asked[] = [];
  const cancels: unknown[] = [];
  let onAsk!: () => void;
  const firstAsk = new Promise<void>((r) => { onAsk = r; });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await h.hub.server({ role: 'lead' }).connect(a);
  if (o.ignoreCancel) {
    // A client that misses the withdrawal (or ignores it) and answers anyway.
    const orig = b.start.bind(b);
    b.start = async () => {
      await orig();
      const inner = b.onmessage!;
      b.onmessage = (m: any, extra?: any) => {
        if (m.method === 'notifications/cancelled') { cancels.push(m.params); return; }
        inner(m, extra);
      };
    };
  }
  const person = new Client({ name: 'interactive-lead', version: '1' }, { capabilities: { elicitation: { form: {} } } });
  person.setRequestHandler(ElicitRequestSchema, (req, extra) => {
    const withdrawn = new Promise<string>((r) => extra.signal.addEventListener('abort', () => r(String(extra.signal.reason)), { once: true }));
    const one = { params: req.params, signal: extra.signal, withdrawn };
    asked.push(one);
    onAsk();
    return handler(one);
  });
  await person.connect(b);
  const jobId = (await h.call('spawn_agent', { prompt: '@script:hang', title: o.title ?? 'Schema migrator' })).job_id as string;
  await waitForJob(h.hub, jobId, (j) => j.status === 'running');
  const agent = await h.connect({ role: 'agent', jobId });
  return { h, agent, jobId, asked, firstAsk, cancels };
}

const plan = { rationale: 'the schema changed', resources: ['db/users.sql', 'db/orders.sql'], risks: 'a long table lock', rollback: 'restore the nightly dump' };

describe('the form', () => {
  test('approval: agent by title and id, the plan as text, one comment field; accept = approve, recorded as person (form)', async () => {
    const { h, agent, jobId, asked } = await setup(() => ({ action: 'accept', content: { comment: 'go ahead (person)' } }));
    const r = await callAs(agent, 'request_approval', { summary: 'drop the cache table', plan });
    assert.equal(r.value.decision, 'approved', r.text);
    assert.equal(r.value.comment, 'go ahead (person)');
    assert.equal(r.value.answered_by, 'person (form)');
    assert.equal(asked.length, 1);
    const p = asked[0]!.params as any;
    assert.equal(p.mode, 'form');
    assert.ok(p.message.startsWith(`Agent "Schema migrator" (${jobId}) asks for your approval:\n\ndrop the cache table`), p.message);
    for (const line of ['Why: the schema changed', 'Resources:\n  - db/users.sql\n  - db/orders.sql', 'Risks: a long table lock', 'Rollback: restore the nightly dump', 'Accept to approve, decline to reject.']) {
      assert.ok(p.message.includes(line), `form text has ${JSON.stringify(line)}:\n${p.message}`);
    }
    assert.ok(!/[{}[\]]|"rationale"/.test(p.message.replace(/"Schema migrator"/, '')), `no JSON in the form:\n${p.message}`);
    assert.deepEqual(p.requestedSchema, { type: 'object', properties: { comment: { type: 'string', title: 'Comment (optional)' } }, required: [] });
    assert.equal(p._meta['overseer/request_id'], r.value.request_id);

    const listed = (await h.call('list_requests', { status: 'all' })).requests[0];
    assert.deepEqual([listed.status, listed.decision, listed.answered_by, listed.who, listed.agent_title], ['answered', 'approved', 'person (form)', 'any', 'Schema migrator']);
    assert.ok(Date.parse(listed.answered_at) >= Date.parse(listed.created_at));
    const got = await h.call('get_agent', { job_id: jobId });
    assert.deepEqual(got.requests.map((q: any) => [q.request_id, q.status, q.decision, q.answered_by]), [[r.value.request_id, 'answered', 'approved', 'person (form)']]);
    assert.ok(got.requests[0].answered_at);
    await h.call('cancel_agent', { job_id: jobId });
  });

  test('decline = reject, with the comment; a question gets the answer field as an enum of its options', async () => {
    const { h, agent, jobId, asked } = await setup((a): ElicitResult => (a.params.message.includes('asks:')
      ? { action: 'accept', content: { answer: 'sqlite' } }
      : { action: 'decline', content: { comment: 'not today' } }));
    const r = await callAs(agent, 'request_approval', { summary: 'force-push main' });
    assert.deepEqual([r.value.decision, r.value.comment, r.value.answered_by], ['rejected', 'not today', 'person (form)']);
    const q = await callAs(agent, 'ask_lead', { question: 'Which database?', options: ['postgres', 'sqlite'] });
    assert.deepEqual([q.value.answer, q.value.answered_by], ['sqlite', 'person (form)']);
    const p = asked[1]!.params as any;
    assert.equal(p.message, `Agent "Schema migrator" (${jobId}) asks:\n\nWhich database?`);
    assert.deepEqual(p.requestedSchema, { type: 'object', properties: { answer: { type: 'string', title: 'Answer', enum: ['postgres', 'sqlite'] } }, required: ['answer'] });
    await h.call('cancel_agent', { job_id: jobId });
  });

  test('who: lead is never asked of the person; the next who: any request is', async () => {
    const { h, agent, jobId, asked, firstAsk } = await setup(() => ({ action: 'cancel' }));
    const leadOnly = callAs(agent, 'request_approval', { summary: 'lead-only: rotate the logs', who: 'lead' });
    const w = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 30 });
    assert.deepEqual(w.attention.map((x: any) => [x.summary, x.who, x.awaiting]), [['lead-only: rotate the logs', 'lead', 'lead']]);
    assert.match(w.attention[0].how_to_answer, /answer it with respond/);
    const closed = await h.call('respond', { request_id: w.attention[0].request_id, decision: 'approved' });
    assert.equal(closed.answered_by, 'lead');
    assert.equal((await leadOnly).value.decision, 'approved');
    assert.equal(asked.length, 0, 'the lead-only request was not put to the person');

    const anyone = callAs(agent, 'request_approval', { summary: 'anyone: rotate the keys' });
    await firstAsk;
    assert.equal(asked.length, 1);
    assert.match(asked[0]!.params.message, /anyone: rotate the keys/);
    const w2 = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 30 });
    await h.call('respond', { request_id: w2.attention[0].request_id, decision: 'rejected' });
    assert.equal((await anyone).value.decision, 'rejected');
    await h.call('cancel_agent', { job_id: jobId });
  });
});

describe('withdrawal and late answers', () => {
  test('a request that times out withdraws its form (notifications/cancelled); answered_by timeout', async () => {
    const { h, agent, jobId, asked } = await setup((a) => new Promise((resolve) => a.signal.addEventListener('abort', () => resolve({ action: 'cancel' }), { once: true })));
    const r = await callAs(agent, 'request_approval', { summary: 'may I?', timeout_s: 1 });
    assert.equal(r.value.decision, 'timed_out');
    assert.equal(r.value.answered_by, 'timeout');
    assert.equal(asked.length, 1);
    const reason = await asked[0]!.withdrawn;
    assert.match(reason, new RegExp(`request ${r.value.request_id} closed: timed out`));
    await h.call('cancel_agent', { job_id: jobId });
  });

  test('a person-only request answered with the CLI withdraws the form; the agent gets the CLI\'s answer', async () => {
    const { h, agent, jobId, asked, firstAsk } = await setup((a) => new Promise((resolve) => a.signal.addEventListener('abort', () => resolve({ action: 'cancel' }), { once: true })));
    const asking = callAs(agent, 'request_approval', { summary: 'spend $40 on the load test', who: 'person' });
    await firstAsk;
    assert.match(asked[0]!.params.message, /only you can answer this/);
    const id = (asked[0]!.params as any)._meta['overseer/request_id'] as string;
    const cli = await runOverseer(h.home, ['respond', id, '--approve', '--comment', 'ok from my terminal', '--as-person']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`${id}: approved \\(answered_by person \\(cli, --as-person\\)\\)`));
    const r = await asking;
    assert.deepEqual([r.value.decision, r.value.comment, r.value.answered_by], ['approved', 'ok from my terminal', 'person (cli, --as-person)']);
    assert.match(await asked[0]!.withdrawn, new RegExp(`request ${id} closed: approved by person \\(cli`));
    await h.call('cancel_agent', { job_id: jobId });
  });

  test('a form reply that comes after the request timed out is kept as a late answer and shown to the lead and in the CLI', async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => { release = r; });
    const { h, agent, jobId, firstAsk, cancels } = await setup(async () => {
      await released;
      return { action: 'accept', content: { comment: 'sorry, I was away' } };
    }, { ignoreCancel: true });
    const r = await callAs(agent, 'request_approval', { summary: 'rotate the keys', timeout_s: 1 });
    await firstAsk;
    assert.equal(r.value.decision, 'timed_out');
    await eventually('the withdrawal to reach the client', () => cancels.length > 0);
    release();
    const late = await eventually('the late answer to be recorded', async () => (await lateAnswers(h.hub, r.value.request_id))[0]);
    assert.deepEqual([late.answered_by, late.decision, late.comment], ['person (form)', 'approved', 'sorry, I was away']);
    const row = (await request(h.hub, r.value.request_id))!;
    assert.deepEqual([row.status, row.decision, row.answered_by], ['timed_out', null, 'timeout'], 'the late answer changed nothing');

    const w = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 30 });
    assert.equal(w.timed_out, false, 'the late answer woke the lead');
    const item = w.attention.find((x: any) => x.kind === 'late_answer');
    assert.equal(item.request_id, r.value.request_id);
    assert.match(item.note, /^late answer ignored: it arrived after the request closed at .* \(timed out\)/);
    const again = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 0.3 });
    assert.equal(again.timed_out, true, 'shown once');
    const listed = (await h.call('list_requests', { status: 'timed_out' })).requests.find((q: any) => q.request_id === r.value.request_id);
    assert.equal(listed.late_answers[0].answered_by, 'person (form)');
    const cli = await runOverseer(h.home, ['requests']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, new RegExp(`${r.value.request_id}  person \\(form\\) at .*late answer ignored`));
    await h.call('cancel_agent', { job_id: jobId });
  });
});
