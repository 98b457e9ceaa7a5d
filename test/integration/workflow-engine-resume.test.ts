// The workflow engine, continued (split from workflow-engine.test.ts so that each file stays well under
// the runner's per-file timeout on a loaded 2-core machine): resumes, cancels, worktrees, restarts,
// checks, and the hub's ownership of milestone check-offs.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { job, reopen } from '../helpers/state.js';
import { getJob } from '../../src/store/sql/jobs.js';
import { sql } from 'kysely';
import { gitOut, initRepo } from '../helpers/git.js';
import { settled } from '../helpers/workflow.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import type { SpawnCmd } from '../../src/launch/types.js';
import { PLAN1, PLAN2, crew, cycleOf, goodImplement, jobIdOf, phaseOf, promptOf, seq, setupIn } from '../helpers/workflowCrew.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop(); });
const setup = (script: Parameters<typeof setupIn>[1], config?: Parameters<typeof setupIn>[2]) => setupIn(hubs, script, config);

describe('workflow engine: resume, cancel, worktrees, restarts, checks', () => {
  test('max_cycles 1 with two milestones → blocked max_cycles after the first implement', async () => {
    const { h, repo } = await setup(crew());
    const s = await h.call('start_workflow', { task: 'too short', cwd: repo, max_cycles: 1 });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'implement:1']);
    assert.deepEqual(w.blocked_reason, { code: 'max_cycles', message: 'max_cycles (1) ran out with milestones left', phase: 'implement', cycle: 1, job_id: w.jobs[2].job_id });
    assert.equal(w.milestones_done, 1);
    assert.equal(existsSync(w.worktree), true, 'a blocked workflow keeps its worktree');
  });

  test('resume_workflow with phase and cycle restarts from there, with fresh counters; bad phase/cycle is refused', async () => {
    let lazy = true;
    const { h, repo } = await setup(crew({ implement: (_p, _c, m) => (lazy ? { structured: { milestone: m, completed: false, summary: 'not yet' } } : undefined) }));
    const s = await h.call('start_workflow', { task: 'lazy first', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    assert.equal(w.blocked_reason.code, 'zero_progress');
    assert.equal(w.cycle, 2);

    for (const [args, re] of [
      [{ phase: 'review', cycle: 0 }, /cycle must be 1 or more/],
      [{ phase: 'implement', cycle: 11 }, /past max_cycles \(10\)/],
    ] as const) {
      const r = await h.callRaw('resume_workflow', { workflow_id: s.workflow_id, ...args });
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(r.text, re);
    }
    assert.equal((await h.call('get_workflow', { workflow_id: s.workflow_id })).status, 'blocked', 'a refused resume changes nothing');

    lazy = false;
    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id, phase: 'review', cycle: 2 });
    assert.equal(r.status, 'running');
    assert.equal(r.blocked_reason, null);
    assert.equal(r.phase, 'review');
    assert.equal(r.cycle, 2);
    const done = await settled(h.hub, s.workflow_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.blocked_reason));
    assert.deepEqual(seq(done).slice(w.jobs.length), ['review:2', 'implement:2', 'review:3', 'implement:3']);
    assert.equal(done.milestones_done, 2);
  });

  test('resume_workflow from a later phase needs a plan', async () => {
    const { h, repo } = await setup(crew({ assess: () => ({ structured: { plan: PLAN1 } }) }));
    const s = await h.call('start_workflow', { task: 'no contract', cwd: repo });
    assert.equal((await settled(h.hub, s.workflow_id)).status, 'blocked');
    const r = await h.callRaw('resume_workflow', { workflow_id: s.workflow_id, phase: 'implement', cycle: 1 });
    assert.equal(r.isError, true);
    assert.match(r.text, /has no plan yet: resume from phase "assess"/);
  });

  test('resume of a running workflow is refused without force; with force its phase job is cancelled and a new one spawned', async () => {
    let hang = true;
    const { h, repo, fake } = await setup(crew({ plan: PLAN1, assess: () => (hang ? { hang: true } : undefined) }));
    const s = await h.call('start_workflow', { task: 'stuck assess', cwd: repo });
    const stuck = await fake.launched((c) => phaseOf(c.prompt ?? '') === 'assess');
    assert.equal((await job(h.hub, s.assess_job_id)).status, 'running');

    const refused = await h.callRaw('resume_workflow', { workflow_id: s.workflow_id });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /still running \(phase assess, cycle 0\)\. Pass force: true/);
    assert.equal((await job(h.hub, s.assess_job_id)).status, 'running', 'refused: the phase keeps running');

    hang = false;
    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id, force: true });
    assert.equal(r.status, 'running');
    assert.equal(r.blocked_reason, null);
    assert.equal((await job(h.hub, s.assess_job_id)).status, 'cancelled');
    assert.equal(stuck.exitInfo?.signal, 'SIGTERM');
    assert.deepEqual(r.jobs.map((j: any) => `${j.phase}:${j.status}`), ['assess:cancelled', `assess:${r.jobs[1].status}`]);
    assert.notEqual(r.jobs[1].status, 'cancelled');
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'assess:0', 'review:1', 'implement:1']);
  });

  test('a worktree removed while blocked is re-attached on its branch when the workflow resumes', async () => {
    let lazy = true;
    const { h: h2, repo: repo2 } = await setup(crew({ implement: (_p, _c, m) => (lazy ? { structured: { milestone: m, completed: false, summary: 'no' } } : undefined) }));
    const s2 = await h2.call('start_workflow', { task: 'lose the worktree', cwd: repo2 });
    const b = await settled(h2.hub, s2.workflow_id);
    assert.equal(b.status, 'blocked');
    await gitOut(repo2, ['worktree', 'remove', '--force', b.worktree]);
    assert.equal(existsSync(b.worktree), false);
    lazy = false;
    const r = await h2.call('resume_workflow', { workflow_id: s2.workflow_id, phase: 'implement', cycle: 2 });
    assert.equal(r.status, 'running', JSON.stringify(r.blocked_reason));
    assert.equal(existsSync(b.worktree), true, 're-attached');
    assert.equal(await gitOut(b.worktree, ['rev-parse', '--abbrev-ref', 'HEAD']), b.branch);
    const done = await settled(h2.hub, s2.workflow_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.blocked_reason));
    assert.deepEqual((await gitOut(repo2, ['log', '--format=%s', `main..${b.branch}`])).split('\n'), ['add beta.txt', 'add alpha.txt']);
  });

  test('a deleted branch blocks the resumed workflow with branch_missing and spawns nothing', async () => {
    const { h, repo, fake } = await setup(crew({ assess: () => ({ structured: { plan: PLAN1 } }) }));
    const s = await h.call('start_workflow', { task: 'lose the branch', cwd: repo });
    const b = await settled(h.hub, s.workflow_id);
    assert.equal(b.status, 'blocked');
    await gitOut(repo, ['worktree', 'remove', '--force', b.worktree]);
    await gitOut(repo, ['branch', '-D', b.branch]);
    const before = fake.spawned.length;
    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id });
    assert.equal(r.status, 'blocked');
    assert.equal(r.blocked_reason.code, 'branch_missing');
    assert.match(r.blocked_reason.message, new RegExp(`branch ${b.branch.replace(/[/.]/g, '\\$&')} no longer exists`));
    assert.equal(fake.spawned.length, before);
  });

  test('cancel while waiting for plan approval closes the request and removes the worktree; resume re-attaches it and goes on', async () => {
    const { h, repo } = await setup(crew({ plan: PLAN1 }));
    const s = await h.call('start_workflow', { task: 'cancel me', cwd: repo, approve_plan: true });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'waiting_approval');
    const c = await h.call('cancel_workflow', { workflow_id: s.workflow_id });
    assert.equal(c.status, 'cancelled');
    assert.equal(existsSync(w.worktree), false);
    assert.equal((await h.call('list_requests', {})).requests.length, 0);
    const closed = (await h.call('list_requests', { status: 'cancelled' })).requests.find((r: any) => r.request_id === w.approval_request_id);
    assert.ok(closed, 'the approval request is closed as cancelled');
    assert.match(await gitOut(repo, ['branch', '--list', w.branch]), /overseer\/wf-/);

    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id, phase: 'implement', cycle: 1 });
    assert.equal(r.status, 'running', JSON.stringify(r.blocked_reason));
    const done = await settled(h.hub, s.workflow_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.blocked_reason));
    assert.deepEqual(seq(done), ['assess:0', 'review:1', 'implement:1']);
  });

  test('worktree: false runs every phase in cwd and commits on its current branch', async () => {
    const { h, repo, fake } = await setup(crew({ plan: PLAN1 }));
    const s = await h.call('start_workflow', { task: 'in place', cwd: repo, worktree: false });
    assert.equal(s.branch, null);
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.equal(w.worktree, null);
    assert.ok(fake.spawned.every((c) => c.cwd === repo));
    assert.equal(await gitOut(repo, ['log', '-1', '--format=%s', 'main']), 'add alpha.txt');
    assert.equal(existsSync(join(repo, '.overseer-worktrees')), false);
  });

  test('three workflows at once in one repository each finish on their own branch', async () => {
    const { h, repo } = await setup(crew());
    const ids = await Promise.all(['one', 'two', 'three'].map(async (t) => (await h.call('start_workflow', { task: `parallel ${t}`, title: `Parallel ${t}`, cwd: repo })).workflow_id as string));
    const ws = await Promise.all(ids.map((id) => settled(h.hub, id)));
    for (const w of ws) {
      assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
      assert.deepEqual((await gitOut(repo, ['log', '--format=%s', `main..${w.branch}`])).split('\n'), ['add beta.txt', 'add alpha.txt']);
    }
    assert.equal(new Set(ws.map((w) => w.branch)).size, 3);
  });

  test('after a hub restart, a phase that succeeded while the hub was down is taken as it ended', async () => {
    const fake = new ScriptedLauncher(crew({ plan: PLAN1, assess: () => ({ hang: true }) }));
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const s = await h.call('start_workflow', { task: 'restart', cwd: repo });
    await fake.launched((c) => phaseOf(c.prompt ?? '') === 'assess');
    await h.hub.stop();
    await assert.rejects(sql`SELECT 1`.execute(h.hub.ctx.sql.db), 'the hub closed its database');
    // The hub died between the phase's end and the engine's step: the job row says succeeded.
    const db = await reopen(h.hub);
    assert.equal((await getJob(db.db, s.assess_job_id))!.status, 'interrupted');
    await sql`UPDATE jobs SET status = 'succeeded', failure_class = NULL, error = NULL, structured_json = ${JSON.stringify({ plan: PLAN1, contract: 'alpha exists' })} WHERE id = ${s.assess_job_id}`.execute(db.db);
    await db.close();

    const fake2 = new ScriptedLauncher(crew({ plan: '- [ ] must not be asked\n' }));
    const h2 = await startTestHub({ dir: h.dir, fake: h.fake, processes: fake2 });
    hubs.push(h2);
    const w = await settled(h2.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'implement:1']);
    assert.equal(w.jobs[0].job_id, s.assess_job_id, 'no new assess phase');
    assert.ok(fake2.children.every((c) => phaseOf(c.prompt ?? '') !== 'assess'));
    assert.equal((await h2.call('read_note', { key: `workflow/${s.workflow_id}/contract` })).value, 'alpha exists');
  });

  test('checks run before each later review, and their results are in the review prompt', async () => {
    const { h, repo } = await setup(crew());
    const s = await h.call('start_workflow', { task: 'checked', cwd: repo, checks: ['command:test -f alpha.txt', 'command:test -f beta.txt'] });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    const review1 = await promptOf(h, w.jobs.find((j: any) => j.phase === 'review' && j.cycle === 1).job_id);
    const review2 = await promptOf(h, w.jobs.find((j: any) => j.phase === 'review' && j.cycle === 2).job_id);
    assert.doesNotMatch(review1, /Results of the workflow's checks/);
    assert.match(review2, /Results of the workflow's checks, run by the hub just now:\n- command:test -f alpha\.txt: passed\n- command:test -f beta\.txt: FAILED — `test -f beta\.txt` exited 1/);
  });
});

