// End to end (real hub, real claude children on the fake model): a lead that stopped waiting
// (the person pressed Esc during wait_for_agents) hears at its next Overseer call what ended and
// what opened meanwhile — once, and not what a result already showed it (issue 10 point 5).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith } = scriptedHubs();

test('since you last looked: jobs that ended and requests that opened after an abandoned wait', { timeout: 120_000 }, async () => {
  const go = gate(90_000);
  const h = await hubWith({
    worker: async (ctx) => {
      if (ctx.step === 0) { await go.wait; return finishStep('built the parser\nand more'); }
      return { text: 'done' };
    },
    asker: async (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'drop the legacy table', who: 'person', timeout_s: 120 } }] };
      return { text: 'done' };
    },
  });
  assert.equal((await h.call('list_notes', {})).since_you_last_looked, undefined, 'nothing to tell on the first look');
  const id = (await h.call('spawn_agent', { prompt: '@script:worker', title: 'Parser' })).job_id;
  await h.fake.waitForRequest((r) => r.script === 'worker' && r.step === 0, 60_000);

  // The person presses Esc: the wait is cancelled, its result never delivered.
  const esc = new AbortController();
  const waiting = h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 }, { signal: esc.signal }).catch((e: Error) => e);
  esc.abort();
  assert.ok((await waiting) instanceof Error, 'the abandoned wait did not return a result');
  go.open();
  await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 60_000);

  const next = await h.call('list_notes', {});
  const d = next.since_you_last_looked;
  assert.ok(d, `no digest in ${JSON.stringify(next)}`);
  assert.equal(d.ended.length, 1);
  assert.deepEqual(d.ended[0], { job_id: id, title: 'Parser', status: 'succeeded', line: 'built the parser' });
  assert.equal((await h.call('list_notes', {})).since_you_last_looked, undefined, 'told once');

  // A request opened while the lead looked elsewhere; a result that shows it leaves it out.
  const askerId = (await h.call('spawn_agent', { prompt: '@script:asker', title: 'Asker' })).job_id;
  const req = await new Promise<string>((resolve) => {
    const check = async (): Promise<void> => {
      const r = await row(h.hub, sql<{ id: string }>`SELECT id FROM requests WHERE job_id = ${askerId} AND status = 'pending'`);
      if (r) { off(); resolve(r.id); }
    };
    const off = h.hub.ctx.bus.on('request', () => void check());
    void check();
  });
  const after = await h.call('list_notes', {});
  assert.equal(after.since_you_last_looked?.requests?.[0]?.request_id, req, JSON.stringify(after));
  assert.equal(after.since_you_last_looked.requests[0].summary, 'drop the legacy table');
  const listed = await h.call('list_requests', {});
  assert.equal(listed.since_you_last_looked, undefined, 'already told; and list_requests shows it anyway');
  await h.call('cancel_agent', { job_id: askerId });
});
