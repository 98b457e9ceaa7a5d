// End-to-end (built CLI as a separate process, hub over HTTP with the lead token, real claude
// children on the fake model): `overseer msg|pause|resume|cancel|spawn|wait` act on the crew as
// the lead's tools do, with their exit codes (issue 10 point 2).
import { before, describe, test } from 'node:test';
import { buildCli, overseer as runCli } from '../helpers/cli.js';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import type { TestHub } from '../helpers/hub.js';
import { job } from '../helpers/state.js';

const { hubWith } = scriptedHubs();
before(buildCli);

/** The built CLI against this hub's state. */
async function overseer(h: { home: string; project: string }, args: string[], onStdout?: (all: string) => void): Promise<{ code: number; out: string; err: string }> {
  const r = await runCli(h.project, args, { OVERSEER_HOME: h.home }, onStdout);
  return { code: r.code ?? -1, out: r.stdout, err: r.stderr };
}

describe('CLI verbs', () => {
  test('msg, pause, resume, cancel act on a running agent through the hub', { timeout: 240_000 }, async () => {
    const done = gate();
    const stay = gate();
    let h!: TestHub;
    h = await hubWith({
      worker: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'working' } }] };
        if (ctx.step === 1) { await done.wait; return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'still working' } }] }; }
        return { text: 'done' };
      },
      holdon: async (ctx) => {
        if (ctx.step === 0) { await stay.wait; return finishStep('held on'); }
        return { text: 'done' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:worker', title: 'Worker' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'worker' && r.step === 1, 60_000);

    const msg = await overseer(h, ['msg', id, 'hello from the person']);
    assert.equal(msg.code, 0, msg.err);
    assert.match(msg.out, new RegExp(`delivered to ${id}`));
    done.open();
    await h.fake.waitForRequest((r) => r.script === 'worker' && JSON.stringify(r.body).includes('hello from the person'), 60_000);

    const id2 = (await h.call('spawn_agent', { prompt: '@script:holdon', title: 'Worker 2' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'holdon' && r.step === 0, 60_000);
    const paused = await overseer(h, ['pause', id2, '--json']);
    assert.equal(paused.code, 0, paused.err);
    assert.equal(JSON.parse(paused.out).status, 'frozen');
    assert.equal((await job(h.hub, id2)).status, 'frozen');
    const resumed = await overseer(h, ['resume', id2]);
    assert.equal(resumed.code, 0, resumed.err);
    assert.match(resumed.out, new RegExp(`${id2} running`));
    const cancelled = await overseer(h, ['cancel', id2, '--reason', 'the person changed their mind']);
    assert.equal(cancelled.code, 0, cancelled.err);
    assert.equal(cancelled.out.trim(), `${id2} cancelled`);
    const row = await waitForJob(h.hub, id2, (r) => r.status === 'cancelled', 30_000);
    assert.match(row.error!, /the person changed their mind/);
    stay.open();
  });

  test('spawn --wait and wait: exit 0 all succeeded, 1 one failed, 124 on timeout; refusals exit 2; no hub exits 1', { timeout: 240_000 }, async () => {
    const hang = gate();
    const h = await hubWith({
      quick: async (ctx) => (ctx.step === 0 ? finishStep('quick done') : { text: 'done' }),
      broken: async (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__finish', input: { result: 'could not', outcome: 'failure' } }] } : { text: 'done' }),
      slow: async (ctx) => { if (ctx.step === 0) await hang.wait; return ctx.step === 0 ? finishStep('slow done') : { text: 'done' }; },
    });
    const ok = await overseer(h, ['spawn', '--prompt', '@script:quick', '--title', 'Quick', '--wait', '--json']);
    assert.equal(ok.code, 0, ok.err + ok.out);
    const okJson = JSON.parse(ok.out);
    assert.equal(okJson.done[0].status, 'succeeded');
    assert.equal((await job(h.hub, okJson.spawned.job_id)).status, 'succeeded');
    // Acting on a job that ended meanwhile says so (and changes nothing).
    const lateCancel = await overseer(h, ['cancel', okJson.spawned.job_id]);
    assert.equal(lateCancel.code, 0, lateCancel.err);
    assert.equal(lateCancel.out.trim(), `${okJson.spawned.job_id} had already ended (succeeded): nothing to cancel`);
    assert.equal((await job(h.hub, okJson.spawned.job_id)).status, 'succeeded');
    const lateMsg = await overseer(h, ['msg', okJson.spawned.job_id, 'are you there?']);
    assert.equal(lateMsg.code, 0, lateMsg.err);
    assert.match(lateMsg.out, new RegExp(`${okJson.spawned.job_id} has ended \\(succeeded\\): the message is kept and reaches it only if it is resumed`));

    const broken = (await h.call('spawn_agent', { prompt: '@script:broken', title: 'Broken' })).job_id;
    const failed = await overseer(h, ['wait', broken]);
    assert.equal(failed.code, 1, failed.err + failed.out);
    assert.match(failed.out, new RegExp(`${broken}  failed`));

    const slow = (await h.call('spawn_agent', { prompt: '@script:slow', title: 'Slow' })).job_id;
    const late = await overseer(h, ['wait', slow, '--timeout', '1']);
    assert.equal(late.code, 124, late.err + late.out);
    assert.match(late.out, /timed out; still running/);
    hang.open();

    const refused = await overseer(h, ['cancel', 'j-00000000']);
    assert.equal(refused.code, 2, refused.err);
    assert.match(refused.err, /j-00000000/);
    const badTimeout = await overseer(h, ['wait', slow, '--timeout', 'soon']);
    assert.equal(badTimeout.code, 2);
    assert.match(badTimeout.err, /--timeout "soon"/);

    const nowhere = await overseer({ home: mkdtempSync(join(tmpdir(), 'ovs-nohub-')), project: h.project }, ['msg', slow, 'hi']);
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.err, /No Overseer hub is running/);
  });
});

