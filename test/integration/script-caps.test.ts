// A script run's caps (issue 28 point 3, docs/scripts.md) on a real hub whose children are
// scripted in process (test/helpers/fakeLauncher.ts): a script that loops forever and one that
// allocates without end, each after starting agents, end `failed` with an error that names the
// cap, within a deadline. The agents they started are cancelled (a failed run's agents are, as a
// cancelled run's: nothing reads their answers), an agent asked for just before the loop
// included; and the hub goes on: a run started right after succeeds.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { byStatus } from '../helpers/state.js';
import { gate } from '../helpers/gate.js';
import { isTerminal } from '../../src/domain/job.js';
import { DEFAULT_LIMITS } from '../../src/scripts/sandbox.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

/** The task line of a child's prompt (the hub adds its own sections around it). */
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

const CAPS = [
  {
    what: 'a script that loops forever',
    body: 'let n = 0\nwhile (true) n++',
    error: new RegExp(`^CpuLimit\\b.*more than ${DEFAULT_LIMITS.cpuMs} ms of CPU time.*the cap is per run`),
  },
  {
    what: 'a script that allocates without end',
    // 100 kB a string: the cap is reached in ~2,600 steps, well inside the CPU cap even on a loaded
    // machine (with 1 kB strings it took 256,000 steps, and once in CI the CPU cap came first).
    body: "const a = []\nfor (let i = 0; ; i++) a.push('x'.repeat(100000) + i)",
    error: new RegExp(`^MemoryLimit\\b.*more than ${DEFAULT_LIMITS.memoryBytes / 1048576} MB of memory.*the cap is per run`),
  },
];

describe('script run caps', () => {
  for (const cap of CAPS) {
    test(`${cap.what} is stopped by its cap; its agents are cancelled; the hub runs the next script`, { timeout: 120_000 }, async () => {
      const slow = gate(90_000);
      const prompts: string[] = [];
      const h = await startTestHub({
        processes: new ScriptedLauncher(async (prompt) => {
          prompts.push(task(prompt));
          if (task(prompt) === 'slow' || task(prompt) === 'late') await slow.wait;
          return { resultText: `done ${task(prompt)}` };
        }),
      });
      hubs.push(h);
      const r = await h.call('run_script', {
        script: `const slow = agent('TASK:slow', { label: 'slow' })\nawait agent('TASK:quick', { label: 'quick' })\nagent('TASK:late', { label: 'late' })\n${cap.body}`,
      });
      const t0 = Date.now();
      const v = await eventually(`run ${r.run_id} ended`, async () => { const x = (await h.hub.scripts.view(r.run_id)); return x && x.status !== 'running' ? x : undefined; }, 90_000, 50) as any;
      const took = Date.now() - t0;
      assert.equal(v.status, 'failed', JSON.stringify(v));
      assert.match(v.error, cap.error);
      assert.ok(took < 60_000, `the cap took ${took} ms to stop the script`);

      // Its agents: quick finished; slow and late (asked for in the same turn as the loop) are cancelled, none runs on.
      const jobs = await eventually('the run\'s agents settled', async () => {
        const all = (await byStatus(h.hub, 'queued', 'waiting', 'running', 'succeeded', 'cancelled', 'failed', 'interrupted')).filter((j) => j.labels_json?.includes(`run:${r.run_id}`));
        return all.every((j) => isTerminal(j.status)) ? all : undefined;
      }, 20_000);
      const byTask = Object.fromEntries(jobs.map((j) => [task(j.prompt), j.status]));
      assert.equal(byTask.quick, 'succeeded');
      assert.equal(byTask.slow, 'cancelled', JSON.stringify(byTask));
      assert.ok(byTask.late === undefined || byTask.late === 'cancelled', `late: ${byTask.late}`);
      assert.deepEqual((await byStatus(h.hub, 'queued', 'waiting', 'running')), [], 'nothing of the failed run is left running');

      // The hub is healthy: the next run starts and succeeds.
      const next = await h.call('run_script', { script: `return await agent('TASK:after')` });
      const done = await h.call('get_run', { run_id: next.run_id, wait_s: 30 });
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      assert.equal(done.result, 'done after');
      slow.open();
    });
  }
});
