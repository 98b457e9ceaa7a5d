// End-to-end: what a real claude child spends is live and never lost. The fake model reports
// its own usage per call; the hub sums each assistant message once as the stream arrives, so a
// running child shows its spending, a child cancelled while the model hangs keeps what its
// finished calls cost, the retry diagnosis run is recorded against the job, and the child's
// stderr is kept on disk beside the transcript.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { startTestHub } from '../helpers/hub.js';
import { rm } from 'node:fs/promises';
import { claudeBin, makeTempDir } from '../helpers/claude.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { gate } from '../helpers/gate.js';
import { job } from '../helpers/state.js';

const { hubWith, cleanups } = scriptedHubs();

/** claude-opus-5-5 (the CLI's default model): $4 in, $20 out per 1M tokens. */
const opus55 = (input: number, output: number): number => (input * 4 + output * 20) / 1e6;
const near = (a: number, b: number): boolean => Math.abs(a - b) < 1e-9;

describe('live and kept cost of claude children', () => {
  test('a child cancelled while the model hangs keeps the cost and tokens of its N finished calls; its spending shows while it runs', async () => {
    const hang = gate();
    const N = 3;
    const usage = (i: number) => ({ input_tokens: 1000 + i, output_tokens: 50 + i });
    const h = await hubWith({
      spend: async (ctx) => {
        if (ctx.step < N) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: `call ${ctx.step}` } }], usage: usage(ctx.step) };
        await hang.wait;
        return { text: 'too late' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:spend spend a little' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'spend' && r.step === N, 60_000);
    const input = [0, 1, 2].reduce((s, i) => s + usage(i).input_tokens, 0);
    const output = [0, 1, 2].reduce((s, i) => s + usage(i).output_tokens, 0);

    // Still running, blocked on call N+1: the calls so far are in the database already.
    const live = await eventually('the running job shows its N calls', async () => {
      const j = await job(h.hub, id);
      return j.input_tokens === input && j.output_tokens === output ? j : undefined;
    }, 30_000);
    assert.equal(live.status, 'running');
    assert.ok(near(live.cost_usd, opus55(input, output)), `live cost ${live.cost_usd}`);
    const listed = (await h.call('list_agents', {})).agents.find((a: any) => a.job_id === id);
    assert.ok(listed, 'list_agents lists it');
    assert.ok(listed.cost_usd > 0, 'list_agents shows the spending of a running job');

    const res = await h.call('cancel_agent', { job_id: id, reason: 'test' });
    assert.equal(res.status, 'cancelled');
    hang.open();
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.input_tokens, input, 'tokens = the sum the fake reported for the N calls');
    assert.equal(a.output_tokens, output, 'output tokens are the final count of each call (message_delta), not the 1 of message_start');
    assert.ok(a.cost_usd > 0 && near(a.cost_usd, opus55(input, output)), `cost ${a.cost_usd}`);
    assert.equal(a.turns, N);
    assert.equal(a.attempts[0].input_tokens, input);
  });

  test('a finished child is reconciled to claude\'s own result; the diagnosis run of retry: analyze is recorded against the job', async () => {
    const h = await hubWith({
      task: (ctx) => {
        if (ctx.prompt.includes('Diagnose why')) return { text: 'Diagnosis: try again', usage: { input_tokens: 500, output_tokens: 60 } };
        if (ctx.prompt.includes('Previous attempt')) return { text: 'done', usage: { input_tokens: 300, output_tokens: 30 } };
        return { error: { status: 400, message: 'scripted failure' } };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:task do it', retry: 'analyze' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.input_tokens, 300);
    assert.equal(a.output_tokens, 30);
    assert.ok(near(a.cost_usd, opus55(300, 30)), `job cost ${a.cost_usd}`);
    assert.equal(a.hub_usage.length, 1, JSON.stringify(a.hub_usage));
    const d = a.hub_usage[0];
    assert.deepEqual([d.kind, d.attempt, d.model, d.input_tokens, d.output_tokens], ['diagnosis', 1, 'claude-opus-5-5', 500, 60]);
    assert.ok(near(d.cost_usd, opus55(500, 60)), `diagnosis cost ${d.cost_usd}`);
    assert.ok(near(a.total_cost_usd, opus55(300, 30) + opus55(500, 60)), `total ${a.total_cost_usd}`);
  });

  test('the KB triage run for a child\'s learning is recorded against that child', async () => {
    const h = await startTestHub({
      config: { kbTriage: true },
      scripts: {
        reporter: (ctx) => (ctx.step === 0
          ? { tools: [{ name: 'mcp__overseer__report_learnings', input: { learnings: [{ title: 'Node fetch ignores HTTP_PROXY', content: 'Node 20 global fetch ignores HTTP_PROXY; use an undici ProxyAgent. @script:tri' }] } }] }
          : { text: 'reported' }),
        tri: [{ tools: [{ name: 'StructuredOutput', input: { scope: 'project', reason: 'repo specific' } }], usage: { input_tokens: 700, output_tokens: 40 } }],
      },
    });
    cleanups.push(() => h.stop());
    const id = (await h.call('spawn_agent', { prompt: '@script:reporter share what you learned' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);
    const a = await h.call('get_agent', { job_id: id });
    const triage = a.hub_usage.filter((u: any) => u.kind === 'triage');
    assert.equal(triage.length, 1, JSON.stringify(a.hub_usage));
    assert.deepEqual([triage[0].model, triage[0].input_tokens, triage[0].output_tokens], ['claude-haiku-4-5', 700, 40]);
    assert.ok(near(triage[0].cost_usd, (700 * 1 + 40 * 5) / 1e6), `triage cost ${triage[0].cost_usd}`);
    assert.ok(near(a.total_cost_usd, a.cost_usd + triage[0].cost_usd));
  });

  test('the child\'s stderr is kept beside its transcript and named in get_agent', async () => {
    // A wrapper that writes to stderr, then runs the real claude.
    const dir = await makeTempDir('ovs-wrap');
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const wrapper = join(dir, 'claude-wrapper.sh');
    writeFileSync(wrapper, `#!/bin/sh\necho "stderr-marker-from-the-child" >&2\nexec '${claudeBin()}' "$@"\n`);
    chmodSync(wrapper, 0o755);
    const h = await startTestHub({ scripts: { hi: [{ text: 'hello' }] }, config: { claudeBin: wrapper } });
    cleanups.push(() => h.stop());
    const id = (await h.call('spawn_agent', { prompt: '@script:hi' })).job_id;
    await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 60_000);
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.stderr_path, join(h.home, 'agents', id, 'attempt-1.stderr'));
    assert.match(readFileSync(a.stderr_path, 'utf8'), /stderr-marker-from-the-child/);
  });
});
