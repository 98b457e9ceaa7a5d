// The lead's wait_for_agents hears of its script runs (issue 28 point 6): a run that ends wakes a
// wait on unrelated agents with one `run_ended` item (run id, title, status, the error with its
// line), told once — the next wait does not repeat it, nor does a new hub on the same state.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher, type TurnScript } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { gate, type Gate } from '../helpers/gate.js';

const hubs: TestHub[] = [];
const gates: Gate[] = [];
after(async () => {
  for (const g of gates) g.open();
  for (const h of hubs.reverse()) await h.stop().catch(() => undefined);
});

const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

async function setup(script: TurnScript, dir?: string): Promise<TestHub> {
  const h = await startTestHub({ processes: new ScriptedLauncher(script), ...(dir ? { dir } : {}) });
  hubs.push(h);
  return h;
}

describe('script runs in wait_for_agents attention', () => {
  test('a run that ends wakes the lead\'s wait once, with its id, title, status and error line', async () => {
    const hang = gate(60_000);
    const step = gate(60_000);
    gates.push(hang, step);
    const h = await setup(async (prompt) => {
      const t = task(prompt);
      if (t === 'hang') await hang.wait;
      if (t === 'step') await step.wait;
      return t === 'bad' ? { resultText: 'broke', isError: true } : { resultText: `did ${t}` };
    });
    const other = await h.call('spawn_agent', { prompt: 'TASK:hang', title: 'unrelated' });
    const run = await h.call('run_script', { title: 'two steps', script: `await agent('TASK:step')\n\nawait agent('TASK:bad')\nreturn 1` });
    await eventually('the step agent running', async () => (((await h.hub.scripts.view(run.run_id))!.calls as any[]).some((c) => c.job_status === 'running') ? true : undefined), 20_000);
    // A wait on an unrelated agent, started while the run is still running.
    const t0 = Date.now();
    const waiting = h.call('wait_for_agents', { job_ids: [other.job_id], timeout_s: 60 });
    step.open();
    const r = await waiting;
    assert.equal(r.timed_out, false, 'the run\'s end woke the wait');
    assert.ok(Date.now() - t0 < 30_000);
    assert.deepEqual(r.pending, [other.job_id]);
    const items = (r.attention as any[]).filter((a) => a.run_id === run.run_id);
    assert.equal(items.length, 1, JSON.stringify(r.attention));
    assert.equal(items[0].kind, 'run_ended');
    assert.equal(items[0].title, 'two steps');
    assert.equal(items[0].status, 'failed');
    assert.match(items[0].error, /AgentFailed \(line 3\)/);
    assert.match(items[0].what_to_do, /resume_run/);
    // Told once: the next wait times out with nothing about the run.
    const again = await h.call('wait_for_agents', { job_ids: [other.job_id], timeout_s: 1 });
    assert.equal(again.timed_out, true);
    assert.deepEqual((again.attention as any[]).filter((a) => a.run_id === run.run_id), []);
  });

  test('a succeeded and a cancelled run: one item each; a new hub on the same state does not tell them again', async () => {
    const slow = gate(60_000);
    gates.push(slow);
    const h = await setup(async (prompt) => { if (task(prompt) === 'slow') await slow.wait; return { resultText: `did ${task(prompt)}` }; });
    const ok = await h.call('run_script', { title: 'fine', script: `return await agent('TASK:quick')` });
    await eventually('the fine run ended', async () => ((await h.hub.scripts.view(ok.run_id))!.status === 'succeeded' ? true : undefined), 20_000);
    const long = await h.call('run_script', { title: 'long', script: `return await agent('TASK:slow')` });
    await h.call('cancel_run', { run_id: long.run_id, reason: 'not needed now' });
    const r = await h.call('wait_for_agents', { job_ids: [((await h.hub.scripts.view(ok.run_id))!.calls as any[])[0].job_id], timeout_s: 5 });
    const items = (r.attention as any[]).filter((a) => a.kind === 'run_ended');
    assert.deepEqual(items.map((a) => [a.run_id, a.status, a.error ?? null]).sort(), [[ok.run_id, 'succeeded', null], [long.run_id, 'cancelled', 'not needed now']].sort());
    const dir = h.dir;
    await h.stop({ keep: true });
    hubs.splice(hubs.indexOf(h), 1);
    const next = await setup(async (prompt) => ({ resultText: `did ${task(prompt)}` }), dir);
    const job = await next.call('spawn_agent', { prompt: 'TASK:fresh' });
    const w = await next.call('wait_for_agents', { job_ids: [job.job_id], timeout_s: 20 });
    assert.deepEqual((w.attention as any[]).filter((a) => a.kind === 'run_ended'), [], 'told before the restart, not again');
  });
});
