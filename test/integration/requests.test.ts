// Integration: approvals, questions and messages through real MCP clients (the lead and agents
// linked in memory) on a real hub — request_approval / ask_lead block until the lead responds,
// the lead's wait_for_agents returns early with them under `attention`, the job shows
// needs_input meanwhile; respond's errors; timeouts; cancellation; role rules; messages to the
// lead, to siblings ("*") and across the tree.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { callAs, ok } from '../helpers/mcp.js';
import { jobOf, reopen, request } from '../helpers/state.js';
import { sql } from 'kysely';

const HANG = { hang: [{ delayMs: 120_000, text: 'never' }] };

interface Agent { id: string; title: string; client: Client }

let h: TestHub;

/** Calling `tool` fails, whether the SDK throws or answers with an error result; returns the text. */
async function fails(c: Client, tool: string, args: Record<string, unknown>): Promise<string> {
  try {
    const r = await c.callTool({ name: tool, arguments: args });
    assert.equal(r.isError, true, `${tool} should fail for this caller`);
    return (r.content as { text: string }[]).map((x) => x.text).join('');
  } catch (err) {
    return (err as Error).message;
  }
}

async function spawnAgent(title: string, via?: Agent): Promise<Agent> {
  const args = { prompt: '@script:hang', title };
  const id = (via ? await ok(via.client, 'spawn_agent', args) : await h.call('spawn_agent', args)).job_id as string;
  await waitForJob(h.hub, id, (j) => j.status === 'running');
  return { id, title, client: await h.connect({ role: 'agent', jobId: id }) };
}

/** Cancel agents at the end of a test (keeps the concurrency cap free and siblings predictable). */
async function cancel(...agents: Agent[]): Promise<void> {
  for (const a of agents) await h.call('cancel_agent', { job_id: a.id });
}

function track<T>(p: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false;
  p.then(() => { done = true; }, () => { done = true; });
  return { promise: p, settled: () => done };
}

/** The lead's wait on `id` returns early with exactly one open request; that request. */
async function attentionRequest(id: string, kind: string): Promise<{ request_id: string; job_id: string; kind: string; summary: string }> {
  const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 30 });
  assert.equal(w.timed_out, false, 'the wait returned early, not on its timeout');
  assert.deepEqual(w.pending, [id]);
  const reqs = w.attention.filter((a: any) => a.kind === kind);
  assert.equal(reqs.length, 1, JSON.stringify(w.attention));
  return reqs[0];
}

before(async () => {
  h = await startTestHub({ scripts: HANG, progressEveryMs: 50 });
});
after(async () => { await h.stop(); });

