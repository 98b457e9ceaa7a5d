// A script computes in a worker thread, not on the hub's (docs/decisions.md, "Scripts run in a
// worker"), tested through the real ScriptRuns path on a real hub whose children are scripted in
// process: while one run's script loops forever (up to the default 10 s CPU cap), the hub answers
// MCP calls at once, and another run spawns its agents, gets their answers and succeeds; then the
// looping run fails with CpuLimit. On the hub's own thread every one of those waited for the cap.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { DEFAULT_LIMITS } from '../../src/scripts/sandbox.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

describe('a script that loops does not hold the hub', () => {
  test('MCP answers and another run completes while a script loops; the loop then ends at its cap', { timeout: 120_000 }, async () => {
    const h = await startTestHub({ processes: new ScriptedLauncher(async (prompt) => ({ resultText: `done ${task(prompt)}` })) });
    hubs.push(h);
    const loop = await h.call('run_script', { script: `log('looping')\nlet n = 0\nwhile (true) n++` });
    const view = async (id: string): Promise<any> => h.hub.scripts.view(id);
    // The script is inside its loop once its log line is in (the hub writes it as the worker posts it).
    await eventually('the looping script logged', async () => (await view(loop.run_id))?.log.some((l: { text: string }) => l.text === 'looping') || undefined, 30_000, 20);
    const loopStarted = performance.now();

    // MCP calls are answered at once, not after the loop.
    const slowest = { ms: 0 };
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const runs = await h.call('list_runs', {});
      slowest.ms = Math.max(slowest.ms, performance.now() - t0);
      assert.ok(JSON.stringify(runs).includes(loop.run_id));
    }
    assert.ok(slowest.ms < 500, `list_runs took ${Math.round(slowest.ms)} ms while a script looped`);

    // Another run spawns its agents and succeeds meanwhile.
    const other = await h.call('run_script', { script: `const r = await parallel([() => agent('TASK:one'), () => agent('TASK:two')])\nreturn r.join(', ')` });
    const done = await h.call('get_run', { run_id: other.run_id, wait_s: 30 });
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.result, 'done one, done two');
    assert.equal((await view(loop.run_id)).status, 'running', 'the other run ended while the loop still ran');
    assert.ok(performance.now() - loopStarted < DEFAULT_LIMITS.cpuMs, 'the other run ended before the loop reached its cap');

    // The loop ends at its CPU cap, as before.
    const ended = await h.call('get_run', { run_id: loop.run_id, wait_s: 60 });
    assert.equal(ended.status, 'failed', JSON.stringify(ended));
    assert.match(ended.error, new RegExp(`^CpuLimit\\b.*more than ${DEFAULT_LIMITS.cpuMs} ms of CPU time`));
  });
});
