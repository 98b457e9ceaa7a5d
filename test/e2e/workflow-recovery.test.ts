// End-to-end recovery of workflows, with real claude phase agents against the fake model:
// a branch deleted under a blocked workflow, and a hub that stops while a phase runs (the
// workflow is a script run: the restarted hub continues it, the interrupted phase goes on in its
// own claude session as the same job, and the plan note is restored from the hub's record when it
// was lost meanwhile).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { cwdOf } from '../helpers/steps.js';
import { settled } from '../helpers/workflow.js';
import { promptOf, type Script, type Step } from '../../src/fakemodel/fakeAnthropic.js';
import { job } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop(); });

const structured = (input: Record<string, unknown>): Step => ({ tools: [{ name: 'StructuredOutput', input }] });
const phaseIn = (prompt: string): string => /# Workflow \S+ — (assess|review|implement)/.exec(prompt)?.[1] ?? '?';

/** A one-milestone crew. `implement`: 'good' writes alpha.txt and commits it, 'lazy' does
 * nothing, 'hang' never answers (a long delay the fake aborts when claude goes away). */
function crew(mode: () => 'good' | 'lazy' | 'hang'): Script {
  return (ctx) => {
    const phase = phaseIn(ctx.prompt);
    if (phase === 'assess') return structured({ plan: '# Plan\n- [ ] add alpha.txt\n', contract: 'alpha.txt exists' });
    if (phase === 'review') return structured({ verdict: 'approve', notes: 'fine' });
    const milestone = /## Your milestone\n- \[ \] (.+)/.exec(ctx.prompt)?.[1] ?? '';
    const m = mode();
    if (m === 'hang') return { delayMs: 600_000, text: 'never' };
    if (m === 'lazy') return structured({ milestone, completed: false, summary: 'did not get to it' });
    // By what the working directory shows, not by the turn: a session continued after a hub
    // restart does what is left (the restart message asks it to check the directory first).
    const dir = cwdOf(ctx);
    if (!existsSync(join(dir, 'alpha.txt'))) return { tools: [{ name: 'Write', input: { file_path: join(dir, 'alpha.txt'), content: 'alpha\n' } }] };
    if (execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' }).trim()) {
      return { tools: [{ name: 'Bash', input: { command: 'git add -A && git -c user.name=t -c user.email=t@t commit -qm "add alpha.txt"' } }] };
    }
    return structured({ milestone, completed: true, summary: 'added alpha.txt' });
  };
}

async function setup(script: Script): Promise<{ h: TestHub; repo: string }> {
  const h = await startTestHub({ scripts: { wf: script } });
  hubs.push(h);
  const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
  return { h, repo };
}

/** Start a workflow whose implement phase hangs; resolves once that phase's request reached the model. */
async function startHanging(h: TestHub, repo: string): Promise<{ id: string; implJob: string }> {
  const s = await h.call('start_workflow', { task: '@script:wf add alpha', cwd: repo });
  await h.fake.waitForRequest((r) => phaseIn(promptOf(r.body)) === 'implement', 120_000);
  const w = await h.hub.workflows.get(s.workflow_id);
  assert.equal(w.status, 'running');
  assert.equal(w.phase, 'implement');
  const impl = w.jobs.find((j) => j.phase === 'implement');
  assert.ok(impl);
  assert.equal((await job(h.hub, impl.job_id)).status, 'running');
  return { id: s.workflow_id, implJob: impl.job_id };
}

describe('workflow recovery', () => {
  test('a blocked workflow whose worktree and branch were deleted: resume blocks with branch_missing', async () => {
    const { h, repo } = await setup(crew(() => 'lazy'));
    const s = await h.call('start_workflow', { task: '@script:wf add alpha', cwd: repo, max_cycles: 1 });
    const b = await settled(h.hub, s.workflow_id, 120_000);
    assert.equal(b.status, 'blocked');
    assert.equal(b.blocked_reason.code, 'max_cycles');
    assert.deepEqual(b.jobs.map((j: any) => `${j.phase}:${j.cycle}`), ['assess:0', 'review:1', 'implement:1']);

    await gitOut(repo, ['worktree', 'remove', '--force', b.worktree]);
    await gitOut(repo, ['branch', '-D', b.branch]);
    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id });
    assert.equal(r.status, 'blocked');
    assert.equal(r.blocked_reason.code, 'branch_missing');
    assert.match(r.blocked_reason.message, /no longer exists/);
    assert.equal(r.blocked_reason.phase, 'implement');
    assert.equal(r.blocked_reason.cycle, 1);
    assert.equal(r.jobs.length, 3, 'no phase was spawned without a branch');
    assert.equal(await gitOut(repo, ['branch', '--list', b.branch]), '', 'the branch is not silently re-created');
  });

  test('hub restart: the interrupted phase of a running workflow goes on in its session (the same job) and the workflow succeeds', async () => {
    let mode: 'good' | 'hang' = 'hang';
    const { h, repo } = await setup(crew(() => mode));
    const { id, implJob } = await startHanging(h, repo);
    await h.hub.stop();

    mode = 'good';
    const h2 = await startTestHub({ dir: h.dir, fake: h.fake });
    hubs.push(h2);
    const w = await settled(h2.hub, id, 120_000);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(w.jobs.map((j: any) => `${j.phase}:${j.cycle}:${j.status}`),
      ['assess:0:succeeded', 'review:1:succeeded', 'implement:1:succeeded']);
    assert.equal(w.jobs[2].job_id, implJob, 'no second implement job: the interrupted one was continued');
    assert.equal(w.milestones_done, 1);
    assert.deepEqual((await gitOut(repo, ['log', '--format=%s', `main..${w.branch}`])).split('\n'), ['add alpha.txt']);
  });

  test('hub restart with the plan note deleted meanwhile: the hub restores it from its own record and the workflow goes on', async () => {
    let mode: 'good' | 'hang' = 'hang';
    const { h, repo } = await setup(crew(() => mode));
    const { id, implJob } = await startHanging(h, repo);
    await h.hub.stop();

    const db = new Database(join(h.home, 'state.db'));
    assert.equal(db.prepare('DELETE FROM notes WHERE key = ?').run(`workflow/${id}/plan`).changes, 1);
    db.close();

    mode = 'good';
    const h2 = await startTestHub({ dir: h.dir, fake: h.fake });
    hubs.push(h2);
    const w = await settled(h2.hub, id, 120_000);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(w.jobs.map((j: any) => `${j.phase}:${j.cycle}:${j.status}:${j.job_id === implJob}`),
      ['assess:0:succeeded:false', 'review:1:succeeded:false', 'implement:1:succeeded:true']);
    assert.equal((await h2.call('read_note', { key: `workflow/${id}/plan` })).value, '# Plan\n- [x] add alpha.txt\n');
    assert.match((await h2.call('read_note', { key: `workflow/${id}/worklog/cycle-1-implement` })).value, /^plan note: the plan note was deleted: restored from the hub's record$/m);
    assert.deepEqual((await gitOut(repo, ['log', '--format=%s', `main..${w.branch}`])).split('\n'), ['add alpha.txt']);
  });
});