describe('request_approval', () => {
  test('round trip: attention in the lead\'s wait, needs_input, list_requests with the plan, respond → the agent gets the decision', async () => {
    const X = await spawnAgent('Migrator');
    const plan = { rationale: 'the schema changed', resources: ['db/users'], risks: 'data loss', rollback: 'restore the nightly backup' };
    const leadWait = h.call('wait_for_agents', { job_ids: [X.id], timeout_s: 30 });
    const asking = track(callAs(X.client, 'request_approval', { summary: 'drop the legacy users table', plan, timeout_s: 60 }));
    const w = await leadWait;
    assert.equal(w.timed_out, false);
    assert.deepEqual(w.done, []);
    assert.equal(w.attention.length, 1);
    const att = w.attention[0];
    assert.deepEqual([att.job_id, att.kind, att.summary], [X.id, 'approval', 'drop the legacy users table']);
    assert.match(att.request_id, /\S/);

    assert.equal((await h.call('get_agent', { job_id: X.id })).status, 'needs_input');
    const listed = (await h.call('list_requests', {})).requests;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].request_id, att.request_id);
    assert.equal(listed[0].job_id, X.id);
    assert.equal(listed[0].kind, 'approval');
    assert.equal(listed[0].summary, 'drop the legacy users table');
    assert.deepEqual(listed[0].plan, plan);
    assert.ok(!Number.isNaN(Date.parse(listed[0].created_at)));
    assert.equal(asking.settled(), false, 'the agent is still blocked');

    const closed = await h.call('respond', { request_id: att.request_id, decision: 'approved', comment: 'go ahead, back up first' });
    assert.equal(closed.status, 'answered');
    assert.equal(closed.decision, 'approved');
    const r = await asking.promise;
    assert.equal(r.isError, false, r.text);
    assert.equal(r.value.decision, 'approved');
    assert.equal(r.value.comment, 'go ahead, back up first');
    assert.equal(r.value.request_id, att.request_id);
    assert.equal((await h.call('get_agent', { job_id: X.id })).status, 'running');
    assert.deepEqual((await h.call('list_requests', {})).requests, [], 'nothing pending any more');
    const answered = (await h.call('list_requests', { status: 'answered' })).requests;
    assert.ok(answered.some((q: any) => q.request_id === att.request_id));
    await cancel(X);
  });

  test('rejected, with a comment', async () => {
    const X = await spawnAgent('Pusher');
    const asking = callAs(X.client, 'request_approval', { summary: 'force-push main', timeout_s: 60 });
    const req = await attentionRequest(X.id, 'approval');
    await h.call('respond', { request_id: req.request_id, decision: 'rejected', comment: 'never force-push main' });
    const r = await asking;
    assert.deepEqual([r.value.decision, r.value.comment], ['rejected', 'never force-push main']);
    await cancel(X);
  });

  test('a request times out: decision timed_out, status timed_out, the job runs again', async () => {
    const X = await spawnAgent('Impatient');
    const t0 = Date.now();
    const r = await ok(X.client, 'request_approval', { summary: 'may I?', timeout_s: 1 });
    assert.ok(Date.now() - t0 >= 900, 'it waited about a second');
    assert.equal(r.decision, 'timed_out');
    const all = (await h.call('list_requests', { status: 'all' })).requests;
    const mine = all.find((q: any) => q.request_id === r.request_id);
    assert.equal(mine?.status, 'timed_out');
    assert.equal((await h.call('get_agent', { job_id: X.id })).status, 'running');
    const late = await h.callRaw('respond', { request_id: r.request_id, decision: 'approved' });
    assert.equal(late.isError, true);
    assert.match(late.text, /invalid_state: .*timed_out/);
    await cancel(X);
  });

  test('cancelling the job closes its pending request as cancelled', async () => {
    const X = await spawnAgent('Doomed');
    const asking = track(callAs(X.client, 'request_approval', { summary: 'one more thing', timeout_s: 60 }));
    const req = await attentionRequest(X.id, 'approval');
    await cancel(X);
    const r = await asking.promise;
    assert.equal(r.isError, false, r.text);
    assert.notEqual(r.value.decision, 'approved');
    const rows = (await h.call('list_requests', { status: 'cancelled' })).requests;
    assert.ok(rows.some((q: any) => q.request_id === req.request_id), JSON.stringify(rows));
    assert.deepEqual((await h.call('list_requests', {})).requests.filter((q: any) => q.job_id === X.id), []);
    const after = await h.callRaw('respond', { request_id: req.request_id, decision: 'approved' });
    assert.match(after.text, /invalid_state/);
  });

  test('a job\'s end told with Bus.emitSettled returns after its pending requests are cancelled', async () => {
    const X = await spawnAgent('Ending');
    const asking = track(callAs(X.client, 'request_approval', { summary: 'before my end', timeout_s: 60 }));
    const req = await attentionRequest(X.id, 'approval');
    assert.match(req.request_id, /^r-[0-9a-z]+-[0-9a-z]+[0-9a-f]{8}$/, 'time, this hub\'s counter and 32 random bits: unique across hubs sharing a database');
    const errors: unknown[] = [];
    // What the engine does at a job's end (the status of the event is what the listener reads).
    await h.hub.ctx.bus.emitSettled('job', { jobId: X.id, status: 'failed' }, (e) => errors.push(e));
    assert.deepEqual(errors, []);
    const row = (await request(h.hub, req.request_id))!;
    assert.deepEqual([row.status, row.answered_by, row.comment], ['cancelled', 'hub', 'the agent is no longer running'], 'closed before emitSettled returned');
    const r = await asking.promise;
    assert.equal(r.value.decision, 'rejected');
    await cancel(X);
  });

  test('the agent cancelling its own call closes the request and the job runs again', async () => {
    const X = await spawnAgent('Fickle');
    const ac = new AbortController();
    const asking = X.client.callTool({ name: 'request_approval', arguments: { summary: 'never mind', timeout_s: 60 } }, undefined, { signal: ac.signal });
    asking.catch(() => undefined);
    const req = await attentionRequest(X.id, 'approval');
    ac.abort();
    await assert.rejects(asking);
    const row = await eventually('the request to close', async () => {
      const r = await request(h.hub, req.request_id);
      return r && r.status !== 'pending' ? r : undefined;
    });
    assert.equal(row.status, 'cancelled');
    await waitForJob(h.hub, X.id, (j) => j.status === 'running', 10_000);
    await cancel(X);
  });

  test('after a hub crash, requests of jobs that did not survive are not left pending', async () => {
    const h1 = await startTestHub({ scripts: HANG });
    let h2: TestHub | undefined;
    try {
      const id = (await h1.call('spawn_agent', { prompt: '@script:hang', title: 'Crashed' })).job_id as string;
      await waitForJob(h1.hub, id, (j) => j.status === 'running');
      const agent = await h1.connect({ role: 'agent', jobId: id });
      const asking = callAs(agent, 'request_approval', { summary: 'before the crash', timeout_s: 600 });
      asking.catch(() => undefined);
      const w = await h1.call('wait_for_agents', { job_ids: [id], timeout_s: 30 });
      const requestId = w.attention[0].request_id as string;
      await h1.hub.stop();
      // A kill -9 leaves the job needs_input and its request pending: put the rows back that way.
      const db = await reopen(h1.hub);
      await sql`UPDATE requests SET status = 'pending', decision = NULL, comment = NULL, answered_at = NULL WHERE id = ${requestId}`.execute(db.db);
      await sql`UPDATE jobs SET status = 'needs_input', ended_at = NULL WHERE id = ${id}`.execute(db.db);
      await db.close();

      h2 = await startTestHub({ dir: h1.dir, fake: h1.fake });
      const job = await h2.call('get_agent', { job_id: id });
      assert.equal(job.status, 'interrupted', 'reconciled');
      const pending = (await h2.call('list_requests', {})).requests;
      assert.deepEqual(pending.map((q: any) => q.request_id), [], 'no one waits for this request any more: it must not stay pending');
      const all = (await h2.call('list_requests', { status: 'all' })).requests;
      assert.equal(all.find((q: any) => q.request_id === requestId)?.status, 'cancelled');
    } finally {
      await h2?.stop({ keep: true });
      await h1.stop();
    }
  });
});

