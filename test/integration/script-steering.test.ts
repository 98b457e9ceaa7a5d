// Steering a script run (issue 28 point 6, docs/scripts.md "Steer a run"): pause_run holds every
// new call of the run (running agents go on), survives a new hub, and paused:false lets the calls
// start; cancel_run with call cancels one agent, which the script sees as a catchable
// AgentCancelled (code "cancelled") while the run goes on.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher, type TurnScript } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { job } from '../helpers/state.js';
import { gate } from '../helpers/gate.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

async function setup(script: TurnScript, dir?: string): Promise<{ h: TestHub; prompts: string[]; events: { runId: string; status: string }[] }> {
  const prompts: string[] = [];
  const fake = new ScriptedLauncher((prompt, cmd) => { prompts.push(prompt); return script(prompt, cmd); });
  const h = await startTestHub({ processes: fake, ...(dir ? { dir } : {}) });
  hubs.push(h);
  const events: { runId: string; status: string }[] = [];
  h.hub.ctx.bus.on('run', (e) => { events.push(e); });
  return { h, prompts, events };
}

const ended = (h: TestHub, runId: string, ms = 30_000): Promise<any> =>
  eventually(`run ${runId} ended`, async () => { const v = (await h.hub.scripts.view(runId)); return v && v.status !== 'running' ? v : undefined; }, ms);
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';
const waits = async (h: TestHub, runId: string): Promise<string[]> => ((await h.hub.scripts.view(runId))!.log as any[]).filter((l) => l.kind === 'pause' && / waits: /.test(l.text)).map((l) => l.text);

describe('steering a script run', () => {
  test('pause_run: no new call starts while paused, also under a new hub; paused:false lets it start', async () => {
    const g = gate(20_000);
    const script: TurnScript = async (prompt) => {
      if (task(prompt) === 'one') await g.wait;
      return { resultText: `did ${task(prompt)}` };
    };
    const first = await setup(script);
    const r = await first.h.call('run_script', { script: "const a = await agent('TASK:one')\nconst b = await agent('TASK:two')\nreturn [a, b]" });
    await eventually('one running', async () => (((await first.h.hub.scripts.view(r.run_id))!.calls as any[])[0]?.job_status === 'running' ? true : undefined), 20_000);
    const p = await first.h.call('pause_run', { run_id: r.run_id });
    assert.equal(p.paused, true);
    assert.equal(p.status, 'running');
    assert.deepEqual(first.events.filter((e) => e.runId === r.run_id), [{ runId: r.run_id, status: 'paused' }]);
    g.open();
    await eventually('two waits', async () => ((await waits(first.h, r.run_id)).length === 1 ? true : undefined), 20_000);
    assert.match((await waits(first.h, r.run_id))[0]!, /^agent\("TASK:two"\) waits: the run is paused$/);
    assert.deepEqual(first.prompts.map(task), ['one'], 'the running agent finished; the next call did not start');
    assert.equal(((await first.h.hub.scripts.view(r.run_id))!.calls as any[]).length, 1);

    const dir = first.h.dir;
    await first.h.stop({ keep: true });
    hubs.splice(hubs.indexOf(first.h), 1);
    const second = await setup(script, dir);
    assert.equal((await second.h.hub.scripts.view(r.run_id))!.paused, true, 'a new hub keeps the run paused');
    await eventually('two waits under the new hub', async () => ((await waits(second.h, r.run_id)).length === 2 ? true : undefined), 20_000);
    assert.deepEqual(second.prompts, []);
    const u = await second.h.call('pause_run', { run_id: r.run_id, paused: false });
    assert.equal(u.paused, false);
    const v = await ended(second.h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['did one', 'did two']);
    assert.deepEqual(second.prompts.map(task), ['two']);
    assert.deepEqual(second.events.filter((e) => e.runId === r.run_id).map((e) => e.status), ['running', 'succeeded']);
    const ended2 = await second.h.call('pause_run', { run_id: r.run_id }).then(() => null, (e: Error) => e.message);
    assert.match(String(ended2), /is succeeded: only a running run can be paused/);
  });

  test('cancel_run with call: that agent is cancelled, the script catches code "cancelled", the run goes on', async () => {
    const g = gate(20_000);
    const { h } = await setup(async (prompt) => {
      if (task(prompt) === 'victim') return { hang: true };
      await g.wait;
      return { resultText: `did ${task(prompt)}` };
    });
    const r = await h.call('run_script', {
      script: `const [v, k] = await parallel([
  async () => { try { return await agent('TASK:victim', { label: 'victim' }) } catch (e) { return [e.name, e.code] } },
  () => agent('TASK:keep', { label: 'keep' }),
])
return { v, k }`,
    });
    const calls = await eventually('both running', async () => { const c = (await h.hub.scripts.view(r.run_id))!.calls as any[]; return c.length === 2 && c.every((x) => x.job_status === 'running') ? c : undefined; }, 20_000);
    const victim = calls.find((c) => c.label === 'victim');
    const none = await h.call('cancel_run', { run_id: r.run_id, call: 99 }).then(() => null, (e: Error) => e.message);
    assert.match(String(none), /has no call 99 \(its calls are 1 to 2; get_run lists them\)/);
    const after1 = await h.call('cancel_run', { run_id: r.run_id, call: victim.seq, reason: 'not needed' });
    assert.equal(after1.status, 'running', 'the run goes on');
    assert.equal((await job(h.hub, victim.job_id)).status, 'cancelled');
    const twice = await h.call('cancel_run', { run_id: r.run_id, call: victim.seq }).then(() => null, (e: Error) => e.message);
    assert.match(String(twice), /has already ended/);
    g.open();
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, { v: ['AgentCancelled', 'cancelled'], k: 'did keep' });
    assert.deepEqual((v.calls as any[]).map((c) => [c.label, c.status]).sort(), [['keep', 'done'], ['victim', 'failed']]);
  });
});
