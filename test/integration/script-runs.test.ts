// Scripted runs on a real hub whose children are scripted in process (test/helpers/fakeLauncher.ts):
// run_script fans out with parallel, pipes into an agent with a schema, logs and returns; a bad
// script is refused with its line and writes nothing; a failed agent is the script's exception;
// cancel_run stops a run and its agents; a hub stopped in the middle of a run is continued by the
// next hub on the same state, and no finished call runs twice.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { settingsDirOf } from '../../src/config.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { argValue, ScriptedLauncher, type TurnScript } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { count, job, jobs } from '../helpers/state.js';
import { sql } from 'kysely';
import { gate, type Gate } from '../helpers/gate.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

async function setup(script: TurnScript, dir?: string): Promise<{ h: TestHub; prompts: string[] }> {
  const prompts: string[] = [];
  const fake = new ScriptedLauncher((prompt, cmd) => { prompts.push(prompt); return script(prompt, cmd); });
  const h = await startTestHub({ processes: fake, ...(dir ? { dir } : {}) });
  hubs.push(h);
  return { h, prompts };
}

const ended = (h: TestHub, runId: string, ms = 30_000): Promise<any> =>
  eventually(`run ${runId} ended`, async () => { const v = (await h.hub.scripts.view(runId)); return v && v.status !== 'running' ? v : undefined; }, ms);

/** The task line of a child's prompt (the hub adds its own sections around it). */
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

