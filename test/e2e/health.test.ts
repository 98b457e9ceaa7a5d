// End to end (real hub, real claude children on the fake model): the health monitor raises
// `stalled` for a child whose model stops answering, through wait_for_agents' attention, once;
// time a child spends inside Overseer's own blocking tools is not idleness; reactions nudge,
// freeze and cancel; the watchdog settles a child whose exit never arrives (issue 10 point 3).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { claudeBin, makeTempDir } from '../helpers/claude.js';
import type { TestHub } from '../helpers/hub.js';
import type { WarningRow } from '../../src/store/warnings.js';
import { events as eventRows, job, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith, cleanups } = scriptedHubs();

const warningsOf = (h: TestHub, jobId: string): Promise<WarningRow[]> =>
  rows(h.hub, sql<WarningRow>`SELECT * FROM job_warnings WHERE job_id = ${jobId} ORDER BY id`);

/** Resolves once `pred` holds for the job's warnings; re-checked on the hub's warning events. */
function waitForWarnings(h: TestHub, jobId: string, pred: (ws: WarningRow[]) => boolean, timeoutMs = 30_000): Promise<WarningRow[]> {
  return new Promise((resolve, reject) => {
    let finished = false;
    const check = async (): Promise<void> => {
      const ws = await warningsOf(h, jobId);
      if (finished || !pred(ws)) return;
      done();
      resolve(ws);
    };
    const off = h.hub.ctx.bus.on('warning', () => void check().catch(reject));
    const t = setTimeout(() => { done(); void warningsOf(h, jobId).then((ws) => reject(new Error(`timed out waiting for warnings of ${jobId}: ${JSON.stringify(ws)}`)), reject); }, timeoutMs);
    const done = (): void => { finished = true; off(); clearTimeout(t); };
    void check().catch(reject);
  });
}

const fast = { stalledS: 2, checkMs: 200 };