describe('ask_lead', () => {
  test('an answer outside the options is refused clearly; a valid one is returned', async () => {
    const X = await spawnAgent('Chooser');
    const asking = track(callAs(X.client, 'ask_lead', { question: 'Which database?', options: ['postgres', 'sqlite'], timeout_s: 60 }));
    const req = await attentionRequest(X.id, 'question');
    assert.equal(req.summary, 'Which database?');
    const bad = await h.callRaw('respond', { request_id: req.request_id, answer: 'mysql' });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /^invalid_input: /);
    assert.match(bad.text, /mysql/);
    assert.match(bad.text, /"postgres", "sqlite"/);
    const noAnswer = await h.callRaw('respond', { request_id: req.request_id, decision: 'approved' });
    assert.equal(noAnswer.isError, true);
    assert.match(noAnswer.text, /give answer/);
    assert.equal(asking.settled(), false);
    assert.equal((await h.call('list_requests', {})).requests[0]?.request_id, req.request_id, 'still pending');
    await h.call('respond', { request_id: req.request_id, answer: 'sqlite' });
    const r = await asking.promise;
    assert.equal(r.isError, false, r.text);
    assert.equal(r.value.answer, 'sqlite');
    assert.equal(r.value.timed_out, false);
    await cancel(X);
  });

  test('a free-form question takes any answer', async () => {
    const X = await spawnAgent('Curious');
    const asking = callAs(X.client, 'ask_lead', { question: 'What port?', timeout_s: 60 });
    const req = await attentionRequest(X.id, 'question');
    await h.call('respond', { request_id: req.request_id, answer: '8080', comment: 'the usual' });
    assert.deepEqual([(await asking).value.answer, (await asking).value.comment], ['8080', 'the usual']);
    await cancel(X);
  });
});

