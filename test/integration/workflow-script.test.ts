// One engine (issue 28 point 7): a workflow is a run of the bundled script implement-review on the
// script engine. Its phases are the calls of that run (get_run), a hub restart in the middle of a
// phase continues the workflow through the script engine — the phase goes on in its own session,
// no phase job runs twice — and a lead's script cannot make the workflow's privileged calls.
// Real hub, SQLite, git worktrees; children scripted in process (test/helpers/fakeLauncher.ts).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { settled } from '../helpers/workflow.js';
import { eventually } from '../helpers/wait.js';
import { job, reopen, rows } from '../helpers/state.js';
import { sql } from 'kysely';
import { argValue, ScriptedLauncher, type ScriptedTurn, type TurnScript } from '../helpers/fakeLauncher.js';
import type { PhaseSpawner } from '../../src/workflow/phases.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

const PLAN1 = '# Plan\n- [ ] add alpha.txt\n';
const phaseOf = (prompt: string): string => /# Workflow \S+ — (assess|review|implement)/.exec(prompt)?.[1] ?? '?';
const alpha: ScriptedTurn = { writeFiles: { 'alpha.txt': 'alpha\n' }, gitCommit: 'add alpha.txt', structured: { milestone: 'add alpha.txt', completed: true, summary: 'added alpha.txt' } };

/** A one-milestone crew; `implement` overrides the implement phase. */
function crew(implement: () => ScriptedTurn = () => alpha): TurnScript {
  return (prompt) => {
    const phase = phaseOf(prompt);
    if (phase === 'assess') return { structured: { plan: PLAN1, contract: 'alpha.txt exists' } };
    if (phase === 'review') return { structured: { verdict: 'approve', notes: 'fine' } };
    if (phase === 'implement') return implement();
    throw new Error(`unexpected prompt: ${prompt.slice(0, 200)}`);
  };
}

const ended = (h: TestHub, runId: string): Promise<any> =>
  eventually(`run ${runId} ended`, async () => { const v = (await h.hub.scripts.view(runId)); return v && v.status !== 'running' ? v : undefined; }, 30_000);