describe('logs --all', () => {
  test('every live job\'s transcript interleaved, prefixed by its title, with each verdict; -f ends when none is live', { timeout: 240_000 }, async () => {
    const go = gate();
    const h = await hubWith({
      alpha: async (ctx) => { if (ctx.step === 0) { await go.wait; return finishStep('alpha finished its part'); } return { text: 'alpha done' }; },
      beta: async (ctx) => { if (ctx.step === 0) { await go.wait; return finishStep('beta finished its part'); } return { text: 'beta done' }; },
    });
    const a = (await h.call('spawn_agent', { prompt: '@script:alpha', title: 'Alpha' })).job_id;
    const b = (await h.call('spawn_agent', { prompt: '@script:beta', title: 'Beta' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'alpha', 60_000);
    await h.fake.waitForRequest((r) => r.script === 'beta', 60_000);
    let opened = false;
    const r = await overseer(h, ['logs', '--all', '-f'], (all) => {
      // Both are being followed (their attempt headers are out): let them finish.
      if (!opened && all.includes(`[Alpha ${a}]`) && all.includes(`[Beta ${b}]`)) { opened = true; go.open(); }
    });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, new RegExp(`\\[Alpha ${a}\\] .*alpha finished its part`));
    assert.match(r.out, new RegExp(`\\[Beta ${b}\\] .*beta finished its part`));
    assert.match(r.out, new RegExp(`\\[Alpha ${a}\\] overseer: job ${a} succeeded`));
    assert.match(r.out, new RegExp(`\\[Beta ${b}\\] overseer: job ${b} succeeded`));

    const none = await overseer(h, ['logs', '--all']);
    assert.equal(none.code, 0);
    assert.match(none.out, /no job is running, queued or waiting/);
    const both = await overseer(h, ['logs', a, '--all']);
    assert.equal(both.code, 2);
    assert.match(both.err, /not both/);
  });
});
