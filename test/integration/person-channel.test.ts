// Integration: the person's channel to requests — person-only requests (`who: "person"`) as the
// lead sees them (attention once, marked for the person; respond refused, nothing changed), the
// built CLI (`node dist/cli/main.js respond|requests`) against the running hub, on a real
// pseudo-terminal for the confirmation, its usage errors (exit 2) and runtime failures (exit 1),
// and the HTTP API's checks (token, Host, body), none of which changes anything.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { rm } from 'node:fs/promises';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { callAs, type CallResult } from '../helpers/mcp.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { makeTempDir } from '../helpers/claude.js';
import { TokenRecorder } from '../helpers/tokens.js';
import { job, lateAnswers, request } from '../helpers/state.js';

let h: TestHub;
const tokens = new TokenRecorder();
before(async () => { h = await startTestHub({ scripts: { hang: [{ delayMs: 120_000, text: 'never' }] }, processes: tokens }); });
after(async () => { await h.stop(); });

interface Asking { id: string; jobId: string; agent: Client; result: Promise<CallResult> }

/** A running agent blocked in `tool` (request_approval / ask_lead); the request's id from the lead's wait. */
async function asking(tool: string, args: Record<string, unknown>): Promise<Asking> {
  const jobId = (await h.call('spawn_agent', { prompt: '@script:hang', title: 'Budget keeper' })).job_id as string;
  await waitForJob(h.hub, jobId, (j) => j.status === 'running');
  const agent = await h.connect({ role: 'agent', jobId });
  const result = callAs(agent, tool, { timeout_s: 120, ...args });
  const w = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 30 });
  assert.equal(w.timed_out, false);
  return { id: w.attention[0].request_id, jobId, agent, result };
}

const row = async (id: string) => (await request(h.hub, id))!;
const unchanged = async (id: string): Promise<void> => {
  assert.equal((await row(id)).status, 'pending', 'still pending');
  assert.deepEqual(await lateAnswers(h.hub, id), [], 'no answer recorded');
};

