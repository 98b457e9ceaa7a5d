// The workflow engine (src/workflow/) in a real hub — real SQLite, real git
// worktrees and commits, the real supervisor and runner — with scripted phase "children"
// (test/helpers/fakeLauncher.ts) instead of claude processes, so each phase takes milliseconds.
// Resumes, cancels, worktrees, restarts, checks and check-offs are in workflow-engine-resume.test.ts (the
// crew and the hub set-up in test/helpers/workflowCrew.ts).
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { settled } from '../helpers/workflow.js';
import { ScriptedLauncher, argValue } from '../helpers/fakeLauncher.js';
import { CONTEXT_CAP } from '../../src/workflow/phases.js';
import { ASSESS_SCHEMA, IMPLEMENT_SCHEMA, REVIEW_SCHEMA } from '../../src/domain/workflow.js';
import { packageRoot } from '../../src/config.js';
import { PLAN1, PLAN2, PLAN3, crew, goodImplement, jobIdOf, phaseOf, promptOf, seq, setupIn } from '../helpers/workflowCrew.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop(); });
const setup = (script: Parameters<typeof setupIn>[1], config?: Parameters<typeof setupIn>[2]) => setupIn(hubs, script, config);

describe('workflow engine', () => {
  test('three milestones: assess → (review → implement) ×3 → succeeded; one commit per milestone on the branch', async () => {
    const { h, repo, fake } = await setup(crew({ plan: PLAN3, contract: 'alpha, beta and gamma exist' }));
    const s = await h.call('start_workflow', { task: 'add three files', cwd: repo, title: 'Three files' });
    assert.equal(s.status, 'running');
    assert.match(s.branch, /^overseer\/wf-three-files-/);
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'implement:1', 'review:2', 'implement:2', 'review:3', 'implement:3']);
    assert.equal(w.jobs[0].job_id, s.assess_job_id);
    assert.ok(w.jobs.every((j: any) => j.status === 'succeeded'));
    assert.equal(w.milestones_done, 3);
    assert.equal(w.milestones_total, 3);
    assert.equal(w.blocked_reason, null);
    assert.ok(w.ended_at);
    const log = (await gitOut(repo, ['log', '--format=%s', `main..${w.branch}`])).split('\n');
    assert.deepEqual(log, ['add gamma.txt', 'add beta.txt', 'add alpha.txt']);
    assert.equal(await gitOut(repo, ['show', `${w.branch}:beta.txt`]), 'beta.txt');
    assert.equal(existsSync(w.worktree), false, 'the worktree is removed when done, the branch stays');
    const plan = await h.call('read_note', { key: `workflow/${s.workflow_id}/plan` });
    assert.equal(plan.value, '# Plan\n- [x] add alpha.txt\n- [x] add beta.txt\n- [x] add gamma.txt\n');
    assert.equal((await h.call('read_note', { key: `workflow/${s.workflow_id}/contract` })).value, 'alpha, beta and gamma exist');
    const logs = await h.call('list_notes', { prefix: `workflow/${s.workflow_id}/worklog/` });
    assert.deepEqual(logs.notes.map((n: any) => n.key.split('/').pop()).sort(),
      ['cycle-1-implement', 'cycle-1-review', 'cycle-2-implement', 'cycle-2-review', 'cycle-3-implement', 'cycle-3-review']);

    // Each phase is an ordinary child: in the worktree, with its phase's --json-schema, its own job id.
    assert.equal(fake.spawned.length, 7);
    for (const [i, cmd] of fake.spawned.entries()) {
      const j = w.jobs[i];
      assert.equal(jobIdOf(cmd), j.job_id);
      assert.equal(cmd.cwd, w.worktree);
      const schema = j.phase === 'assess' ? ASSESS_SCHEMA : j.phase === 'review' ? REVIEW_SCHEMA : IMPLEMENT_SCHEMA;
      assert.deepEqual(JSON.parse(argValue(cmd.args, '--json-schema') ?? 'null'), schema, `${j.phase} schema`);
    }
    // Implement prompts name the top unchecked milestone; later prompts carry plan, contract and worklogs.
    const impl2 = await promptOf(h, w.jobs[4].job_id);
    assert.match(impl2, /## Your milestone\n- \[ \] add beta\.txt/);
    assert.match(impl2, /## Plan\n# Plan\n- \[x\] add alpha\.txt\n- \[ \] add beta\.txt/);
    assert.match(impl2, /## Contract\nalpha, beta and gamma exist/);
    assert.match(impl2, /### cycle-2-review\nverdict: approve\n\nfine \(cycle 2\)/);
    assert.match(await promptOf(h, w.jobs[1].job_id), /This is cycle 1: validate the plan/);
    assert.match(await promptOf(h, w.jobs[3].job_id), /Review the latest commits on the branch/);
  });

  test('a missing contract is repaired twice, then the workflow blocks with missing_artifact', async () => {
    const { h, repo } = await setup(crew({ assess: () => ({ structured: { plan: PLAN2 } }) }));
    const s = await h.call('start_workflow', { task: 'no contract ever', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    assert.deepEqual(seq(w), ['assess:0', 'assess:0', 'assess:0']);
    assert.deepEqual(w.blocked_reason, {
      code: 'missing_artifact', message: 'the assess phase returned no contract, still after 2 repair attempts', phase: 'assess', cycle: 0, job_id: w.jobs[2].job_id,
    });
    assert.doesNotMatch(await promptOf(h, w.jobs[0].job_id), /## Repair/);
    for (const j of w.jobs.slice(1)) assert.match(await promptOf(h, j.job_id), /## Repair\n\nThe previous assess attempt could not be used: the assess phase returned no contract/);
    assert.equal(w.plan, null, 'an unusable assessment stores no plan');
    assert.equal((await h.call('read_note', { key: `workflow/${s.workflow_id}/contract` })).found, false);
  });

  test('a plan without milestones is repaired twice, then blocked no_milestones; repaired in time it goes on', async () => {
    const { h, repo } = await setup(crew({ assess: () => ({ structured: { plan: 'just do it', contract: 'c' } }) }));
    const s = await h.call('start_workflow', { task: 'vague', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    assert.equal(w.blocked_reason.code, 'no_milestones');
    assert.equal(w.jobs.length, 3);

    const { h: h2, repo: repo2 } = await setup(crew({ plan: PLAN1, assess: (_p, n) => (n < 3 ? { structured: { plan: 'nothing', contract: 'c' } } : undefined) }));
    const s2 = await h2.call('start_workflow', { task: 'vague, then fixed', cwd: repo2 });
    const w2 = await settled(h2.hub, s2.workflow_id);
    assert.equal(w2.status, 'succeeded', JSON.stringify(w2.blocked_reason));
    assert.deepEqual(seq(w2), ['assess:0', 'assess:0', 'assess:0', 'review:1', 'implement:1']);
  });

  test('cycle-1 review asking for changes re-assesses the plan with the reviewer\'s notes', async () => {
    const { h, repo } = await setup(crew({
      plan: PLAN1,
      review: (p, cycle) => (cycle === 1 && !/fixed plan/.test(p) ? { structured: { verdict: 'changes_requested', notes: 'milestones too coarse' } } : undefined),
      assess: (_p, n) => (n === 2 ? { structured: { plan: '# fixed plan\n- [ ] add alpha.txt\n', contract: 'c' } } : undefined),
    }));
    const s = await h.call('start_workflow', { task: 're-plan', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'assess:1', 'review:1', 'implement:1']);
    assert.match(await promptOf(h, w.jobs[2].job_id), /## Repair[\s\S]*the reviewer asked for changes to the plan: milestones too coarse/);
    assert.match(w.plan, /# fixed plan/);
  });

  test('approve_plan: after the cycle-1 review the workflow waits for the lead; approved → implement runs', async () => {
    const { h, repo } = await setup(crew({ plan: PLAN1, contract: 'alpha exists' }));
    const s = await h.call('start_workflow', { task: 'needs approval', cwd: repo, approve_plan: true });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'waiting_approval');
    assert.equal(w.phase, 'review');
    assert.equal(w.cycle, 1);
    assert.deepEqual(seq(w), ['assess:0', 'review:1']);
    assert.ok(w.approval_request_id);
    const reqs = await h.call('list_requests', {});
    const r = reqs.requests.find((x: any) => x.request_id === w.approval_request_id);
    assert.ok(r, JSON.stringify(reqs));
    assert.equal(r.kind, 'approval');
    assert.equal(r.status, 'pending');
    assert.match(r.summary, new RegExp(`Approve the plan of workflow ${s.workflow_id}`));
    assert.deepEqual(r.plan, { rationale: PLAN1, resources: 'alpha exists' });

    const resp = await h.call('respond', { request_id: r.request_id, decision: 'approved' });
    assert.equal(resp.status, 'answered');
    const done = await settled(h.hub, s.workflow_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.blocked_reason));
    assert.deepEqual(seq(done), ['assess:0', 'review:1', 'implement:1']);
    assert.equal(done.approval_request_id, null);
    assert.equal((await h.call('list_requests', {})).requests.length, 0);
  });

  test('approve_plan: rejected → blocked plan_rejected with the lead\'s comment; nothing implemented', async () => {
    const { h, repo, fake } = await setup(crew({ plan: PLAN1 }));
    const s = await h.call('start_workflow', { task: 'will be rejected', cwd: repo, approve_plan: true });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'waiting_approval');
    await h.call('respond', { request_id: w.approval_request_id, decision: 'rejected', comment: 'use a database instead' });
    const b = await settled(h.hub, s.workflow_id);
    assert.equal(b.status, 'blocked');
    assert.equal(b.blocked_reason.code, 'plan_rejected');
    assert.match(b.blocked_reason.message, /use a database instead/);
    assert.equal(b.blocked_reason.phase, 'review');
    assert.equal(b.blocked_reason.cycle, 1);
    assert.equal(b.approval_request_id, null);
    assert.deepEqual(seq(b), ['assess:0', 'review:1']);
    assert.equal(fake.spawned.length, 2);
  });

  test('resume of a workflow waiting for approval needs force; forced, the old request is cancelled and the review runs again', async () => {
    const { h, repo, fake } = await setup(crew({ plan: PLAN1 }));
    const s = await h.call('start_workflow', { task: 'approval, resumed', cwd: repo, approve_plan: true });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'waiting_approval');
    const refused = await h.callRaw('resume_workflow', { workflow_id: s.workflow_id });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /still waiting_approval/);
    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id, force: true });
    assert.equal(r.status, 'running', JSON.stringify(r.blocked_reason));
    const again = await settled(h.hub, s.workflow_id);
    assert.equal(again.status, 'waiting_approval', 'the plan is still not approved');
    assert.deepEqual(seq(again), ['assess:0', 'review:1', 'review:1']);
    assert.notEqual(again.approval_request_id, w.approval_request_id);
    const cancelled = (await h.call('list_requests', { status: 'cancelled' })).requests.map((x: any) => x.request_id);
    assert.ok(cancelled.includes(w.approval_request_id));
    const pending = (await h.call('list_requests', {})).requests.map((x: any) => x.request_id);
    assert.deepEqual(pending, [again.approval_request_id]);
    assert.equal(fake.spawned.length, 3);
  });

  test('a plan approval still pending when the hub restarts can be answered afterwards', async () => {
    const fake = new ScriptedLauncher(crew({ plan: PLAN1 }));
    const h = await startTestHub({ processes: fake });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const s = await h.call('start_workflow', { task: 'approve after restart', cwd: repo, approve_plan: true });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'waiting_approval');
    await h.hub.stop();
    const h2 = await startTestHub({ dir: h.dir, fake: h.fake, processes: new ScriptedLauncher(crew({ plan: PLAN1 })) });
    hubs.push(h2);
    await h2.hub.workflows.idle(s.workflow_id);
    assert.equal((await h2.hub.workflows.get(s.workflow_id)).status, 'waiting_approval');
    const pending = (await h2.call('list_requests', {})).requests;
    assert.deepEqual(pending.map((x: any) => x.request_id), [w.approval_request_id]);
    await h2.call('respond', { request_id: w.approval_request_id, decision: 'approved' });
    const done = await settled(h2.hub, s.workflow_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.blocked_reason));
    assert.deepEqual(seq(done), ['assess:0', 'review:1', 'implement:1']);
  });

  test('the reviewer\'s reopen unchecks a milestone, and the next implement phase works on it again', async () => {
    let reopened = false;
    let alphaRuns = 0;
    const { h, repo } = await setup(crew({
      implement: (_p, _c, m) => {
        if (!/alpha/.test(m)) return undefined;
        alphaRuns++;
        return { writeFiles: { 'alpha.txt': `alpha v${alphaRuns}\n` }, gitCommit: `alpha v${alphaRuns}`, structured: { milestone: m, completed: true, summary: 'alpha' } };
      },
      review: (_p, cycle) => {
        if (cycle !== 2 || reopened) return undefined;
        reopened = true;
        return { structured: { verdict: 'changes_requested', notes: 'alpha.txt is wrong', reopen: ['Add alpha.txt', 'not a milestone'] } };
      },
    }));
    const s = await h.call('start_workflow', { task: 'reopen', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    assert.deepEqual(seq(w), ['assess:0', 'review:1', 'implement:1', 'review:2', 'implement:2', 'review:3', 'implement:3']);
    // implement 2 got alpha again (unchecked by the review), implement 3 got beta.
    const impl2 = await promptOf(h, w.jobs[4].job_id);
    assert.match(impl2, /## Your milestone\n- \[ \] add alpha\.txt/);
    assert.match(impl2, /## Plan\n# Plan\n- \[ \] add alpha\.txt\n- \[ \] add beta\.txt/);
    assert.match(await promptOf(h, w.jobs[6].job_id), /## Your milestone\n- \[ \] add beta\.txt/);
    assert.equal((await h.call('read_note', { key: `workflow/${s.workflow_id}/worklog/cycle-2-review` })).value, 'verdict: changes_requested\nre-opened: add alpha.txt\n\nalpha.txt is wrong');
    assert.equal(w.milestones_done, 2);
    assert.deepEqual((await gitOut(repo, ['log', '--format=%s', `main..${w.branch}`])).split('\n'), ['add beta.txt', 'alpha v2', 'alpha v1']);
  });

  test('rate limits rotate the phase to the next fallback model; when every model is limited → blocked rate_limited', async () => {
    const limited = new Set(['model-a']);
    const { h, repo, fake } = await setup(crew({
      plan: PLAN1,
      implement: (_p, cmd) => (limited.has(argValue(cmd.args, '--model') ?? '') ? { isError: true, apiErrorStatus: 429 } : undefined),
    }), { fallbackModels: ['model-b', 'model-c'] });
    const s = await h.call('start_workflow', { task: 'rate limited', cwd: repo, implementer: { provider: 'claude', model: 'model-a' } });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    const impl = w.jobs.filter((j: any) => j.phase === 'implement');
    assert.deepEqual(impl.map((j: any) => [j.model, j.status, j.failure_class, j.cycle]), [['model-a', 'failed', 'rate_limited', 1], ['model-b', 'succeeded', null, 1]]);
    const cmds = fake.spawned.filter((c) => impl.some((j: any) => j.job_id === jobIdOf(c)));
    assert.deepEqual(cmds.map((c) => argValue(c.args, '--model')), ['model-a', 'model-b']);
    assert.equal(argValue(fake.spawned[0]!.args, '--model'), 'model-a', 'assess runs with the implementer model');

    limited.add('model-b').add('model-c');
    const s2 = await h.call('start_workflow', { task: 'all rate limited', cwd: repo, implementer: { provider: 'claude', model: 'model-a' } });
    const b = await settled(h.hub, s2.workflow_id);
    assert.equal(b.status, 'blocked');
    const impl2 = b.jobs.filter((j: any) => j.phase === 'implement');
    assert.deepEqual(impl2.map((j: any) => [j.model, j.failure_class]), [['model-a', 'rate_limited'], ['model-b', 'rate_limited'], ['model-c', 'rate_limited']]);
    assert.equal(b.blocked_reason.code, 'rate_limited');
    assert.equal(b.blocked_reason.phase, 'implement');
    assert.equal(b.blocked_reason.cycle, 1);
    assert.equal(b.blocked_reason.job_id, impl2[2].job_id);
    assert.match(b.blocked_reason.message, /3 tried/);
  });

  test('resuming a workflow blocked rate_limited starts the model rotation over (the role\'s own model first)', async () => {
    const limited = new Set(['model-a', 'model-b', 'model-c']);
    const { h, repo } = await setup(crew({
      plan: PLAN1,
      implement: (_p, cmd) => (limited.has(argValue(cmd.args, '--model') ?? '') ? { isError: true, apiErrorStatus: 429 } : undefined),
    }), { fallbackModels: ['model-b', 'model-c'] });
    const s = await h.call('start_workflow', { task: 'limited, later not', cwd: repo, implementer: { provider: 'claude', model: 'model-a' } });
    const b = await settled(h.hub, s.workflow_id);
    assert.equal(b.blocked_reason?.code, 'rate_limited');
    // The limits of model-a and model-b have reset; model-c is still limited.
    limited.delete('model-a');
    limited.delete('model-b');
    const r = await h.call('resume_workflow', { workflow_id: s.workflow_id });
    assert.equal(r.status, 'running');
    const w = await settled(h.hub, s.workflow_id);
    const resumed = w.jobs.slice(b.jobs.length);
    // resume restarts every role's model rotation: the role's own model is tried first again.
    assert.equal(resumed[0]?.model, 'model-a', JSON.stringify(resumed));
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
  });

  test('a rate-limited implementer does not move the reviewer off its own model', async () => {
    let first = true;
    const { h, repo } = await setup(crew({
      implement: async (_p, cmd, m) => {
        if (first && argValue(cmd.args, '--model') === 'model-a') { first = false; return { isError: true, apiErrorStatus: 429 }; }
        return goodImplement(m);
      },
    }), { fallbackModels: ['model-b', 'model-c'] });
    const s = await h.call('start_workflow', {
      task: 'separate rotations', cwd: repo, implementer: { provider: 'claude', model: 'model-a' }, reviewer: { provider: 'claude', model: 'rev-x' },
    });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
    // After a phase gets through on a fallback, the role's own model is tried first again.
    assert.deepEqual(w.jobs.filter((j: any) => j.phase === 'implement').map((j: any) => j.model), ['model-a', 'model-b', 'model-a']);
    // Each role has its own rotation: the implementer's 429 leaves the reviewer on its model.
    assert.deepEqual(w.jobs.filter((j: any) => j.phase === 'review').map((j: any) => j.model), ['rev-x', 'rev-x']);
  });

  test('three transient failures of one provider move the phase to the workflow\'s other provider', async () => {
    const { h, repo, fake } = await setup(crew({ plan: PLAN1, implement: () => ({ isError: true, resultText: 'tool crashed' }) }));
    const s = await h.call('start_workflow', {
      task: 'crashing claude implementer', cwd: repo,
      implementer: { provider: 'claude', model: 'claude-x' }, reviewer: { provider: 'codex' },
    });
    // The scripted launcher cannot play Codex's JSONL, so every codex attempt ends without a
    // result (crashed, transient): the codex reviewer falls back to claude after 3, and the
    // crashing claude implementer falls back to codex after 3, whose attempts crash too.
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    const by = (phase: string): string[] => w.jobs.filter((j: any) => j.phase === phase).map((j: any) => j.provider);
    assert.deepEqual(by('review'), ['codex', 'codex', 'codex', 'claude']);
    assert.deepEqual(by('implement'), ['claude', 'claude', 'claude', 'codex', 'codex', 'codex']);
    const firstCodexImpl = w.jobs.find((j: any) => j.phase === 'implement' && j.provider === 'codex');
    assert.equal(firstCodexImpl.model, null, 'the claude model is not passed to codex');
    assert.ok(fake.spawned.some((c) => c.args[0] === 'exec' && argValue(c.args, '-m') === undefined));
  });

  test('transient phase failures are retried up to 3 times, then blocked phase_failed; an auth failure blocks at once', async () => {
    const { h, repo } = await setup(crew({ plan: PLAN1, implement: () => ({ isError: true, resultText: 'tool crashed' }) }));
    const s = await h.call('start_workflow', { task: 'crashing implementer', cwd: repo });
    const w = await settled(h.hub, s.workflow_id);
    assert.equal(w.status, 'blocked');
    const impl = w.jobs.filter((j: any) => j.phase === 'implement');
    assert.equal(impl.length, 3);
    assert.ok(impl.every((j: any) => j.failure_class === 'crashed'));
    assert.equal(w.blocked_reason.code, 'phase_failed');
    assert.match(w.blocked_reason.message, /failed 3 times \(last: crashed: tool crashed\)/);

    const { h: h2, repo: repo2 } = await setup(crew({ assess: () => ({ isError: true, apiErrorStatus: 401, resultText: 'Invalid API key' }) }));
    const s2 = await h2.call('start_workflow', { task: 'bad key', cwd: repo2 });
    const w2 = await settled(h2.hub, s2.workflow_id);
    assert.equal(w2.status, 'blocked');
    assert.deepEqual(seq(w2), ['assess:0']);
    assert.equal(w2.blocked_reason.code, 'phase_failed');
    assert.match(w2.blocked_reason.message, /the assess phase failed \(auth\)/);
  });

  for (const size of [5_000, 20_000]) {
    test(`inline context is capped at ${CONTEXT_CAP} characters (20 worklogs of ${size} chars) and keeps the plan and the newest worklog`, async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => { release = r; });
      const { h, repo, fake } = await setup(crew({ implement: async (_p, _c, m) => { await gate; return goodImplement(m); } }));
      const s = await h.call('start_workflow', { task: 'big context', cwd: repo });
      await fake.launched((c) => phaseOf(c.prompt ?? '') === 'implement');
      for (let i = 0; i < 20; i++) {
        const mark = `<<worklog ${String(i).padStart(2, '0')}>>`;
        await h.call('write_note', { key: `workflow/${s.workflow_id}/worklog/zz-extra-${String(i).padStart(2, '0')}`, value: mark + 'w'.repeat(size - mark.length) });
      }
      release();
      const w = await settled(h.hub, s.workflow_id);
      assert.equal(w.status, 'succeeded', JSON.stringify(w.blocked_reason));
      const review2 = w.jobs.find((j: any) => j.phase === 'review' && j.cycle === 2);
      const prompt = await promptOf(h, review2.job_id);
      const template = readFileSync(join(packageRoot(), 'prompts', 'workflow-review.md'), 'utf8');
      assert.ok(prompt.length <= CONTEXT_CAP + template.length + 'big context'.length + 1_000, `prompt is ${prompt.length} characters`);
      assert.match(prompt, /## Plan\n# Plan\n- \[x\] add alpha\.txt\n- \[ \] add beta\.txt/);
      assert.match(prompt, /## Contract\nthe files exist/);
      assert.match(prompt, /### cycle-1-implement\nmilestone: add alpha\.txt\ncompleted: true/, 'the newest worklog is kept');
      assert.match(prompt, /<<worklog 19>>/, 'the newest injected worklog is kept');
      assert.doesNotMatch(prompt, /<<worklog 00>>/, 'old worklogs are left out');
      assert.doesNotMatch(prompt, /context cut at/, 'dropping older worklogs was enough');
    });
  }
});
