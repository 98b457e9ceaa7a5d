// End-to-end: implement/review workflows with real claude phase agents against the fake
// model. The fake plays implementer and reviewer; the hub drives the phases, stores plan,
// contract and worklogs as notes, checks milestones off, and commits on the workflow branch.
// What is checked off when implementers edit the plan note is workflow-checkoff.test.ts.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { initRepo } from '../helpers/git.js';
import type { Script, Step, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { settled as settledWithin } from '../helpers/workflow.js';
import { job, row } from '../helpers/state.js';
import { sql, type RawBuilder } from 'kysely';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

const structured = (input: Record<string, unknown>): Step => ({ tools: [{ name: 'StructuredOutput', input }] });
const phaseOf = (ctx: StepContext): string => /# Workflow \S+ — (assess|review|implement)/.exec(ctx.prompt)?.[1] ?? '?';
const workDirOf = (ctx: StepContext): string => /working directory is `([^`]+)`/.exec(ctx.system)?.[1] ?? '.';

/** A well-behaved crew: a two-milestone plan; each implement writes a file and commits it. */
function crew(o: { plan?: (ctx: StepContext, n: number) => string; implement?: 'good' | 'lazy' } = {}): (ctx: StepContext) => Step {
  let assessCalls = 0;
  return (ctx) => {
    const phase = phaseOf(ctx);
    if (phase === 'assess') {
      if (ctx.step === 0) assessCalls++;
      return structured({ plan: o.plan ? o.plan(ctx, assessCalls) : '# Plan\n- [ ] add alpha.txt\n- [ ] add beta.txt\n', contract: 'alpha.txt and beta.txt exist' });
    }
    if (phase === 'review') return structured({ verdict: 'approve', notes: `looks fine (${/cycle (\d+)/.exec(ctx.prompt)?.[1]})` });
    const milestone = /## Your milestone\n- \[ \] (.+)/.exec(ctx.prompt)?.[1] ?? '';
    if (o.implement === 'lazy') return structured({ milestone, completed: false, summary: 'did not get to it' });
    const file = /add (\S+)/.exec(milestone)?.[1] ?? 'x.txt';
    if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(workDirOf(ctx), file), content: `${file}\n` } }] };
    if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: `git add -A && git -c user.name=t -c user.email=t@t commit -qm "add ${file}"` } }] };
    return structured({ milestone, completed: true, summary: `added ${file}` });
  };
}

async function setup(script: Script): Promise<{ h: TestHub; repo: string }> {
  const h = await startTestHub({ scripts: { wf: script } });
  hubs.push(h);
  const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
  return { h, repo };
}

const settled = (hub: TestHub['hub'], id: string): Promise<any> => settledWithin(hub, id, 120_000);

describe('workflows', () => {
  test('two milestones: assess → review → implement → review → implement → done, two commits on the branch', async () => {
    const { h, repo } = await setup(crew());
    const s = await h.call('start_workflow', { task: '@script:wf add two files', cwd: repo, title: 'Two files' });
    assert.equal(s.status, 'running');
    assert.ok(s.assess_job_id);
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(w.jobs.map((j: any) => `${j.phase}:${j.cycle}`), ['assess:0', 'review:1', 'implement:1', 'review:2', 'implement:2']);
    assert.equal(w.milestones_done, 2);
    assert.equal(w.milestones_total, 2);
    const log = execFileSync('git', ['log', '--format=%s', `main..${w.branch}`], { cwd: repo, encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(log, ['add beta.txt', 'add alpha.txt']);
    assert.equal(existsSync(w.worktree), false, 'worktree removed when done');
    const plan = await h.call('read_note', { key: `workflow/${s.workflow_id}/plan` });
    assert.match(plan.value, /- \[x\] add alpha\.txt\n- \[x\] add beta\.txt/);
    assert.equal((await h.call('read_note', { key: `workflow/${s.workflow_id}/contract` })).value, 'alpha.txt and beta.txt exist');
    const logs = await h.call('list_notes', { prefix: `workflow/${s.workflow_id}/worklog/` });
    assert.deepEqual(logs.notes.map((n: any) => n.key.split('/').pop()).sort(), ['cycle-1-implement', 'cycle-1-review', 'cycle-2-implement', 'cycle-2-review']);
  });

  test('an assess phase that yields no milestones is repaired', async () => {
    const { h, repo } = await setup(crew({ plan: (_ctx, n) => (n === 1 ? 'just do it' : '- [ ] add alpha.txt\n') }));
    const s = await h.call('start_workflow', { task: '@script:wf one file', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded');
    assert.deepEqual(w.jobs.slice(0, 2).map((j: any) => j.phase), ['assess', 'assess']);
    const repairPrompt = (await job(h.hub, w.jobs[1].job_id)).prompt;
    assert.match(repairPrompt, /## Repair[\s\S]*no "- \[ \] …" milestone/);
  });

  test('an implementer that never checks a milestone blocks the workflow with zero progress; resume after fixing it succeeds', async () => {
    let lazy = true;
    const base = crew({ implement: 'lazy' });
    const good = crew();
    const { h, repo } = await setup((ctx) => (lazy ? base(ctx) : good(ctx)));
    const s = await h.call('start_workflow', { task: '@script:wf two files', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    assert.equal(w.blocked_reason.code, 'zero_progress');
    assert.match(w.blocked_reason.message, /2 implement phases/);
    assert.equal(w.jobs.filter((j: any) => j.phase === 'implement').length, 2);
    lazy = false;
    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id, phase: 'implement' });
    assert.equal(r.status, 'running');
    const done = await settled(h.hub, s.workflow_id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.milestones_done, 2);
  });

  test('cancel removes the worktree and keeps the branch; resuming a finished workflow is refused', async () => {
    const { h, repo } = await setup((ctx) => (phaseOf(ctx) === 'assess' ? { delayMs: 60_000, text: 'never' } : { text: 'x' }));
    const s = await h.call('start_workflow', { task: '@script:wf slow', cwd: repo });
    const before = await h.call('get_workflow', { workflow_id: s.workflow_id });
    assert.equal(existsSync(before.worktree), true);
    const c = await h.call('cancel_workflow', { workflow_id: s.workflow_id });
    assert.equal(c.status, 'cancelled');
    assert.equal(existsSync(before.worktree), false);
    assert.equal((await job(h.hub, s.assess_job_id)).status, 'cancelled');
    assert.ok(execFileSync('git', ['branch', '--list', before.branch], { cwd: repo, encoding: 'utf8' }).includes(before.branch));
    const { h: h2, repo: repo2 } = await setup(crew());
    const ok = await h2.call('start_workflow', { task: '@script:wf', cwd: repo2 });
    await settled(h2.hub, ok.workflow_id);
    const again = await h2.callRaw('resume_workflow', { workflow_id: ok.workflow_id });
    assert.equal(again.isError, true);
    assert.match(again.text, /finished/);
  });

  test('bad input: empty task, not a git repo, max_cycles out of range, unknown template — nothing half-created', async () => {
    const { h, repo } = await setup(crew());
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ task: '   ', cwd: repo }, /task is empty/],
      [{ task: 'x', cwd: h.dir }, /not inside a git repository/],
      [{ task: 'x', cwd: repo, max_cycles: 0 }, /max_cycles must be between 1 and 50/],
      [{ task: 'x', cwd: repo, max_cycles: 51 }, /max_cycles must be between 1 and 50/],
      [{ task: 'x', cwd: repo, template: 'nope' }, /template/],
    ];
    for (const [args, re] of cases) {
      const r = await h.callRaw('start_workflow', args);
      assert.equal(r.isError, true);
      assert.match(r.text, re);
    }
    const count = async (q: RawBuilder<{ c: number | string }>): Promise<number> => Number((await row(h.hub, q))!.c);
    assert.equal(await count(sql`SELECT COUNT(*) AS c FROM workflows`), 0);
    assert.equal(await count(sql`SELECT COUNT(*) AS c FROM jobs`), 0);
    assert.equal(existsSync(join(repo, '.overseer-worktrees')) ? execFileSync('ls', [join(repo, '.overseer-worktrees')], { encoding: 'utf8' }).trim() : '', '');
  });
});