function api(method: string, path: string, o: { token?: string | null; host?: string; origin?: string; body?: string } = {}): Promise<{ status: number; body: any }> {
  const port = h.hub.http!.port;
  const token = o.token === undefined ? h.hub.leadToken : o.token;
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1', port, method, path,
      headers: { host: o.host ?? `127.0.0.1:${port}`, ...(o.origin ? { origin: o.origin } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}), ...(o.body ? { 'content-type': 'application/json' } : {}) },
    }, (res) => {
      let s = '';
      res.on('data', (d) => { s += d; });
      res.on('end', () => resolve({ status: res.statusCode!, body: s ? JSON.parse(s) : undefined }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}

describe('a person-only request', () => {
  test('wakes the lead once, marked for the person; the lead\'s respond is refused and changes nothing; the person answers on a terminal', async () => {
    const a = await asking('request_approval', { summary: 'spend $40 on the load test', who: 'person', plan: { risks: 'the bill' } });
    const w = await h.call('wait_for_agents', { job_ids: [a.jobId], timeout_s: 0.5 });
    assert.equal(w.timed_out, true, 'shown once: a second wait does not return early for it');
    assert.equal(w.attention.length, 1, 'but it is still listed');
    const item = w.attention[0];
    assert.deepEqual([item.request_id, item.who, item.awaiting, item.agent_title], [a.id, 'person', 'person', 'Budget keeper']);
    assert.match(item.how_to_answer, /^Only the person can answer this request/);
    assert.ok(item.how_to_answer.includes(`overseer respond ${a.id} --approve|--reject`), item.how_to_answer);

    const refused = await h.callRaw('respond', { request_id: a.id, decision: 'approved', comment: 'I am sure they would agree' });
    assert.equal(refused.isError, true);
    assert.match(refused.text, new RegExp(`^forbidden: Request ${a.id} is for the person \\(the agent asked with who: "person"\\), so the lead may not answer it; nothing was changed\\. Tell the person .*overseer respond ${a.id}`));
    await unchanged(a.id);
    assert.equal((await job(h.hub, a.jobId)).status, 'needs_input');
    const listed = (await h.call('list_requests', {})).requests.find((q: any) => q.request_id === a.id);
    assert.deepEqual([listed.who, listed.awaiting, listed.answered_by], ['person', 'person', null]);

    const no = await runOverseer(h.home, ['respond', a.id, '--approve'], { tty: true, stdin: 'n\n' });
    assert.equal(no.code, 1, no.stdout + no.stderr);
    assert.match(no.stdout, /spend \$40 on the load test/);
    assert.match(no.stdout, /Risks: the bill/);
    assert.match(no.stdout, /APPROVE this request as the person\? \[y\/N\]/);
    assert.match(no.stdout + no.stderr, /not answered: request .* is still pending/);
    await unchanged(a.id);

    const yes = await runOverseer(h.home, ['respond', a.id, 'approve', '--comment', 'fine, once'], { tty: true, stdin: 'y\n' });
    assert.equal(yes.code, 0, yes.stdout + yes.stderr);
    assert.match(yes.stdout, new RegExp(`${a.id}: approved \\(answered_by person \\(cli\\)\\)`));
    const r = await a.result;
    assert.deepEqual([r.value.decision, r.value.comment, r.value.answered_by], ['approved', 'fine, once', 'person (cli)']);
    assert.equal((await row(a.id)).answered_by, 'person (cli)');
    assert.ok((await row(a.id)).answered_at);
    await h.call('cancel_agent', { job_id: a.jobId });
  });
});

describe('the CLI', () => {
  test('usage errors exit 2 with a clear message and change nothing', async () => {
    const a = await asking('request_approval', { summary: 'delete the staging bucket', who: 'person' });
    const q = await asking('ask_lead', { question: 'Which region?', options: ['eu', 'us'] });
    const cases: [string[], RegExp][] = [
      [['respond', a.id], /give exactly one of --approve, --reject or --answer <text> \(got none\)/],
      [['respond', a.id, '--approve', '--reject'], /give exactly one of .* \(got more than one\)/],
      [['respond', a.id, '--approve', '--bogus'], /unknown option '--bogus'/],
      [['respond', a.id, '--approve'], /is for the person only, and this is not an interactive terminal.*--as-person/],
      [['respond', 'r-nope', '--approve'], /No request "r-nope"\. Recent requests: /],
      [['respond', a.id, '--answer', 'yes', '--as-person'], /is an approval: give decision "approved" or "rejected"/],
      [['respond', q.id, '--answer', 'mars'], /answer "mars" is not one of the options "eu", "us"/],
      [['respond', q.id, '--approve'], /is a question: give answer \(one of "eu", "us"\)/],
      [['respond', a.id, 'maybe'], /unknown answer "maybe": use approve, reject, or --answer <text>/],
      [['respond', a.id, 'approve', '--reject'], /give exactly one of .* \(got more than one\)/],
      [['respond', a.id, 'approve'], /is for the person only, and this is not an interactive terminal/],
    ];
    for (const [args, msg] of cases) {
      const r = await runOverseer(h.home, args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, msg, args.join(' '));
      await unchanged(a.id);
      await unchanged(q.id);
    }
    const listing = await runOverseer(h.home, ['requests']);
    assert.equal(listing.code, 0, listing.stderr);
    assert.match(listing.stdout, /^2 pending requests:/);
    assert.match(listing.stdout, new RegExp(`${a.id}  approval  pending  for: you \\(the person\\) only  agent "Budget keeper"`));
    assert.match(listing.stdout, new RegExp(`${q.id}  question  pending  for: you or the lead`));
    assert.match(listing.stdout, /options: eu \| us/);
    const bare = await runOverseer(h.home, ['respond', '--json']);
    assert.equal(bare.code, 0);
    assert.deepEqual(JSON.parse(bare.stdout).requests.map((x: any) => x.request_id).sort(), [a.id, q.id].sort());

    const ok = await runOverseer(h.home, ['respond', q.id, '--answer', 'eu']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal((await q.result).value.answer, 'eu');
    assert.equal((await row(q.id)).answered_by, 'person (cli)', 'a request any may answer needs no confirmation');
    await h.call('cancel_agent', { job_id: a.jobId });
    await h.call('cancel_agent', { job_id: q.jobId });
  });

  test('runtime failures exit 1: no hub; too late (the answer is kept as a late answer)', async () => {
    const empty = await makeTempDir('ovs-nohub');
    try {
      const r = await runOverseer(empty, ['requests']);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /No Overseer hub is running for /);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
    const a = await asking('request_approval', { summary: 'quick one', timeout_s: 1 });
    assert.equal((await a.result).value.decision, 'timed_out');
    const late = await runOverseer(h.home, ['respond', a.id, '--reject']);
    assert.equal(late.code, 1);
    assert.match(late.stderr, new RegExp(`too late: request ${a.id} closed at \\S+ \\(timed out\\)`));
    assert.deepEqual((await lateAnswers(h.hub, a.id)).map((l) => [l.answered_by, l.decision]), [['person (cli)', 'rejected']]);
    assert.equal((await row(a.id)).status, 'timed_out');
    const listing = await runOverseer(h.home, ['requests']);
    assert.match(listing.stdout, new RegExp(`${a.id}  person \\(cli\\) at .*: rejected — late answer ignored`));
    await h.call('cancel_agent', { job_id: a.jobId });
  });
});

describe('the HTTP API', () => {
  test('token, Host, method and body are checked; a refused call changes nothing', async () => {
    const a = await asking('request_approval', { summary: 'reboot the build box', who: 'person' });
    const path = `/api/requests/${a.id}/respond`;
    const good = JSON.stringify({ decision: 'approved', channel: 'cli', confirmation: 'flag' });
    assert.equal((await api('POST', path, { token: null, body: good })).status, 401);
    assert.equal((await api('POST', path, { token: 'x'.repeat(40), body: good })).status, 401, 'an unknown token');
    const asAgent = await api('POST', path, { token: await tokens.token(a.jobId), body: good });
    assert.equal(asAgent.status, 403, 'an agent\'s own token');
    assert.match(asAgent.body.error.message, /takes the lead token .* an agent cannot answer requests/);
    await unchanged(a.id);
    assert.equal((await api('POST', path, { host: 'evil.example:80', body: good })).status, 403);
    const fromPage = await api('POST', path, { origin: 'http://evil.example', body: good });
    assert.equal(fromPage.status, 403, 'a web page\'s request (DNS rebinding, CSRF) is refused');
    assert.match(fromPage.body.error.message, /bad Origin/);
    const cases: [string, string, string | undefined, number, RegExp][] = [
      ['GET', path, undefined, 405, /POST a JSON answer/],
      ['POST', path, '{not json', 400, /the body is not valid JSON/],
      ['POST', path, JSON.stringify({ decision: 'approved', channel: 'cli', confirmation: 'flag', extra: 1 }), 400, /Unrecognized key/],
      ['POST', path, JSON.stringify({ decision: 'maybe', channel: 'cli', confirmation: 'flag' }), 400, /decision/],
      ['POST', path, JSON.stringify({ decision: 'approved', channel: 'mail' }), 400, /channel must be "cli" or "web"/],
      ['POST', path, JSON.stringify({ decision: 'approved', channel: 'cli' }), 400, /for the person only: the answer must say how the person confirmed it/],
      ['POST', '/api/requests/r-none/respond', good, 404, /No request "r-none"/],
      ['GET', '/api/requests?status=bogus', undefined, 400, /status must be/],
      ['GET', '/api/nothing-here', undefined, 404, /no API route GET \/api\/nothing-here/],
    ];
    for (const [method, p, body, status, msg] of cases) {
      const r = await api(method, p, { body });
      assert.equal(r.status, status, `${method} ${p} ${body}: ${JSON.stringify(r.body)}`);
      assert.match(r.body.error?.message ?? r.body.error, msg);
      await unchanged(a.id);
    }
    const one = await api('GET', `/api/requests/${a.id}`);
    assert.deepEqual([one.status, one.body.request.who, one.body.request.awaiting], [200, 'person', 'person']);
    const done = await api('POST', path, { body: good });
    assert.equal(done.status, 200);
    assert.equal(done.body.request.answered_by, 'person (cli, --as-person)');
    assert.equal((await a.result).value.decision, 'approved');
    await h.call('cancel_agent', { job_id: a.jobId });
  });
});