describe('the workflow on the script engine', () => {
  test('a first phase the house budget refuses leaves nothing: no job, no run, no workflow (the run is written in the job\'s transaction)', async () => {
    const fake = new ScriptedLauncher(crew());
    const h = await startTestHub({ processes: fake, config: { budgetUsd: 0.5 } });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    await assert.rejects(h.call('start_workflow', { task: 'add alpha', cwd: repo, phase_limits: { budget_usd: 1 } }), /budget/i);
    assert.deepEqual(await rows(h.hub, sql`SELECT id, status FROM runs WHERE kind = 'script'`), [], 'no run left behind (a cancelled one stayed before)');
    assert.deepEqual(await rows(h.hub, sql`SELECT id FROM workflows`), []);
    assert.deepEqual(await rows(h.hub, sql`SELECT id FROM jobs`), []);
    assert.equal(fake.children.length, 0);
  });

  test('a workflow is a run of the bundled script: its phases are the run\'s calls, each carried by its phase job', async () => {
    const fake = new ScriptedLauncher(crew());
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const s = await h.call('start_workflow', { task: 'add alpha', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.match(w.run_id, /^r-/);
    const run = await ended(h, w.run_id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.equal(run.name, 'implement-review');
    assert.deepEqual(run.result, { workflow_id: s.workflow_id, status: 'succeeded' });
    const phases = (run.calls as any[]).filter((c) => c.kind === 'wf.phase');
    assert.deepEqual(phases.map((c) => [c.label, c.job_id, c.status]), w.jobs.map((j: any) => [`cycle ${j.cycle} ${j.phase}`, j.job_id, 'done']));
    assert.equal(phases[0].job_id, s.assess_job_id, 'the assess job start_workflow answered with is the run\'s first call');
    assert.deepEqual((run.calls as any[]).map((c) => c.kind), ['wf.phase', 'wf.next', 'wf.phase', 'wf.next', 'wf.phase', 'wf.next']);
    // The same through the lead's tool, and each phase job is labelled with its run.
    const got = await h.call('get_run', { run_id: w.run_id });
    assert.equal(got.kind, 'script');
    assert.deepEqual(got.calls.map((c: any) => c.job_id).filter(Boolean), w.jobs.map((j: any) => j.job_id));
    for (const j of w.jobs) assert.ok(JSON.parse((await job(h.hub, j.job_id)).labels_json).includes(`run:${w.run_id}`));
  });

  test('a hub restart in the middle of a phase: the script engine continues the workflow, the phase goes on in its session, no phase job runs twice', async () => {
    const fake1 = new ScriptedLauncher(crew(() => ({ hang: true })));
    const h = await startTestHub({ processes: fake1 });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const s = await h.call('start_workflow', { task: 'add alpha, across a restart', cwd: repo });
    await fake1.launched((c) => phaseOf(c.prompt ?? '') === 'implement');
    const before = await h.hub.workflows.get(s.workflow_id);
    const implJob = before.jobs.find((j) => j.phase === 'implement')!.job_id;
    await h.hub.stop();
    assert.deepEqual(fake1.children.map((c) => phaseOf(c.prompt ?? '')), ['assess', 'review', 'implement']);

    // The new hub: the implement child is continued in its own session (--resume), nothing else runs.
    const fake2 = new ScriptedLauncher((prompt, cmd) => (argValue(cmd.args, '--resume') ? alpha : crew()(prompt, cmd)));
    const h2 = await startTestHub({ dir: h.dir, fake: h.fake, processes: fake2 });
    hubs.push(h2);
    const w = await settled(h2.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.equal(w.run_id, before.run_id, 'the same run goes on');
    assert.deepEqual(w.jobs.map((j: any) => `${j.phase}:${j.cycle}:${j.status}`), ['assess:0:succeeded', 'review:1:succeeded', 'implement:1:succeeded']);
    assert.equal(w.jobs[2].job_id, implJob, 'one job per phase: the interrupted one finished it');
    assert.equal(fake2.spawned.length, 1, 'the new hub started one child');
    assert.equal(argValue(fake2.spawned[0]!.args, '--resume') !== undefined, true, 'and it continued the implement session');
    assert.equal(fake2.spawned[0]!.env.OVERSEER_AGENT_ID, implJob);
    const run = await ended(h2, w.run_id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run));
    assert.deepEqual((run.calls as any[]).filter((c) => c.kind === 'wf.phase').map((c) => c.job_id), w.jobs.map((j: any) => j.job_id));
    assert.equal((run.calls as any[]).filter((c) => c.status !== 'done').length, 0);
    assert.deepEqual((await gitOut(repo, ['log', '--format=%s', `main..${w.branch}`])).split('\n'), ['add alpha.txt']);
  });

  test('a running workflow from before workflows had a run gets one at hub start: its interrupted phase is spawned again', async () => {
    const fake1 = new ScriptedLauncher(crew(() => ({ hang: true })));
    const h = await startTestHub({ processes: fake1 });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const s = await h.call('start_workflow', { task: 'from an older hub', cwd: repo });
    await fake1.launched((c) => phaseOf(c.prompt ?? '') === 'implement');
    const oldRun = (await h.hub.workflows.get(s.workflow_id)).run_id!;
    await h.hub.stop();
    // What an older hub left: the workflow row with its phase job, and no run.
    const db = await reopen(h.hub);
    const st = JSON.parse((await sql<{ state_json: string }>`SELECT state_json FROM workflows WHERE id = ${s.workflow_id}`.execute(db.db)).rows[0]!.state_json);
    delete st.runId;
    await sql`UPDATE workflows SET state_json = ${JSON.stringify(st)} WHERE id = ${s.workflow_id}`.execute(db.db);
    await sql`DELETE FROM script_log WHERE run_id = ${oldRun}`.execute(db.db);
    await sql`DELETE FROM script_calls WHERE run_id = ${oldRun}`.execute(db.db);
    await sql`DELETE FROM runs WHERE id = ${oldRun}`.execute(db.db);
    await db.close();

    const fake2 = new ScriptedLauncher(crew());
    const h2 = await startTestHub({ dir: h.dir, fake: h.fake, processes: fake2 });
    hubs.push(h2);
    const w = await settled(h2.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(w.jobs.map((j: any) => `${j.phase}:${j.cycle}:${j.status}`), ['assess:0:succeeded', 'review:1:succeeded', 'implement:1:interrupted', 'implement:1:succeeded']);
    assert.ok(w.run_id && w.run_id !== oldRun, 'it got a run of its own');
    assert.deepEqual(fake2.children.map((c) => phaseOf(c.prompt ?? '')), ['implement']);
  });

  test('cancel_run of a workflow\'s run cancels the workflow and its phase; a lead\'s script cannot make the workflow\'s calls', async () => {
    const fake = new ScriptedLauncher(crew(() => ({ hang: true })));
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const s = await h.call('start_workflow', { task: 'cancelled through its run', cwd: repo });
    await fake.launched((c) => phaseOf(c.prompt ?? '') === 'implement');
    const w = await h.call('get_workflow', { workflow_id: s.workflow_id });
    const r = await h.call('cancel_run', { run_id: w.run_id, reason: 'not needed' });
    assert.equal(r.status, 'cancelled');
    const c = await eventually('workflow cancelled', async () => { const x = await h.hub.workflows.get(s.workflow_id); return x.status === 'cancelled' ? x : undefined; }, 20_000);
    assert.equal((await job(h.hub, c.jobs.at(-1)!.job_id)).status, 'cancelled');

    // Written out, the call is refused before the script starts; reached at run time, there is no hub to call.
    const refused = await h.call('run_script', { script: `await hub.call('wf.phase', '${s.workflow_id}', { phase: 'assess', cycle: 0 })` }).then(() => null, (e: Error) => e.message);
    assert.match(String(refused), /refused at line 1.*hub/);
    const lead = await h.call('run_script', { script: `const h = globalThis['hu' + 'b']\ntry { await h.call('wf.phase', '${s.workflow_id}', { phase: 'assess', cycle: 0 }) } catch (e) { return e.name + ': ' + e.message }` });
    const v = await ended(h, lead.run_id);
    assert.match(String(v.result), /^TypeError: /, JSON.stringify(v));
    assert.equal(v.calls.length, 0);
  });
  test('two starts of one phase at once make one job: the workflow is claimed in the job\'s own transaction, the loser\'s job rolled back', async () => {
    const fake = new ScriptedLauncher((prompt, cmd) => (phaseOf(prompt) === 'assess' ? { hang: true } : crew()(prompt, cmd)));
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const s = await h.call('start_workflow', { task: 'add alpha', cwd: repo });
    await fake.launched((c) => phaseOf(c.prompt ?? '') === 'assess');
    // Both starts saw the assess job as current (what two ticks on one step at once see).
    const w = await h.hub.workflows.workflow(s.workflow_id);
    const phases = (h.hub.workflows as any).engine.phases as PhaseSpawner;
    const call = { runId: 'r-none', within: async () => undefined };
    const started = await Promise.all([phases.spawn(w, 'review', 1, undefined, call), phases.spawn(w, 'review', 1, undefined, call)]);
    assert.equal(started.filter(Boolean).length, 1, `one start made a job: ${JSON.stringify(started)}`);
    const after = await h.hub.workflows.get(s.workflow_id);
    assert.deepEqual(after.jobs.map((j) => [j.job_id, j.phase]), [[s.assess_job_id, 'assess'], [started.find(Boolean), 'review']]);
    assert.equal((await h.hub.workflows.workflow(s.workflow_id)).current_job, started.find(Boolean));
    await h.call('cancel_workflow', { workflow_id: s.workflow_id });
  });
});