/** The plan note as an implement phase's agent writes it with write_note (its own job as author). */
async function agentEditsPlan(h: TestHub, cmd: SpawnCmd, edit: (plan: string) => string): Promise<void> {
  const key = /workflow\/(w-[0-9a-f]+)\//.exec((await job(h.hub, jobIdOf(cmd))).prompt)?.[0] ?? '';
  const cur = (await h.hub.notes.get(`${key}plan`))!;
  await h.hub.notes.write({ key: `${key}plan`, value: edit(cur.value) }, { role: 'agent', jobId: jobIdOf(cmd) });
}
const checkIn = (m: string) => (plan: string): string => plan.replace(`- [ ] ${m}`, `- [x] ${m}`);
const worklog = async (h: TestHub, id: string, name: string): Promise<string> => (await h.call('read_note', { key: `workflow/${id}/worklog/${name}` })).value;
const branchLog = async (repo: string, w: any): Promise<string[]> => (await gitOut(repo, ['log', '--format=%s', `main..${w.branch}`])).split('\n');

describe('workflow check-offs: the hub owns them', () => {
  test('the reproduction: implementers that check their own milestone in the plan note — each is checked off once, by the hub, and success needs both files', async () => {
    const seen: { done: number; plan: string; note: string }[] = [];
    let h!: TestHub;
    const s0 = await setup(crew({
      implement: async (_p, cmd, m) => {
        await agentEditsPlan(h, cmd, checkIn(m));
        const id = (await job(h.hub, jobIdOf(cmd))).workflow_id!;
        await h.hub.workflows.idle(id);
        const v = await h.hub.workflows.get(id);
        seen.push({ done: v.milestones_done, plan: v.plan ?? '', note: (await h.hub.notes.get(`workflow/${id}/plan`))!.value });
        return goodImplement(m);
      },
    }));
    h = s0.h;
    const s = await h.call('start_workflow', { task: 'add two files, checking them off yourself', cwd: s0.repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'implement:1', 'review:2', 'implement:2']);
    assert.deepEqual(await branchLog(s0.repo, w), ['add beta.txt', 'add alpha.txt']);
    assert.equal(w.milestones_done, 2);
    // While the first implementer ran, its own check was reverted at once and not counted.
    assert.deepEqual(seen[0], { done: 0, plan: PLAN2, note: PLAN2 });
    assert.deepEqual(seen[1], { done: 1, plan: '# Plan\n- [x] add alpha.txt\n- [ ] add beta.txt\n', note: '# Plan\n- [x] add alpha.txt\n- [ ] add beta.txt\n' });
    assert.equal((await h.call('read_note', { key: `workflow/${s.workflow_id}/plan` })).value, '# Plan\n- [x] add alpha.txt\n- [x] add beta.txt\n');
    const log1 = await worklog(h, s.workflow_id, 'cycle-1-implement');
    assert.match(log1, /^completed: true \(checked off: add alpha\.txt\)$/m);
    assert.match(log1, new RegExp(`^plan note: ${w.jobs[2].job_id} edited the plan note \\(version \\d+\\) outside the hub; restored it: "add alpha\\.txt" was checked, but no implement phase reported it completed$`, 'm'));
    assert.match(await worklog(h, s.workflow_id, 'cycle-2-implement'), /^completed: true \(checked off: add beta\.txt\)$/m);
  });

  test('a greedy implementer that checks every milestone in the note and completes only the first does not end the workflow', async () => {
    const { h, repo } = await setup(crew({
      implement: async (_p, cmd, m) => {
        if (/alpha/.test(m)) await agentEditsPlan(h, cmd, (p) => p.replace(/- \[ \]/g, '- [x]'));
        return goodImplement(m);
      },
    }));
    const s = await h.call('start_workflow', { task: 'greedy', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'implement:1', 'review:2', 'implement:2']);
    assert.deepEqual(await branchLog(repo, w), ['add beta.txt', 'add alpha.txt']);
    assert.match(await promptOf(h, w.jobs[4].job_id), /## Your milestone\n- \[ \] add beta\.txt/);
    assert.match(await worklog(h, s.workflow_id, 'cycle-1-implement'), /restored it: "add alpha\.txt" was checked, but no implement phase reported it completed; "add beta\.txt" was checked, but no implement phase reported it completed$/m);
  });

  test('an agent that deletes or rewords milestones in the note cannot shrink the work: the note is restored, both are still required', async () => {
    const { h, repo } = await setup(crew({
      implement: async (_p, cmd, m) => {
        if (/alpha/.test(m)) await agentEditsPlan(h, cmd, () => '# Plan\n- [x] add alpha.txt\n- [x] add beta.txt (not needed)\n');
        return goodImplement(m);
      },
    }));
    const s = await h.call('start_workflow', { task: 'reword', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(await branchLog(repo, w), ['add beta.txt', 'add alpha.txt']);
    assert.equal(w.plan, '# Plan\n- [x] add alpha.txt\n- [x] add beta.txt\n');
    assert.match(await worklog(h, s.workflow_id, 'cycle-1-implement'), /"add beta\.txt" was removed or reworded; "add beta\.txt \(not needed\)" was added/);
  });

  test('an implement phase that names another open milestone gets exactly that one checked off, not the top one; the name is matched tolerantly', async () => {
    const { h, repo } = await setup(crew({
      implement: (p, _c, m) => (cycleOf(p) === 1
        ? { ...goodImplement('add beta.txt'), structured: { milestone: '- [ ] ADD beta.txt.', completed: true, summary: 'did beta first' } }
        : goodImplement(m)),
    }));
    const s = await h.call('start_workflow', { task: 'out of order', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'implement:1', 'review:2', 'implement:2']);
    assert.match(await promptOf(h, w.jobs[2].job_id), /## Your milestone\n- \[ \] add alpha\.txt/);
    assert.match(await promptOf(h, w.jobs[4].job_id), /## Your milestone\n- \[ \] add alpha\.txt/, 'alpha is still open after cycle 1');
    assert.match(await worklog(h, s.workflow_id, 'cycle-1-implement'), /^completed: true \(checked off: add beta\.txt\)$/m);
    assert.deepEqual(await branchLog(repo, w), ['add alpha.txt', 'add beta.txt']);
  });

  test('an unknown milestone, or completed: false with the box checked in the note: nothing is checked off, it is in the worklog, and it is zero progress', async () => {
    const { h, repo } = await setup(crew({
      implement: async (p, cmd, m) => {
        if (cycleOf(p) === 1) return { writeFiles: { 'gamma.txt': 'g\n' }, gitCommit: 'add gamma.txt', structured: { milestone: 'add gamma.txt', completed: true, summary: 'gamma' } };
        await agentEditsPlan(h, cmd, checkIn(m));
        return { structured: { milestone: m, completed: false, summary: 'not yet' } };
      },
    }));
    const s = await h.call('start_workflow', { task: 'nothing real', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    assert.equal(w.blocked_reason.code, 'zero_progress');
    assert.equal(w.milestones_done, 0);
    assert.equal((await h.call('read_note', { key: `workflow/${s.workflow_id}/plan` })).value, PLAN2);
    assert.match(await worklog(h, s.workflow_id, 'cycle-1-implement'),
      /^completed: true; NOT checked off: no milestone of the plan matches "add gamma\.txt" \(the plan's open milestones: "add alpha\.txt", "add beta\.txt"\)$/m);
    const log2 = await worklog(h, s.workflow_id, 'cycle-2-implement');
    assert.match(log2, /^completed: false \(nothing checked off\)$/m);
    assert.match(log2, /^plan note: .* restored it: "add alpha\.txt" was checked, but no implement phase reported it completed$/m);
  });

  test('the lead\'s edit of the plan note is the plan: an added milestone must be done too; a box the lead checks is not counted', async () => {
    const { h, repo } = await setup(crew({ contract: 'c' }));
    const s = await h.call('start_workflow', { task: 'lead edits', cwd: repo, approve_plan: true });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'waiting_approval');
    await h.call('write_note', { key: `workflow/${s.workflow_id}/plan`, value: '# Plan\n- [x] add alpha.txt\n- [ ] add beta.txt\n- [ ] add gamma.txt\n' });
    await h.hub.workflows.idle(s.workflow_id);
    const edited = await h.call('get_workflow', { workflow_id: s.workflow_id });
    assert.deepEqual([edited.milestones_done, edited.milestones_total], [0, 3]);
    assert.equal(edited.plan, '# Plan\n- [ ] add alpha.txt\n- [ ] add beta.txt\n- [ ] add gamma.txt\n');
    await h.call('respond', { request_id: w.approval_request_id, decision: 'approved' });
    const done = await settled(h.hub, s.workflow_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.blocked_reason));
    assert.deepEqual(await branchLog(repo, done), ['add gamma.txt', 'add beta.txt', 'add alpha.txt']);
    assert.match(await worklog(h, s.workflow_id, 'cycle-1-implement'),
      /^plan note: the lead's edit of the plan note \(version \d+\) is the plan now: 3 milestones, 0 done .*; not counted: "add alpha\.txt" was checked, but no implement phase reported it completed$/m);
    // Once it succeeded, the plan is history: even the lead's edit is reverted.
    await h.call('write_note', { key: `workflow/${s.workflow_id}/plan`, value: '# Plan\n- [x] add alpha.txt\n' });
    await h.hub.workflows.idle(s.workflow_id);
    const after = await h.call('get_workflow', { workflow_id: s.workflow_id });
    assert.deepEqual([after.status, after.milestones_done, after.milestones_total], ['succeeded', 3, 3]);
    assert.equal((await h.call('read_note', { key: `workflow/${s.workflow_id}/plan` })).value, '# Plan\n- [x] add alpha.txt\n- [x] add beta.txt\n- [x] add gamma.txt\n');
  });

  test('a workflow from before the hub kept a record adopts its plan note once; with neither record nor note a restart blocks missing_artifact', async () => {
    const fake = new ScriptedLauncher(crew({ implement: () => ({ hang: true }) }));
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const a = await h.call('start_workflow', { task: 'legacy one', cwd: repo });
    const b = await h.call('start_workflow', { task: 'legacy two', cwd: repo });
    await fake.launched((c) => phaseOf(c.prompt ?? '') === 'implement' && (c.prompt ?? '').includes(a.workflow_id));
    await fake.launched((c) => phaseOf(c.prompt ?? '') === 'implement' && (c.prompt ?? '').includes(b.workflow_id));
    await h.hub.stop();
    const db = await reopen(h.hub);
    await sql`UPDATE workflows SET plan_text = NULL`.execute(db.db);
    await sql`DELETE FROM workflow_milestones`.execute(db.db);
    await sql`UPDATE notes SET value = ${'# Plan\n- [x] add alpha.txt\n- [ ] add beta.txt\n'} WHERE key = ${`workflow/${a.workflow_id}/plan`}`.execute(db.db);
    await sql`DELETE FROM notes WHERE key = ${`workflow/${b.workflow_id}/plan`}`.execute(db.db);
    await db.close();

    const h2 = await startTestHub({ dir: h.dir, fake: h.fake, processes: new ScriptedLauncher(crew()) });
    hubs.push(h2);
    const wa = await settled(h2.hub, a.workflow_id);
    assert.equal(wa.status, 'succeeded', JSON.stringify(wa.blocked_reason));
    assert.deepEqual(seq(wa).slice(-1), ['implement:1']);
    assert.match(await promptOf(h2, wa.jobs.at(-1).job_id), /## Your milestone\n- \[ \] add beta\.txt/);
    await h2.hub.workflows.idle(b.workflow_id);
    const wb = await h2.hub.workflows.get(b.workflow_id);
    assert.equal(wb.status, 'blocked');
    assert.equal(wb.blocked_reason?.code, 'missing_artifact');
    assert.match(wb.blocked_reason?.message ?? '', /has no plan/);
  });
});