describe('health monitor', () => {
  test('a child whose model stops answering is `stalled` within the configured time, through wait_for_agents once; a child inside watch_notes is not', { timeout: 120_000 }, async () => {
    const answer = gate(90_000);
    const h = await hubWith({
      stuck: async (ctx) => {
        if (ctx.step === 0) { await answer.wait; return finishStep('answered at last'); }
        return { text: 'done' };
      },
      blocked: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__watch_notes', input: { keys: ['never/written'], timeout_s: 10 } }] };
        if (ctx.step === 1) return finishStep('watched for 10 s');
        return { text: 'done' };
      },
      // 4 s, not 2: on a loaded machine a claude child alone can take 2 s between its stream events
      // outside any tool call (seen in CI); the watch_notes call lasts 10 s, well past it.
    }, { health: { ...fast, stalledS: 4 } as never });
    const blocked = (await h.call('spawn_agent', { prompt: '@script:blocked', title: 'Blocked in watch_notes' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'blocked' && r.step === 0, 60_000);
    // The stall is measured from the child's last output, which came after its spawn: the warning
    // cannot come sooner than the threshold after the spawn (a reference that load cannot move; the
    // model request is a later one, which a starved child may send long after its last output).
    const spawnedAt = Date.now();
    const stuck = (await h.call('spawn_agent', { prompt: '@script:stuck', title: 'Stuck model' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'stuck' && r.step === 0, 60_000);

    const w = await h.call('wait_for_agents', { job_ids: [stuck, blocked], timeout_s: 60 });
    const waited = Date.now() - spawnedAt;
    assert.equal(w.timed_out, false);
    const item = w.attention.find((a: any) => a.kind === 'warning');
    assert.ok(item, `no warning in attention: ${JSON.stringify(w.attention)}`);
    assert.equal(item.warning, 'stalled');
    assert.equal(item.job_id, stuck);
    assert.equal(item.title, 'Stuck model');
    assert.match(item.detail, /no output for \d+s \(threshold 4s\)/);
    assert.ok(waited >= 4000 && waited < 20_000, `stalled came ${waited} ms after the spawn (threshold 4 s, checked every 200 ms)`);

    const got = await h.call('get_agent', { job_id: stuck });
    assert.equal(got.warnings[0].kind, 'stalled');
    const listed = await h.call('list_agents', {});
    assert.equal(listed.agents.find((a: any) => a.job_id === stuck).warnings[0].kind, 'stalled');

    // Once per warning: the next wait does not return it again.
    const again = await h.call('wait_for_agents', { job_ids: [stuck], timeout_s: 1 });
    assert.equal(again.timed_out, true);
    assert.equal(again.attention.filter((a: any) => a.kind === 'warning').length, 0);

    // The watch_notes child waited 10 s on Overseer with no output: never stalled.
    await h.fake.waitForRequest((r) => r.script === 'blocked' && r.step === 1, 60_000);
    await waitForJob(h.hub, blocked, (j) => j.status === 'succeeded', 60_000);
    assert.deepEqual((await warningsOf(h, blocked)).map((x) => x.kind), []);

    // Output again clears the warning; the job ends with none open.
    answer.open();
    await waitForJob(h.hub, stuck, (j) => j.status === 'succeeded', 60_000);
    const ws = await waitForWarnings(h, stuck, (all) => all.length > 0 && all.every((x) => x.cleared_at !== null));
    assert.equal(ws[0]!.kind, 'stalled');
    assert.ok(ws[0]!.lead_seen_at, 'the lead saw it');
    const events = (await eventRows(h.hub, stuck, 50)).map((e) => e.kind);
    assert.ok(events.includes('warning'), events.join(','));
    assert.ok((await job(h.hub, stuck)).last_event_at, 'last_event_at persisted');
  });

  test('reactions: stalled → message nudges the agent, turns_high → freeze, stalled → cancel', { timeout: 150_000 }, async () => {
    const release = gate(90_000);
    let finished = false;
    const h = await hubWith({
      nudged: async (ctx) => {
        if (ctx.step === 0) { await release.wait; return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'back' } }] }; }
        if (finished) return { text: 'done' };
        if (JSON.stringify(ctx.body).includes('NUDGE stalled')) { finished = true; return finishStep('saw the nudge'); }
        if (ctx.step < 6) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: `waiting ${ctx.step}` } }] };
        return finishStep('never saw the nudge');
      },
    }, { health: { ...fast, reactions: { stalled: 'message' }, nudge: 'NUDGE {warning}: {detail}' } as never });
    const nudged = (await h.call('spawn_agent', { prompt: '@script:nudged', title: 'Nudged' })).job_id;
    await waitForWarnings(h, nudged, (ws) => ws.some((x) => x.kind === 'stalled' && x.reaction === 'message'));
    release.open();
    const row = await waitForJob(h.hub, nudged, (j) => j.status === 'succeeded', 60_000);
    assert.equal(row.result, 'saw the nudge');

    const hold = gate(90_000);
    const h2 = await hubWith({
      counter: async (ctx) => {
        if (ctx.step < 4) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: `turn ${ctx.step}` } }] };
        await hold.wait;
        return finishStep('done counting');
      },
      stuck2: async (ctx) => { if (ctx.step === 0) await hold.wait; return finishStep('late'); },
      // 6 s: the counter's turns must each come within it even on a loaded machine (at 3 s a starved
      // child was cancelled as stalled between two turns, before turns_high).
    }, { health: { ...fast, stalledS: 6, reactions: { turns_high: 'freeze', stalled: 'cancel' } } as never });
    const counter = (await h2.call('spawn_agent', { prompt: '@script:counter', title: 'Counter', max_turns: 5 })).job_id;
    const frozen = await waitForJob(h2.hub, counter, (j) => j.status === 'frozen', 60_000);
    assert.ok(frozen.turns >= 4, `frozen at turn ${frozen.turns}`);
    assert.equal((await warningsOf(h2, counter))[0]!.kind, 'turns_high');
    const stuck2 = (await h2.call('spawn_agent', { prompt: '@script:stuck2', title: 'Stuck 2' })).job_id;
    const cancelled = await waitForJob(h2.hub, stuck2, (j) => j.status === 'cancelled', 60_000);
    assert.match(cancelled.error!, /health warning stalled: no output for/);
    await h2.call('cancel_agent', { job_id: counter });
    await waitForJob(h2.hub, counter, (j) => j.status === 'cancelled', 30_000);
    hold.open();
  });

  test('the watchdog settles a child whose process ended while a descendant holds its output pipe', { timeout: 120_000 }, async () => {
    // A wrapper leaves a sleeper holding stdout: the exit event never comes by itself.
    const dir = await makeTempDir('ovs-watchdog');
    cleanups.push(async () => undefined);
    const wrapper = join(dir, 'claude-with-sleeper');
    writeFileSync(wrapper, `#!/bin/sh\nsleep 600 &\nexec ${JSON.stringify(claudeBin())} "$@"\n`);
    chmodSync(wrapper, 0o755);
    const h = await hubWith({
      quick: async (ctx) => (ctx.step === 0 ? finishStep('quick and done') : { text: 'done' }),
    }, { claudeBin: wrapper, confine: 'off', health: { checkMs: 200 } as never });
    const id = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'Quick' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'quick' && r.step === 1, 60_000);
    const t0 = Date.now();
    const row = await waitForJob(h.hub, id, (j) => j.status !== 'running' && j.status !== 'queued', 30_000);
    const took = Date.now() - t0;
    assert.equal(row.status, 'succeeded', row.error ?? '');
    assert.equal(row.result, 'quick and done');
    assert.ok(took < 10_000, `settled ${took} ms after the last model call`);
    assert.ok((await eventRows(h.hub, id, 50)).some((e) => e.kind === 'process_lost'), 'process_lost recorded');
  });
});