describe('respond errors', () => {
  test('unknown id → not_found listing recent ids; twice → invalid_state; approval without decision → invalid_input', async () => {
    const X = await spawnAgent('Asker');
    const asking = callAs(X.client, 'request_approval', { summary: 'deploy?', timeout_s: 60 });
    const req = await attentionRequest(X.id, 'approval');

    const unknown = await h.callRaw('respond', { request_id: 'r-nope', decision: 'approved' });
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, /^not_found: /);
    assert.ok(unknown.text.includes('r-nope'));
    assert.ok(unknown.text.includes(req.request_id), `recent ids listed: ${unknown.text}`);

    const noDecision = await h.callRaw('respond', { request_id: req.request_id, comment: 'hmm' });
    assert.equal(noDecision.isError, true);
    assert.match(noDecision.text, /^invalid_input: .*decision/);
    assert.equal((await h.call('list_requests', {})).requests.length, 1, 'still pending after a bad respond');

    const badDecision = await h.callRaw('respond', { request_id: req.request_id, decision: 'maybe' });
    assert.equal(badDecision.isError, true, 'zod refuses an unknown decision');

    await h.call('respond', { request_id: req.request_id, decision: 'approved' });
    const twice = await h.callRaw('respond', { request_id: req.request_id, decision: 'rejected' });
    assert.equal(twice.isError, true);
    assert.match(twice.text, /^invalid_state: .*already answered/);
    assert.equal((await asking).value.decision, 'approved', 'the second respond changed nothing');
    await cancel(X);
  });
});

describe('roles', () => {
  test('agents do not see list_requests or respond, and calling them fails; the lead does not see request_approval / ask_lead', async () => {
    const X = await spawnAgent('Sneaky');
    const agentTools = (await X.client.listTools()).tools.map((t) => t.name);
    assert.ok(agentTools.includes('request_approval') && agentTools.includes('ask_lead'));
    assert.ok(!agentTools.includes('list_requests'), 'list_requests is the lead\'s');
    assert.ok(!agentTools.includes('respond'), 'respond is the lead\'s');
    assert.match(await fails(X.client, 'list_requests', {}), /list_requests/);
    assert.match(await fails(X.client, 'respond', { request_id: 'r-x', decision: 'approved' }), /respond/);

    const leadTools = (await h.client.listTools()).tools.map((t) => t.name);
    assert.ok(leadTools.includes('list_requests') && leadTools.includes('respond'));
    assert.ok(!leadTools.includes('request_approval') && !leadTools.includes('ask_lead'));
    await fails(h.client, 'request_approval', { summary: 'x' });
    assert.deepEqual((await h.call('list_requests', { status: 'all' })).requests.filter((q: any) => q.job_id === X.id), []);
    await cancel(X);
  });
});

