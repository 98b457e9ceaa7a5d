// Integration: wait_for_agents as a blocking tool — progress notifications while it waits,
// early return with `attention` when an awaited agent opens a request, and a clean stop when
// the caller cancels the request (no listener left behind on the hub's bus).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { sql } from 'kysely';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

async function hubWithHang(): Promise<{ h: TestHub; id: string }> {
  const h = await startTestHub({ scripts: { hang: [{ delayMs: 120_000, text: 'never' }] }, progressEveryMs: 40 });
  hubs.push(h);
  const id = (await h.call('spawn_agent', { prompt: '@script:hang' })).job_id as string;
  await waitForJob(h.hub, id, (j) => j.status === 'running');
  return { h, id };
}

const listeners = (h: TestHub): number => (h.hub.ctx.bus as unknown as { ee: { listenerCount(e: string): number } }).ee.listenerCount('job');

describe('wait_for_agents as a blocking tool', () => {
  test('sends progress notifications while it waits, then times out honestly', async () => {
    const { h, id } = await hubWithHang();
    const seen: unknown[] = [];
    const r = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 0.5 }, { onprogress: (p) => seen.push(p) });
    assert.equal(r.timed_out, true);
    assert.deepEqual(r.pending, [id]);
    assert.ok(seen.length >= 3, `got ${seen.length} progress notifications`);
    const first = seen[0] as { progress: number; total: number; message: string };
    assert.equal(first.total, 1);
    assert.match(first.message, /0\/1 done/);
    await h.call('cancel_agent', { job_id: id });
  });

  test('returns early with attention when an awaited agent opens a request', async () => {
    const { h, id } = await hubWithHang();
    const before = listeners(h);
    const pending = h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    // Stand-in for issue #3's request_approval: a pending request row plus its bus event.
    await sql`INSERT INTO requests (id, job_id, kind, summary, status, created_at) VALUES ('r-1', ${id}, 'approval', 'may I delete build/?', 'pending', ${Date.now()})`.execute(h.hub.ctx.sql.db);
    h.hub.ctx.bus.emit('request', { jobId: id, requestId: 'r-1' });
    const r = await pending;
    assert.equal(r.timed_out, false);
    assert.deepEqual(r.pending, [id]);
    assert.deepEqual(r.attention.map((a: any) => [a.request_id, a.job_id, a.kind, a.summary]), [['r-1', id, 'approval', 'may I delete build/?']]);
    assert.equal(listeners(h), before, 'the wait unsubscribed');
    await h.call('cancel_agent', { job_id: id });
  });

  test('a cancelled request stops the wait and leaves no listener behind', async () => {
    const { h, id } = await hubWithHang();
    const before = listeners(h);
    const ac = new AbortController();
    const pending = h.call('wait_for_agents', { job_ids: [id], timeout_s: 600 }, { signal: ac.signal });
    await waitForBus(h, before + 1); // the wait has subscribed
    ac.abort();
    await assert.rejects(pending);
    await waitForBus(h, before);
    assert.equal(listeners(h), before);
    await h.call('cancel_agent', { job_id: id });
  });
});

/** The hub handles the cancellation notification asynchronously: wait until its listener is gone. */
async function waitForBus(h: TestHub, count: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (listeners(h) !== count) {
    if (Date.now() > deadline) throw new Error(`bus still has ${listeners(h)} listeners, expected ${count}`);
    await new Promise((r) => setImmediate(r));
  }
}
