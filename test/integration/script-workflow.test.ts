// workflow(name, args) in a script run (issue 28 point 2, docs/scripts.md "workflow()"): a saved
// script runs nested in the same run and its return value is the call's; its calls are journaled
// under the workflow call's scope (the same prompt at the top is another call); an unknown name,
// a script that does not parse and nesting past the depth limit are errors the caller catches;
// a resume after an edit of the nested script reuses its unchanged calls.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { argValue, ScriptedLauncher, type TurnScript } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { gate } from '../helpers/gate.js';
import { settingsDirOf } from '../../src/config.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

async function setup(script: TurnScript, saved: Record<string, string>, state?: string): Promise<{ h: TestHub; prompts: string[]; dir: string }> {
  const prompts: string[] = [];
  const fake = new ScriptedLauncher((prompt, cmd) => { prompts.push(prompt); return script(prompt, cmd); });
  const h = await startTestHub({ processes: fake, ...(state ? { dir: state } : {}) });
  hubs.push(h);
  const dir = join(settingsDirOf(h.hub.ctx.config), 'scripts');
  mkdirSync(dir, { recursive: true });
  for (const [name, src] of Object.entries(saved)) writeFileSync(join(dir, `${name}.js`), src);
  return { h, prompts, dir };
}

const ended = (h: TestHub, runId: string, ms = 30_000): Promise<any> =>
  eventually(`run ${runId} ended`, async () => { const v = (await h.hub.scripts.view(runId)); return v && v.status !== 'running' ? v : undefined; }, ms);
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

describe('workflow() in a script run', () => {
  test('a saved script runs nested and returns its value; its calls are its own; missing, broken and too deep are catchable errors', async () => {
    const { h, prompts, dir } = await setup((prompt) => ({ resultText: `did ${task(prompt)}` }), {
      child: "phase('Child')\nconst r = await agent('TASK:child-' + args.x)\nlog('child got ' + r)\nreturn { got: r, x: args.x }",
      bad: 'const = ;',
      recurse: "return await workflow('recurse', args)",
    });
    const r = await h.call('run_script', {
      script: `phase('Top')
const a = await workflow('child', { x: 1 })
const same = await agent('TASK:child-1')
let missing, bad, deep
try { await workflow('nope') } catch (e) { missing = [e.name, e.code, e.message] }
try { await workflow('bad') } catch (e) { bad = [e.name, e.code, e.message] }
try { await workflow('recurse', {}) } catch (e) { deep = [e.name, e.code, e.message] }
return { a, same, missing, bad, deep }`,
    });
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result.a, { got: 'did child-1', x: 1 });
    assert.equal(v.result.same, 'did child-1');
    assert.deepEqual(prompts.map(task), ['child-1', 'child-1'], 'the same prompt inside the workflow and at the top are two calls');
    assert.deepEqual(v.result.missing.slice(0, 2), ['WorkflowNotFound', 'not_found']);
    assert.ok(v.result.missing[2].includes(join(dir, 'nope.js')), v.result.missing[2]);
    assert.deepEqual(v.result.bad.slice(0, 2), ['SyntaxError', 'syntax_error']);
    assert.match(v.result.bad[2], /bad\.js is refused at line 1, column 7: SyntaxError/);
    assert.deepEqual(v.result.deep.slice(0, 2), ['WorkflowDepth', 'workflow_depth']);
    assert.match(v.result.deep[2], /nest at most 4 deep; this one would be 5 deep/);
    const calls = v.calls as any[];
    assert.deepEqual(calls.slice(0, 3).map((c) => [c.kind, c.status, c.phase, Boolean(c.scope)]), [
      ['workflow', 'done', 'Top', false], ['agent', 'done', 'Child', true], ['agent', 'done', 'Top', false],
    ]);
    assert.match(calls[1].scope, /^\/child:[0-9a-f]{12}#0$/);
    assert.deepEqual(calls.slice(3).map((c) => [c.kind, c.status]), Array(4).fill(['workflow', 'failed']), 'four nested recurse calls ran and failed; the fifth was refused before it started');
    assert.ok((v.log as any[]).some((l) => l.kind === 'log' && l.text === 'child got did child-1'));
  });

  test('resume after an edit of the nested script: its unchanged calls answer from the journal', async () => {
    const { h, prompts, dir } = await setup((prompt) => (task(prompt) === 'inner-two-v1' ? { resultText: 'no', isError: true } : { resultText: `did ${task(prompt)}` }), {
      inner: "const p = await agent('TASK:inner-one')\nconst q = await agent('TASK:inner-two-v1')\nreturn p + '+' + q",
    });
    const r = await h.call('run_script', { script: "const pre = await agent('TASK:top')\nreturn [pre, await workflow('inner')]" });
    const failed = await ended(h, r.run_id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /^AgentFailed \(line 2\): workflow\("inner"\) line 2: agent j-/);
    writeFileSync(join(dir, 'inner.js'), readFileSync(join(dir, 'inner.js'), 'utf8').replace('inner-two-v1', 'inner-two-v2'));
    await h.call('resume_run', { run_id: r.run_id });
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['did top', 'did inner-one+did inner-two-v2']);
    assert.deepEqual(prompts.map(task), ['top', 'inner-one', 'inner-two-v1', 'inner-two-v2']);
    const replay = (v.log as any[]).filter((l) => l.kind === 'replay').map((l) => l.text);
    assert.match(replay[1], /^resume: 2 call\(s\) answered from the journal; diverged at call 4 of the script, agent\("TASK:inner-two-v2"\), new or edited/);
    const wf = (v.calls as any[]).find((c) => c.kind === 'workflow');
    assert.equal(wf.status, 'done', 'the workflow call ran again and ended with the new value');
  });

  test('a hub stopped inside a workflow: the next hub runs the stored nested script again, and its finished calls do not run twice', async () => {
    const slow = gate(30_000);
    const script: TurnScript = async (prompt, cmd) => {
      if (argValue(cmd.args, '--resume')) return { resultText: 'did slow (resumed)' };
      if (task(prompt) === 'slow') await slow.wait;
      return { resultText: `did ${task(prompt)}` };
    };
    const first = await setup(script, { inner: "phase('Inner')\nlog('inner started')\nconst a = await agent('TASK:fast')\nconst b = await agent('TASK:slow')\nreturn [a, b, await agent('TASK:after')]" });
    const r = await first.h.call('run_script', { script: "return await workflow('inner')" });
    await eventually('the slow agent running', async () => ((await first.h.hub.scripts.view(r.run_id))!.calls as any[]).some((c) => c.seq === 3 && c.job_status === 'running') || undefined, 20_000);
    await first.h.stop({ keep: true });
    hubs.splice(hubs.indexOf(first.h), 1);
    // An edit now does not change the run a new hub continues: it runs the workflow as stored.
    writeFileSync(join(first.dir, 'inner.js'), "return await agent('TASK:edited')");
    slow.open();
    const second = await setup(script, {}, first.h.dir);
    const v = await ended(second.h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['did fast', 'did slow (resumed)', 'did after']);
    assert.deepEqual(first.prompts.map(task), ['fast', 'slow']);
    assert.deepEqual(second.prompts.map(task), ['?', 'after'], 'fast answered from the journal, slow went on in its session, after ran live');
    assert.deepEqual((v.calls as any[]).map((c) => [c.kind, c.status]), [['workflow', 'done'], ['agent', 'done'], ['agent', 'done'], ['agent', 'done']]);
    assert.deepEqual((v.log as any[]).map((l) => [l.kind, l.text]), [['phase', 'Inner'], ['log', 'inner started']], 'the log lines the first hub wrote are not written again');
  });
});
