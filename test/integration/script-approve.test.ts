// approve() in a script (issue 28 point 2): a person-only approval the hub opens for the run. The
// lead cannot answer it; the person's answer is the call's result (true/false); a new hub waits
// for the same request again (no second request), and a cancelled run withdraws it.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { count, request } from '../helpers/state.js';
import { sql } from 'kysely';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

async function hub(dir?: string): Promise<TestHub> {
  const h = await startTestHub({ processes: new ScriptedLauncher(() => ({ resultText: 'done' })), ...(dir ? { dir } : {}) });
  hubs.push(h);
  return h;
}

const pendingRequest = (h: TestHub, runId: string): Promise<string> =>
  eventually('the approval is pending', async () => {
    const c = ((await h.hub.scripts.view(runId))!.calls as any[]).find((x) => x.kind === 'approve' && x.status === 'running');
    return c?.request_id && (await request(h.hub, c.request_id))?.status === 'pending' ? (c.request_id as string) : undefined;
  }, 20_000);
const ended = (h: TestHub, runId: string): Promise<any> =>
  eventually(`run ${runId} ended`, async () => { const v = (await h.hub.scripts.view(runId)); return v && v.status !== 'running' ? v : undefined; }, 20_000);

const SCRIPT = "const ok = await approve('Ship the release?', { rationale: 'all checks passed', risks: 'none known' })\nlog(`approved: ${ok}`)\nreturn ok";

describe('approve() in a script', () => {
  test('reaches the person, not the lead; the person\'s answer is the result; a new hub waits for the same request', async () => {
    const first = await hub();
    const r = await first.call('run_script', { script: SCRIPT });
    const id = await pendingRequest(first, r.run_id);
    const req = (await request(first.hub, id))!;
    assert.equal(req.who, 'person');
    assert.equal(req.summary, 'Ship the release?');
    assert.deepEqual(JSON.parse(req.plan_json!), { rationale: 'all checks passed', risks: 'none known' });
    const byLead = await first.call('respond', { request_id: id, decision: 'approved' }).then(() => null, (e: Error) => e.message);
    assert.match(String(byLead), /person/i, 'the lead cannot answer a script\'s approval');
    assert.equal((await request(first.hub, id))!.status, 'pending');

    const dir = first.dir;
    await first.stop({ keep: true });
    hubs.splice(hubs.indexOf(first), 1);
    const second = await hub(dir);
    assert.equal(await pendingRequest(second, r.run_id), id, 'the new hub waits for the same request');
    await second.hub.requests.answerAsPerson(id, { decision: 'approved' }, 'person:test');
    const v = await ended(second, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.equal(v.result, true);
    assert.equal(await count(second.hub, sql`SELECT COUNT(*) AS n FROM requests WHERE job_id = ${r.run_id}`), 1, 'one request, not one per hub');
  });

  test('the lead\'s wait_for_agents hears once that the run waits for the person', async () => {
    const h = await startTestHub({ processes: new ScriptedLauncher((prompt) => (prompt.includes('TASK:hang') ? { hang: true } : { resultText: 'done' })) });
    hubs.push(h);
    const other = await h.call('spawn_agent', { prompt: 'TASK:hang', title: 'unrelated' });
    const waiting = h.call('wait_for_agents', { job_ids: [other.job_id], timeout_s: 60 });
    const r = await h.call('run_script', { title: 'release', script: SCRIPT });
    const w = await waiting;
    assert.equal(w.timed_out, false, 'the approval woke the wait');
    const items = (w.attention as any[]).filter((a) => a.run_id === r.run_id);
    assert.equal(items.length, 1, JSON.stringify(w.attention));
    assert.equal(items[0].kind, 'run_needs_person');
    assert.equal(items[0].request_id, await pendingRequest(h, r.run_id));
    const again = await h.call('wait_for_agents', { job_ids: [other.job_id], timeout_s: 1 });
    assert.deepEqual((again.attention as any[]).filter((a) => a.run_id === r.run_id), [], 'told once');
  });

  test('a rejection is false; a cancelled run withdraws its pending approval', async () => {
    const h = await hub();
    const a = await h.call('run_script', { script: SCRIPT });
    await h.hub.requests.answerAsPerson(await pendingRequest(h, a.run_id), { decision: 'rejected' }, 'person:test');
    assert.equal((await ended(h, a.run_id)).result, false);

    const b = await h.call('run_script', { script: SCRIPT });
    const id = await pendingRequest(h, b.run_id);
    await h.call('cancel_run', { run_id: b.run_id });
    assert.equal((await request(h.hub, id))!.status, 'cancelled');
    assert.equal((await ended(h, b.run_id)).status, 'cancelled');
  });
});

describe('a new hub that cannot continue an interrupted agent', () => {
  test('fails that call (catchable, code interrupted) instead of waiting for ever', async () => {
    const first = await startTestHub({ processes: new ScriptedLauncher(() => ({ hang: true })) });
    hubs.push(first);
    const r = await first.call('run_script', { script: "try { return await agent('TASK:long') } catch (e) { return [e.name, e.code] }" });
    await eventually('the agent runs', async () => (((await first.hub.scripts.view(r.run_id))!.calls as any[])[0]?.job_status === 'running' ? true : undefined), 20_000);
    const dir = first.dir;
    await first.stop({ keep: true });
    hubs.splice(hubs.indexOf(first), 1);
    // The house budget is spent by the time the new hub starts: resuming the agent is refused.
    const second = await startTestHub({ processes: new ScriptedLauncher(() => ({ resultText: 'never' })), dir, config: { budgetUsd: 0.000001 } });
    hubs.push(second);
    const v = await ended(second, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['AgentFailed', 'interrupted']);
  });
});
