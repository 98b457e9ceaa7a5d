// resume_run of a script run (issue 28 point 4, docs/scripts.md "Resume"): a saved script that
// failed at its third call is edited and resumed — the first two calls are answered from the
// journal (their agents do not run again), the edited call and everything after it run live, and
// the log's replay line names where it diverged. An unedited call that failed runs again; a
// running or succeeded run is refused and nothing changes.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher, type TurnScript } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { job, row } from '../helpers/state.js';
import { sql } from 'kysely';
import { gate } from '../helpers/gate.js';
import { settingsDirOf } from '../../src/config.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

async function setup(script: TurnScript): Promise<{ h: TestHub; prompts: string[] }> {
  const prompts: string[] = [];
  const fake = new ScriptedLauncher((prompt, cmd) => { prompts.push(prompt); return script(prompt, cmd); });
  const h = await startTestHub({ processes: fake });
  hubs.push(h);
  return { h, prompts };
}

const ended = (h: TestHub, runId: string, ms = 30_000): Promise<any> =>
  eventually(`run ${runId} ended`, async () => { const v = (await h.hub.scripts.view(runId)); return v && v.status !== 'running' ? v : undefined; }, ms);
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';
const replayLines = (v: any): string[] => (v.log as any[]).filter((l) => l.kind === 'replay').map((l) => l.text);

describe('resume_run of a script run', () => {
  test('a saved script edited after a failure: the unchanged prefix answers from the journal, the edited call and the rest run live', async () => {
    const { h, prompts } = await setup((prompt) => (task(prompt) === 'three-v1' ? { resultText: 'broke', isError: true } : { resultText: `did ${task(prompt)}` }));
    const dir = join(settingsDirOf(h.hub.ctx.config), 'scripts');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'steps.js');
    writeFileSync(file, [
      "const a = await agent('TASK:one')",
      "const b = await agent('TASK:two')",
      "const c = await agent('TASK:three-v1 after ' + a)",
      "return [a, b, c, await agent('TASK:four')]",
    ].join('\n'));
    const r = await h.call('run_script', { name: 'steps' });
    const failed = await ended(h, r.run_id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.error, /AgentFailed \(line 3\)/);
    assert.deepEqual(prompts.map(task), ['one', 'two', 'three-v1']);

    writeFileSync(file, readFileSync(file, 'utf8').replace('three-v1', 'three-v2'));
    const resumed = await h.call('resume_run', { run_id: r.run_id });
    assert.equal(resumed.status, 'running');
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['did one', 'did two', 'did three-v2', 'did four']);
    assert.deepEqual(prompts.map(task), ['one', 'two', 'three-v1', 'three-v2', 'four'], 'one and two were answered from the journal, not spawned again');
    const replay = replayLines(v);
    assert.equal(replay.length, 2, JSON.stringify(replay));
    assert.match(replay[0]!, /^resumed after it failed; .*steps\.js changed since the last run and was read again$/);
    assert.match(replay[1]!, /^resume: 2 call\(s\) answered from the journal; diverged at call 3 of the script, agent\("TASK:three-v2 after did one"\), new or edited since the last run/);
    assert.deepEqual(v.calls.map((c: any) => [c.seq, c.status, c.replaced ?? false]), [[1, 'done', false], [2, 'done', false], [3, 'failed', true], [4, 'done', false], [5, 'done', false]]);
    const stored = (await row(h.hub, sql<{ content: string }>`SELECT content FROM runs WHERE id = ${r.run_id}`))!;
    assert.match(stored.content, /three-v2/, 'the run stores the script it ran now');

    const again = await h.call('resume_run', { run_id: r.run_id }).then(() => null, (e: Error) => e.message);
    assert.match(String(again), /succeeded: there is nothing to resume/);
  });

  test('an unedited call that failed runs again live; a running run is refused and goes on', async () => {
    let flaky = 0;
    const g = gate(20_000);
    const { h, prompts } = await setup(async (prompt) => {
      const t = task(prompt);
      if (t === 'flaky') return ++flaky === 1 ? { resultText: 'transient', isError: true } : { resultText: 'flaky ok' };
      if (t === 'slow') await g.wait;
      return { resultText: `did ${t}` };
    });
    const r = await h.call('run_script', { script: "const a = await agent('TASK:one')\nconst b = await agent('TASK:flaky')\nreturn [a, b]" });
    assert.equal((await ended(h, r.run_id)).status, 'failed');
    await h.call('resume_run', { run_id: r.run_id });
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.deepEqual(v.result, ['did one', 'flaky ok']);
    assert.deepEqual(prompts.map(task), ['one', 'flaky', 'flaky']);
    assert.match(replayLines(v)[1]!, /^resume: 1 call\(s\) answered from the journal; diverged at call 2 of the script, agent\("TASK:flaky"\), which failed last time \(journal call 2\)/);

    const slow = await h.call('run_script', { script: "return await agent('TASK:slow')" });
    const refused = await h.call('resume_run', { run_id: slow.run_id }).then(() => null, (e: Error) => e.message);
    assert.match(String(refused), /is still running: resume_run continues a run that failed or was cancelled/);
    g.open();
    assert.equal((await ended(h, slow.run_id)).status, 'succeeded');
  });

  test('a failed run cancels the agent it no longer waits for; a resume of the edited script lifts the pause', async () => {
    const g = gate(20_000);
    const { h, prompts } = await setup(async (prompt) => {
      const t = task(prompt);
      if (t === 'long') return { hang: true };
      if (t === 'bad') { await g.wait; return { resultText: 'no', isError: true }; }
      return { resultText: `did ${t}` };
    });
    const dir = join(settingsDirOf(h.hub.ctx.config), 'scripts');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'orphan.js'), "const p = agent('TASK:long')\nawait agent('TASK:bad')\nreturn await p");
    const r = await h.call('run_script', { name: 'orphan' });
    await eventually('both running', async () => (((await h.hub.scripts.view(r.run_id))!.calls as any[]).filter((c) => c.job_status === 'running').length === 2 ? true : undefined), 20_000);
    assert.equal((await h.call('pause_run', { run_id: r.run_id })).paused, true);
    g.open();
    const failed = await ended(h, r.run_id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.paused, true);
    const long = (failed.calls as any[]).find((c) => c.label === null && c.seq === 1);
    await eventually('the failed run cancels its other agent', async () => ((await job(h.hub, long.job_id)).status === 'cancelled' ? true : undefined), 20_000);

    writeFileSync(join(dir, 'orphan.js'), "return await agent('TASK:good')");
    const resumed = await h.call('resume_run', { run_id: r.run_id });
    assert.equal(resumed.paused, false, 'resume_run lifts the pause');
    const v = await ended(h, r.run_id);
    assert.equal(v.status, 'succeeded', JSON.stringify(v));
    assert.equal(v.result, 'did good');
    const old = (v.calls as any[]).filter((c) => c.replaced);
    assert.deepEqual(old.map((c) => c.status), ['failed', 'failed'], 'both calls of the last run are history, none left running');
    assert.deepEqual(prompts.map(task).sort(), ['bad', 'good', 'long']);
  });
});