describe('messages', () => {
  test('an agent\'s message to the lead wakes the lead\'s wait once', async () => {
    const X = await spawnAgent('Chatty');
    const leadWait = h.call('wait_for_agents', { job_ids: [X.id], timeout_s: 30 });
    const sent = await ok(X.client, 'send_message', { to: 'lead', text: 'halfway there' });
    assert.equal(typeof sent.message_id, 'number');
    const w = await leadWait;
    assert.equal(w.timed_out, false);
    const msgs = w.attention.filter((a: any) => a.kind === 'message');
    assert.equal(msgs.length, 1, JSON.stringify(w.attention));
    assert.deepEqual([msgs[0].message_id, msgs[0].from, msgs[0].to, msgs[0].text], [sent.message_id, X.id, 'lead', 'halfway there']);

    const again = await h.call('wait_for_agents', { job_ids: [X.id], timeout_s: 0.3 });
    assert.equal(again.timed_out, true, 'the same message does not wake the lead twice');
    assert.deepEqual(again.attention, []);
    const inbox = (await h.call('read_messages', { unread_only: false })).messages;
    assert.ok(inbox.some((m: any) => m.message_id === sent.message_id && m.read === true));
    await cancel(X);
  });

  test('"*" reaches the sender\'s siblings only; read_messages marks read; reach rules', async () => {
    const P = await spawnAgent('Parent');
    const Q = await spawnAgent('Sibling');
    const S1 = await spawnAgent('Sub one', P);
    const S2 = await spawnAgent('Sub two', P);
    assert.equal((await jobOf(h.hub, S1.id))?.parent_id, P.id);

    const fromQ = await ok(Q.client, 'send_message', { to: '*', text: 'hello siblings' });
    assert.deepEqual(fromQ.recipients, [P.id], 'a top-level agent\'s siblings are the other top-level agents, not their sub-agents');
    const fromS1 = await ok(S1.client, 'send_message', { to: '*', text: 'hello from sub one' });
    assert.deepEqual(fromS1.recipients, [S2.id]);

    const inboxP = (await ok(P.client, 'read_messages', {})).messages;
    assert.deepEqual(inboxP.map((m: any) => [m.from, m.text]), [[Q.id, 'hello siblings']]);
    assert.deepEqual((await ok(S2.client, 'read_messages', {})).messages.map((m: any) => [m.from, m.text]), [[S1.id, 'hello from sub one']]);
    assert.deepEqual((await ok(S1.client, 'read_messages', {})).messages, [], 'the sub-agent was not reached by its uncle');
    assert.deepEqual((await ok(Q.client, 'read_messages', {})).messages, [], 'no echo to the sender');

    // unread_only (the default) marks what it returns as read.
    assert.deepEqual((await ok(P.client, 'read_messages', { unread_only: true })).messages, []);
    const allP = (await ok(P.client, 'read_messages', { unread_only: false })).messages;
    assert.deepEqual(allP.map((m: any) => [m.text, m.read]), [['hello siblings', true]]);

    // Reach: parent ↔ own sub-agent and siblings are fine; across the tree is forbidden.
    await ok(S1.client, 'send_message', { to: P.id, text: 'to my parent' });
    await ok(P.client, 'send_message', { to: S1.id, text: 'to my sub-agent' });
    await ok(Q.client, 'send_message', { to: P.id, text: 'to my sibling' });
    const uncle = await callAs(S1.client, 'send_message', { to: Q.id, text: 'hi uncle' });
    assert.equal(uncle.isError, true);
    assert.match(uncle.text, /^forbidden: .*outside your reach/);
    const nephew = await callAs(Q.client, 'send_message', { to: S2.id, text: 'hi nephew' });
    assert.equal(nephew.isError, true);
    assert.match(nephew.text, /^forbidden: /);
    assert.deepEqual((await ok(S2.client, 'read_messages', {})).messages, [], 'a forbidden message is not stored');
    const missing = await callAs(Q.client, 'send_message', { to: 'j-does-not-exist', text: 'x' });
    assert.match(missing.text, /^not_found: /);

    // A sub-agent's message to the lead wakes a wait on its top-level ancestor.
    const leadWait = h.call('wait_for_agents', { job_ids: [P.id], timeout_s: 30 });
    await ok(S2.client, 'send_message', { to: 'lead', text: 'sub two reporting' });
    const w = await leadWait;
    assert.deepEqual(w.attention.filter((a: any) => a.kind === 'message').map((a: any) => [a.from, a.text]), [[S2.id, 'sub two reporting']]);
    await cancel(P, Q);
  });

  test('the lead cannot send to "*" or to "lead"; an agent alone has no siblings', async () => {
    const star = await h.callRaw('send_message', { to: '*', text: 'everyone' });
    assert.equal(star.isError, true);
    assert.match(star.text, /^invalid_input: .*siblings/);
    const self = await h.callRaw('send_message', { to: 'lead', text: 'me' });
    assert.equal(self.isError, true);
    assert.match(self.text, /^invalid_input: /);
    const X = await spawnAgent('Loner');
    const alone = await callAs(X.client, 'send_message', { to: '*', text: 'anyone?' });
    assert.equal(alone.isError, true);
    assert.match(alone.text, /no running or pending siblings/);
    await cancel(X);
  });
});
