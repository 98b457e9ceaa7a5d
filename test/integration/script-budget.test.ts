// A script run's dollar budget (issue 28 point 5, docs/scripts.md "Budget"): each agent() call
// reserves under the run's budget_usd before it spawns (the house budget machinery, src/money);
// a call that the budget less what is spent and what running calls hold cannot cover fails
// before anything spawns with BudgetExceeded / budget_exceeded, which the script catches; the
// `budget` global shows total, spent, reserved and remaining; a call that ends releases its
// reservation and its real cost counts. Children report costs through the scripted launcher.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { gate } from '../helpers/gate.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

const ended = (h: TestHub, runId: string, ms = 30_000): Promise<any> =>
  eventually(`run ${runId} ended`, async () => { const v = (await h.hub.scripts.view(runId)); return v && v.status !== 'running' ? v : undefined; }, ms);
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

describe('a script run\'s budget', () => {
  test('calls reserve before they spawn; one that cannot be covered is a catchable budget_exceeded; ends release and book the real cost', async () => {
    const g = gate(20_000);
    const costs: Record<string, number> = { a: 0.3, b: 0.4, d: 0.25 };
    const prompts: string[] = [];
    const fake = new ScriptedLauncher(async (prompt) => {
      prompts.push(task(prompt));
      if (task(prompt) === 'b') await g.wait;
      return { resultText: `did ${task(prompt)}`, costUsd: costs[task(prompt)] ?? 0 };
    });
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const r = await h.call('run_script', {
      budget_usd: 1,
      script: `const b0 = [budget.total, budget.spent(), budget.reserved(), budget.remaining()]
await agent('TASK:a', { budget_usd: 0.5 })
const b1 = [budget.spent(), budget.reserved(), budget.remaining()]
const pb = agent('TASK:b', { budget_usd: 0.5 })
let refused = null
try { await agent('TASK:c', { budget_usd: 0.5 }) } catch (e) { refused = [e.name, e.code, e.message] }
const b2 = [budget.spent(), budget.reserved(), budget.remaining()]
log('c refused')
await pb
const b3 = [budget.spent(), budget.reserved(), budget.remaining()]
await agent('TASK:d', { budget_usd: 0.3 })
return { b0, b1, b2, b3, refused, end: [budget.spent(), budget.remaining()] }`,
    });
    await eventually('c refused', async () => (((await h.hub.scripts.view(r.run_id))!.log as any[]).some((l) => l.text === 'c refused') ? true : undefined), 20_000);
    assert.deepEqual(prompts, ['a', 'b'], 'c never spawned');
    g.open();
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    const out = v.result;
    assert.deepEqual(out.b0, [1, 0, 0, 1]);
    assert.deepEqual(out.b1, [0.3, 0, 0.7], 'a released its reservation and booked what it spent');
    assert.deepEqual(out.b2, [0.3, 0.5, 0.2], 'b holds its 0.5 while it runs');
    assert.deepEqual(out.b3, [0.7, 0, 0.3]);
    assert.deepEqual(out.end, [0.95, 0.05]);
    assert.equal(out.refused[0], 'BudgetExceeded');
    assert.equal(out.refused[1], 'budget_exceeded');
    assert.match(out.refused[2], /would exceed the budget of script run r-\w+ .*limit \$1\.0000; spent \$0\.3000, reserved \$0\.5000 by 1 queued or running job\(s\), asked \$0\.5000.*Nothing was started\. The script can catch this/);
    assert.deepEqual(prompts, ['a', 'b', 'd']);
    assert.deepEqual(v.calls.map((c: any) => c.label ?? c.seq), [1, 2, 3], 'the refused call was never journaled: nothing started');
    assert.equal(v.cost_usd, 0.95);
  });

  test('calls made at once reserve in the order the script made them: of eight at $0.2 under $1.1, the first five run', async () => {
    // On PostgreSQL each call's reads before its reservation (the pause check) run on separate
    // connections and finish in any order: without its place taken first, a later call overtook.
    const ran: string[] = [];
    const fake = new ScriptedLauncher((prompt) => { ran.push(task(prompt)); return { resultText: 'ok', costUsd: 0.2 }; });
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const r = await h.call('run_script', {
      budget_usd: 1.1,
      script: `const calls = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => agent('TASK:' + i, { budget_usd: 0.2 }).then(() => 'ran', (e) => e.code))
return await Promise.all(calls)`,
    });
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['ran', 'ran', 'ran', 'ran', 'ran', 'budget_exceeded', 'budget_exceeded', 'budget_exceeded']);
    assert.deepEqual(ran.sort(), ['1', '2', '3', '4', '5']);
  });

  test('without a per-call budget_usd a call reserves the estimate, and a run without budget_usd shows total null and remaining Infinity', async () => {
    const fake = new ScriptedLauncher(() => ({ resultText: 'ok', costUsd: 0.01 }));
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const tiny = await h.call('run_script', { budget_usd: 0.001, script: `try { await agent('TASK:x') } catch (e) { return [e.code, e.message] }` });
    const t = await ended(h, tiny.run_id);
    assert.equal(t.result[0], 'budget_exceeded', JSON.stringify(t));
    assert.match(t.result[1], /asked \$\d+\.\d{4} \(/, 'the message states the default reservation and its basis');
    assert.deepEqual(fake.spawned, []);
    const free = await h.call('run_script', { script: `await agent('TASK:y')\nreturn [budget.total, budget.spent(), budget.remaining() === Infinity]` });
    const f = await ended(h, free.run_id);
    assert.deepEqual(f.result, [null, 0.01, true]);
  });
});
