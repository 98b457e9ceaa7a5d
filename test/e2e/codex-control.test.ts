// End-to-end: controlling REAL codex children (codex-cli 0.169.0) from an in-process hub against
// the scripted fake Responses API: pause_agent stop + resume_agent continue the same thread,
// message_agent to a running Codex child is queued and delivered by resuming its thread when the
// turn ends, and cancel leaves no process of the agent behind (the sandboxed tool included).
// Ordering comes from the fake's requests (waitForRequest) and gates the test opens.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, waitForJob } from '../helpers/wait.js';
import { codexHubs } from '../helpers/codexHub.js';
import { gate } from '../helpers/gate.js';
import { job, undeliveredTo } from '../helpers/state.js';

const { codexHub } = codexHubs();

/** Pids whose environment carries OVERSEER_AGENT_ID=<jobId>, with their command lines. */
function agentProcesses(jobId: string): { pid: number; cmd: string }[] {
  const marker = `OVERSEER_AGENT_ID=${jobId}`;
  const found: { pid: number; cmd: string }[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (!readFileSync(`/proc/${e}/environ`, 'latin1').split('\0').includes(marker)) continue;
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      if (stat.split(') ')[1]?.[0] === 'Z') continue; // a zombie is gone, only not yet reaped
      found.push({ pid: Number(e), cmd: readFileSync(`/proc/${e}/cmdline`, 'utf8').split('\0').join(' ').trim() });
    } catch {
      /* gone meanwhile, or not ours */
    }
  }
  return found;
}

describe('codex children: pause, resume, messages, cancel', () => {
  test('pause_agent stop interrupts a codex child; resume_agent continues the same thread with the message', async () => {
    const { h, openai } = await codexHub({
      long: (ctx) => {
        if (ctx.turn > 0) return { text: `resumed: ${ctx.prompt}` };
        if (ctx.step === 0) return { text: 'step one', calls: [{ shell: 'echo one > one.txt' }] };
        return { delayMs: 120_000, text: 'never' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:long work slowly', provider: 'codex' })).job_id;
    await openai.waitForRequest((r) => r.script === 'long' && r.step === 1, 60_000);
    const session = (await job(h.hub, id)).session_id;
    assert.ok(session, 'the thread id is recorded before the pause');

    const paused = await h.call('pause_agent', { job_id: id, mode: 'stop' });
    assert.equal(paused.status, 'interrupted');
    assert.equal(paused.session_id, session);
    await openai.waitForRequest((r) => r.script === 'long' && r.step === 1 && r.outcome === 'aborted', 10_000);

    const resumed = await h.call('resume_agent', { job_id: id, message: 'please continue with marker-7731' });
    assert.ok(['queued', 'running'].includes(resumed.status), resumed.status);
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);
    assert.equal(w.done[0].result, 'resumed: please continue with marker-7731');

    const req = openai.requests.find((r) => r.script === 'long' && r.prompt.includes('marker-7731'));
    assert.ok(req, 'the fake got the resume message as the prompt');
    assert.equal(req.headers['thread-id'], session, 'same codex thread');
    const body = JSON.stringify(req.body.input);
    assert.match(body, /@script:long work slowly/, 'the earlier prompt is in the history');
    assert.match(body, /echo one > one\.txt/, 'the earlier tool call is in the history');
    assert.match(body, /turn_aborted/, 'codex recorded the interrupted turn');
    const a = await h.call('get_agent', { job_id: id });
    assert.equal(a.session_id, session);
    assert.deepEqual(a.attempts.map((x: any) => [x.kind, x.status]), [['initial', 'interrupted'], ['resume', 'succeeded']]);
    assert.equal(readFileSync(join(realpathSync(h.project), 'one.txt'), 'utf8'), 'one\n');
  });

  test('message_agent to a running codex child is queued, then delivered by resuming its thread when the turn ends', async () => {
    const turnEnd = gate();
    const { h, openai } = await codexHub({
      busy: async (ctx) => {
        if (ctx.turn > 0) return { text: `got: ${/lead: (.*)/.exec(ctx.prompt)?.[1] ?? ctx.prompt}` };
        await turnEnd.wait;
        return { text: 'first turn done' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:busy do the first part', provider: 'codex' })).job_id;
    await openai.waitForRequest((r) => r.script === 'busy' && r.step === 0, 60_000);
    const session = (await job(h.hub, id)).session_id;

    const m = await h.call('message_agent', { job_id: id, text: 'also handle note-4411' });
    assert.equal(m.delivered, false, 'codex cannot take input mid-turn');
    assert.equal(m.queued, true);
    assert.equal((await job(h.hub, id)).status, 'running');
    turnEnd.open();

    const req = await openai.waitForRequest((r) => r.script === 'busy' && r.prompt.includes('note-4411'), 60_000);
    assert.equal(req.headers['thread-id'], session, 'delivered into the same thread');
    assert.match(JSON.stringify(req.body.input), /first turn done/, 'after the first turn ended');
    const done = await waitForJob(h.hub, id, (j) => j.status === 'succeeded' || j.status === 'failed', 60_000);
    assert.equal(done.status, 'succeeded', done.error ?? '');
    const a = await h.call('get_agent', { job_id: id });
    assert.deepEqual(a.attempts.map((x: any) => [x.kind, x.status]), [['initial', 'succeeded'], ['resume', 'succeeded']]);
    assert.equal(a.session_id, session);
    assert.deepEqual((await undeliveredTo(h.hub, id)), [], 'the message is marked delivered');
    // The job's result is what the agent said last (after handling the message), not the text of
    // the turn that ended before the message was delivered.
    assert.match(a.result, /^got: .*note-4411/);
  });

  test('cancel ends a codex child in the middle of a sandboxed `sleep 60`: no process of the agent remains', async () => {
    const { h, openai } = await codexHub({
      sleeper: (ctx) => (ctx.step === 0
        ? { text: 'sleeping', calls: [{ shell: 'sleep 60' }] }
        : { delayMs: 120_000, text: 'never' }),
    }, { config: { codexSandbox: 'workspace-write' } });
    const id = (await h.call('spawn_agent', { prompt: '@script:sleeper wait a minute', provider: 'codex' })).job_id;
    await openai.waitForRequest((r) => r.script === 'sleeper' && r.step === 0, 60_000);
    const sleeping = await eventually('the agent runs sleep 60', () => agentProcesses(id).find((p) => /(^|\/| )sleep 60$/.test(p.cmd)), 30_000);
    assert.ok(sleeping.pid > 0);
    assert.ok(agentProcesses(id).length >= 2, 'codex and its tool both carry the agent id');

    const t0 = Date.now();
    const res = await h.call('cancel_agent', { job_id: id, reason: 'test' });
    assert.equal(res.status, 'cancelled');
    const left = await eventually('no process of the agent left', () => {
      const p = agentProcesses(id);
      return p.length === 0 ? ([] as { pid: number; cmd: string }[]) : false;
    }, 10_000).catch(() => agentProcesses(id));
    assert.deepEqual(left, [], `left behind: ${JSON.stringify(left)}`);
    assert.ok(Date.now() - t0 < 10_000);
    assert.equal((await job(h.hub, id)).status, 'cancelled');
  });
});
