// End-to-end: the start gate (src/launch/startGate.ts) with real claude children. Three children
// spawned at once with startConcurrency 1: all three run to completion, the second and third
// wait for a start slot (their events say so, with their place in the line), and they get their
// slots in the order they were spawned.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { events, job } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });


test('startConcurrency 1: three children spawned at once start one after the other, in order, and all succeed', { timeout: 180_000 }, async () => {
  const h = await startTestHub({ scripts: { hi: [{ text: 'done' }] }, config: { startConcurrency: 1 } });
  hubs.push(h);
  const ids = (await Promise.all(['one', 'two', 'three'].map((n) => h.call('spawn_agent', { prompt: `@script:hi say hi (${n})`, title: n })))).map((r) => r.job_id as string);
  const w = await h.call('wait_for_agents', { job_ids: ids, timeout_s: 150 });
  assert.deepEqual(w.done.map((d: { status: string }) => d.status), ['succeeded', 'succeeded', 'succeeded'], JSON.stringify(w));

  // The order the runner started their attempts in (the spawns ran concurrently).
  const logs = new Map(await Promise.all(ids.map(async (id) => [id, await events(h.hub, id)] as const)));
  const firstOf = (id: string, kind: string) => logs.get(id)!.find((e) => e.kind === kind);
  const order = [...ids].sort((a, b) => firstOf(a, 'started')!.id - firstOf(b, 'started')!.id);
  // The first took the free slot; the others waited behind it, each one place further back.
  assert.equal(firstOf(order[0]!, 'start_wait'), undefined, 'the first child did not wait');
  assert.deepEqual([1, 2].map((i) => JSON.parse(firstOf(order[i]!, 'start_wait')!.data_json!).ahead), [0, 1]);
  // Slots given in that order: the second's before the third's.
  const slots = [1, 2].map((i) => firstOf(order[i]!, 'start_slot')!);
  assert.ok(slots[0]!.id < slots[1]!.id, 'the second child got its slot before the third');
  // The status line was cleared once each started.
  for (const id of ids) assert.equal((await job(h.hub, id)).status_message, null);
  // Each child really reached the model.
  for (const n of ['one', 'two', 'three']) {
    assert.ok(h.fake.requests.some((r) => JSON.stringify(r.body.messages).includes(`say hi (${n})`)), `child ${n} sent a request`);
  }
});
