// The workflow engine (src/workflow/) in a real hub — real SQLite, real git
// worktrees and commits, the real supervisor and runner — with scripted phase "children"
// (test/helpers/fakeLauncher.ts) instead of claude processes, so each phase takes milliseconds.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { job, reopen } from '../helpers/state.js';
import { getJob } from '../../src/store/sql/jobs.js';
import { sql } from 'kysely';
import { gitOut, initRepo } from '../helpers/git.js';
import { settled } from '../helpers/workflow.js';
import { ScriptedLauncher, argValue, type ScriptedTurn, type TurnScript } from '../helpers/fakeLauncher.js';
import { CONTEXT_CAP } from '../../src/workflow/phases.js';
import { ASSESS_SCHEMA, IMPLEMENT_SCHEMA, REVIEW_SCHEMA } from '../../src/domain/workflow.js';
import { packageRoot, type Config } from '../../src/config.js';
import type { SpawnCmd } from '../../src/launch/types.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop(); });

const phaseOf = (prompt: string): string => /# Workflow \S+ — (assess|review|implement)/.exec(prompt)?.[1] ?? '?';
const cycleOf = (prompt: string): number => Number(/# Workflow \S+ — \w+, cycle (\d+)/.exec(prompt)?.[1] ?? 0);
const milestoneOf = (prompt: string): string => /## Your milestone\n- \[ \] (.+)/.exec(prompt)?.[1] ?? '';
const jobIdOf = (cmd: SpawnCmd): string => cmd.env.OVERSEER_AGENT_ID ?? '';

const PLAN3 = '# Plan\n- [ ] add alpha.txt\n- [ ] add beta.txt\n- [ ] add gamma.txt\n';
const PLAN2 = '# Plan\n- [ ] add alpha.txt\n- [ ] add beta.txt\n';
const PLAN1 = '# Plan\n- [ ] add alpha.txt\n';

interface CrewOpts {
  plan?: string;
  contract?: string;
  assess?: (prompt: string, n: number) => ScriptedTurn | undefined;
  review?: (prompt: string, cycle: number) => ScriptedTurn | undefined;
  implement?: (prompt: string, cmd: SpawnCmd, milestone: string) => ScriptedTurn | Promise<ScriptedTurn> | undefined;
}

/** A well-behaved crew: the plan; approving reviews; implementers that add the file their
 * milestone names ("add X") and commit it. Each role can be overridden (undefined = default). */
function crew(o: CrewOpts = {}): TurnScript {
  let assessN = 0;
  return (prompt, cmd) => {
    const phase = phaseOf(prompt);
    if (phase === 'assess') {
      assessN++;
      return o.assess?.(prompt, assessN) ?? { structured: { plan: o.plan ?? PLAN2, contract: o.contract ?? 'the files exist' } };
    }
    if (phase === 'review') return o.review?.(prompt, cycleOf(prompt)) ?? { structured: { verdict: 'approve', notes: `fine (cycle ${cycleOf(prompt)})` } };
    if (phase === 'implement') {
      const milestone = milestoneOf(prompt);
      return o.implement?.(prompt, cmd, milestone) ?? goodImplement(milestone);
    }
    throw new Error(`unexpected prompt: ${prompt.slice(0, 200)}`);
  };
}

function goodImplement(milestone: string): ScriptedTurn {
  const file = /add (\S+)/.exec(milestone)?.[1] ?? 'x.txt';
  return { writeFiles: { [file]: `${file}\n` }, gitCommit: `add ${file}`, structured: { milestone, completed: true, summary: `added ${file}` } };
}

async function setup(script: TurnScript, config: Partial<Config> = {}): Promise<{ h: TestHub; repo: string; fake: ScriptedLauncher }> {
  const fake = new ScriptedLauncher(script);
  const h = await startTestHub({ processes: fake, config });
  hubs.push(h);
  const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
  return { h, repo, fake };
}

const seq = (w: any): string[] => w.jobs.map((j: any) => `${j.phase}:${j.cycle}`);
const promptOf = async (h: TestHub, jobId: string): Promise<string> => (await job(h.hub, jobId)).prompt;

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