describe('scripted runs', () => {
  test('parallel fan-out, a pipeline into a schema agent, log, and the return value', async () => {
    const { h, prompts } = await setup((prompt) => {
      const t = task(prompt);
      if (t === 'judge') return { resultText: 'judged', structured: { verdict: 'ship', seen: 3 } };
      return { resultText: `review of ${t}` };
    });
    const r = await h.call('run_script', {
      args: ['a', 'b', 'c'],
      script: `export const meta = { name: 'review-three', description: 'three reviews and a verdict' }
phase('Review')
const reviews = await parallel(args.map((f) => () => agent('TASK:' + f + ' review it', { label: 'review ' + f })))
log(reviews.filter(Boolean).length + ' reviews')
const verdict = await agent('TASK:judge ' + reviews.join(' | '), { schema: { type: 'object', properties: { verdict: { type: 'string' } } } })
return { reviews, verdict }`,
    });
    assert.equal(r.status, 'running');
    assert.equal(r.title, 'review-three');
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, { reviews: ['review of a', 'review of b', 'review of c'], verdict: { verdict: 'ship', seen: 3 } });
    assert.deepEqual(v.calls.map((c: any) => [c.kind, c.status, c.job_status]), Array(4).fill(['agent', 'done', 'succeeded']));
    assert.deepEqual(v.calls.slice(0, 3).map((c: any) => c.phase), ['Review', 'Review', 'Review']);
    assert.deepEqual(v.log.map((l: any) => [l.kind, l.text]), [['phase', 'Review'], ['log', '3 reviews']]);
    assert.deepEqual(prompts.map(task).sort(), ['a', 'b', 'c', 'judge']);
    // get_run answers for a script run too.
    const got = await h.call('get_run', { run_id: r.run_id });
    assert.equal(got.kind, 'script');
  });

  test('a script that does not parse is refused with its line, and nothing is written', async () => {
    const { h } = await setup(() => ({ resultText: 'x' }));
    const runCount = () => count(h.hub, sql`SELECT COUNT(*) AS n FROM runs`);
    const before = await runCount();
    const err = await h.call('run_script', { script: 'const a = 1\nconst b = ;\n' }).then(() => null, (e: Error) => e);
    assert.ok(err, 'a bad script was accepted');
    assert.match(err.message, /line 2/);
    assert.equal(await runCount(), before);
    // Refused before anything starts as well: a function the sandbox does not have, an option agent() does not take, a literal value it refuses.
    for (const [script, line, what] of [
      ["await agent('TASK:a')\nconst page = await fetch('http://example.com')", 2, /fetch\(\) is not a function a script has/],
      ["await agent('TASK:a')\nconsole.log('done')", 2, /console/],
      ["const r = await parallel([\n  () => agent('TASK:a', { provder: 'codex' }),\n])", 2, /no option "provder"/],
      ["await agent('TASK:a', { label: 'x' })\nawait agent('TASK:b', { timeout_s: 0 })", 2, /option timeout_s/],
    ] as const) {
      const e = await h.call('run_script', { script }).then(() => null, (x: Error) => x);
      assert.ok(e, `accepted: ${script}`);
      assert.match(e.message, new RegExp(`refused at line ${line}\\b`), e.message);
      assert.match(e.message, what);
    }
    // Past the size limit (512 KiB), inline or saved.
    const big = `return 1 // ${'x'.repeat(512 * 1024)}`;
    assert.match(String(await h.call('run_script', { script: big }).then(() => null, (e: Error) => e.message)), /longer than 524288 characters: move data into args/);
    mkdirSync(join(settingsDirOf(h.hub.ctx.config), 'scripts'), { recursive: true });
    writeFileSync(join(settingsDirOf(h.hub.ctx.config), 'scripts', 'big.js'), big);
    assert.match(String(await h.call('run_script', { name: 'big' }).then(() => null, (e: Error) => e.message)), /ScriptTooLarge: the script is \d+ bytes; the limit is 524288/);
    assert.equal(await runCount(), before, 'nothing was written');
    assert.equal((await jobs(h.hub, { limit: 10 })).length, 0, 'nothing was spawned');
    // An option only the run can know is checked at the call: the script's exception, naming it.
    const opt = await h.call('run_script', { script: `const o = { provder: 'codex' }\ntry { await agent('TASK:x', o) } catch (e) { return e.message }` });
    const v = await ended(h, opt.run_id);
    assert.match(String(v.result), /provder/, 'a bad agent() option is the script\'s exception, naming it');
    assert.equal(v.calls.length, 0, 'nothing was spawned for it');
  });

  test('a failed agent is an exception the script can catch; an uncaught one fails the run with its line', async () => {
    const { h } = await setup((prompt) => (task(prompt) === 'bad' ? { resultText: 'no', isError: true } : { resultText: 'ok' }));
    const caught = await h.call('run_script', { script: `try { await agent('TASK:bad') } catch (e) { return [e.name, typeof e.code] }` });
    const c = await ended(h, caught.run_id);
    assert.deepEqual(c.result, ['AgentFailed', 'string'], JSON.stringify(c));
    const thrown = await h.call('run_script', { script: `await agent('TASK:good')\n\nawait agent('TASK:bad')` });
    const v = await ended(h, thrown.run_id);
    assert.equal(v.status, 'failed');
    assert.match(v.error, /AgentFailed \(line 3\)/);
    assert.deepEqual(v.calls.map((c: any) => c.status), ['done', 'failed'], 'what finished is kept and listed');
  });

  test('cancel_run ends the run and cancels its running agents', async () => {
    const g = gate(20_000);
    const { h } = await setup(async () => { await g.wait; return { resultText: 'late' }; });
    const r = await h.call('run_script', { script: `await parallel([() => agent('TASK:one'), () => agent('TASK:two')])\nreturn 'finished'` });
    await eventually('two agents running', async () => ((await h.hub.scripts.view(r.run_id))!.calls as any[]).filter((c) => c.job_status === 'running').length === 2 || undefined, 20_000);
    const v = await h.call('cancel_run', { run_id: r.run_id, reason: 'changed my mind' });
    assert.equal(v.status, 'cancelled');
    const statuses = await Promise.all((v.calls as any[]).map(async (c) => (await job(h.hub, c.job_id)).status));
    assert.deepEqual(statuses, ['cancelled', 'cancelled']);
    g.open();
  });

  test('a hub stopped in the middle of a run: the next hub continues it, and no finished call runs twice', async () => {
    const gates = new Map<string, Gate>([['slow', gate(30_000)]]);
    const script: TurnScript = async (prompt, cmd) => {
      if (argValue(cmd.args, '--resume')) return { resultText: 'done slow (resumed)' };
      const t = task(prompt);
      if (t === 'slow') await gates.get('slow')!.wait;
      return { resultText: `done ${t}` };
    };
    const first = await setup(script);
    const r = await first.h.call('run_script', { script: `const a = await agent('TASK:fast')\nconst b = await agent('TASK:slow')\nconst c = await agent('TASK:last ' + a)\nreturn [a, b, c]` });
    await eventually('the slow agent running', async () => ((await first.h.hub.scripts.view(r.run_id))!.calls as any[]).some((c) => c.label === null && c.job_status === 'running' && c.seq === 2) || undefined, 20_000);
    const dir = first.h.dir;
    await first.h.stop({ keep: true });
    hubs.splice(hubs.indexOf(first.h), 1);
    gates.set('slow', gate(30_000));
    gates.get('slow')!.open();
    const second = await setup(script, dir);
    const v = await ended(second.h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['done fast', 'done slow (resumed)', 'done last']);
    assert.deepEqual(first.prompts.map(task), ['fast', 'slow']);
    assert.deepEqual(second.prompts.map(task), ['?', 'last'], 'the new hub ran fast not again; slow went on in its session (the hub-restart message), last ran live');
    assert.equal(v.calls.length, 3);
  });

  test('get_run wait_s answers when the run ends, or when the time passes', async () => {
    const g = gate(20_000);
    const { h } = await setup(async () => { await g.wait; return { resultText: 'ok' }; });
    const r = await h.call('run_script', { script: `return await agent('TASK:x')` });
    const t0 = Date.now();
    const still = await h.call('get_run', { run_id: r.run_id, wait_s: 0.3 });
    assert.equal(still.status, 'running');
    assert.ok(Date.now() - t0 >= 250, `answered after ${Date.now() - t0} ms`);
    const waiting = h.call('get_run', { run_id: r.run_id, wait_s: 60 });
    g.open();
    const done = await waiting;
    assert.equal(done.status, 'succeeded');
    assert.equal(done.result, 'ok');
    assert.ok(Date.now() - t0 < 30_000);
  });

  test('cancel_run cancels a dispatch run too: no task starts, the live one is cancelled', async () => {
    const g = gate(20_000);
    const { h } = await setup(async () => { await g.wait; return { resultText: 'late' }; });
    const r = await h.call('dispatch', { format: 'toml', content: ['concurrency = 1', '[[task]]', 'id = "a"', 'prompt = "TASK:a"', '[[task]]', 'id = "b"', 'prompt = "TASK:b"'].join('\n') });
    const v = await h.call('cancel_run', { run_id: r.run_id, reason: 'not needed' });
    assert.equal(v.status, 'cancelled');
    assert.equal(v.note, 'not needed');
    const statuses = await Promise.all((v.tasks as any[]).filter((t) => t.job_id).map(async (t) => (await job(h.hub, t.job_id)).status));
    assert.deepEqual(statuses, ['cancelled']);
    const again = await h.call('cancel_run', { run_id: r.run_id }).then(() => null, (e: Error) => e.message);
    assert.match(String(again), /already ended/);
    g.open();
  });
});
