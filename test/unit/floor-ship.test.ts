// READY TO SHIP and an approval's plan in the floor model (src/floor/model.ts, shipView.ts), on
// plain rows with an injected `now`: what a lane row carries (checks passed / failed / not run,
// overlaps only with branches that can still collide, age), that the lane is narrowed to a
// project like the rest, and that a request's plan comes out as its labelled sections.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFloor, type FloorInput } from '../../src/floor/model.js';
import type { SendBackRow } from '../../src/store/sql/sendBacks.js';
import type { JobRow } from '../../src/store/jobs.js';
import type { FullRequestRow } from '../../src/store/sql/requests.js';
import type { OverlapRow } from '../../src/store/overlaps.js';

const NOW = 1_800_000_000_000;
let seq = 0;
function job(id: string, o: Partial<JobRow> = {}): JobRow {
  seq++;
  return {
    id, seq, parent_id: null, depth: 1, title: `T ${id}`, prompt: 'p', provider: 'claude', model: 'm', cwd: '/r', work_dir: `/w/${id}`, repo_root: '/r',
    worktree: 1, branch: `overseer/${id}`, base_commit: 'abc', priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
    checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'succeeded', status_message: null, progress: null, result: 'ok',
    outcome: null, error: null, failure_class: null, session_id: null, turns: 0, cost_usd: 0, pid: null, pr_url: null, diff_stat: '1 file changed, 2 insertions(+)', git_note: null,
    token_hash: null, resume_message: null, created_at: NOW - 600_000, started_at: NOW - 500_000, ended_at: NOW - 120_000, updated_at: NOW - 120_000,
    workflow_id: null, phase: null, cycle: null, json_schema: null, structured_json: null, input_tokens: 0, output_tokens: 0, cost_unknown: 0,
    cache_read_tokens: 0, cache_creation_tokens: 0, thread_usage_json: null, lock_violations_json: null, last_event_at: null, last_activity: null, ...o,
  } as JobRow;
}
const overlap = (id: number, a: string, b: string, file: string): OverlapRow => ({ id, repo_root: '/r', file, job_a: a, job_b: b, locks_conflict: 0, detected_at: NOW - 1000, cleared_at: NOW - 500, lead_seen_at: null });
const input = (o: Partial<FloorInput>): FloorInput => ({ jobs: [], requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 8, source: 'database', ...o });

describe('roles on the floor', () => {
  test('a job row carries its role when it is not implementer, and watch shows it after the title (running, queued, done)', async () => {
    const { runningLines, queuedLines, doneLines } = await import('../../src/tui/format.js');
    const f = buildFloor(input({ jobs: [job('r', { status: 'running', role: 'reviewer' } as Partial<JobRow>), job('i', { status: 'running', role: 'implementer' } as Partial<JobRow>), job('q', { status: 'queued', role: 'planner' } as Partial<JobRow>), job('d', { role: 'auditor' } as Partial<JobRow>)] }), NOW);
    const r = f.running.find((j) => j.job_id === 'r')!;
    assert.equal(r.role, 'reviewer');
    assert.equal('role' in f.running.find((j) => j.job_id === 'i')!, false, 'an implementer has no role field');
    assert.match(runningLines(r, NOW, 120).main, /T r \[reviewer\]/);
    assert.doesNotMatch(runningLines(f.running.find((j) => j.job_id === 'i')!, NOW, 120).main, /\[implementer\]/);
    assert.match(queuedLines(f.queued.find((j) => j.job_id === 'q')!, 120).main, /T q \[planner\]/);
    assert.match(doneLines(f.done.find((j) => j.job_id === 'd')!, 120).main, /T d \[auditor\]/);
  });
});

describe('READY TO SHIP in the floor model', () => {
  test('each row: branch, diff stat, checks passed / failed / not run with why, age, the merge command', () => {
    const a = job('a');
    const b = job('b', { checks_json: '["command:npm test"]' });
    const c = job('c', { status: 'failed', failure_class: 'check_failed', error: 'completion checks failed: command:npm test (exited 1)\n  at line 3', checks_json: '["command:npm test"]' });
    const f = buildFloor(input({ ship: { jobs: [a, b, c], overlaps: [], others: [] } }), NOW);
    assert.deepEqual(f.ready_to_ship!.map((x) => [x.job_id, x.checks, x.check_detail]), [['a', 'not_run', null], ['b', 'passed', null], ['c', 'failed', 'completion checks failed: command:npm test (exited 1)']]);
    const r = f.ready_to_ship![0]!;
    assert.deepEqual([r.branch, r.diff_stat, r.age_ms, r.command, r.repo_root], ['overseer/a', '1 file changed, 2 insertions(+)', 120_000, 'overseer merge a', '/r']);
    assert.deepEqual(f.ready_to_ship![1]!.check_names, ['command:npm test']);
  });

  test('a failed merge on record: its round x/max, sendable only while failed; the role when not implementer', () => {
    const sb = (job_id: string, status: string, round: number) => ({ job_id, round, max_rounds: 2, status, reason: 'checks_failed', detail_json: '{}', options_json: '{}', request_id: status === 'asked' ? 'r-1' : null, updated_at: NOW }) as SendBackRow;
    const f = buildFloor(input({ ship: { jobs: [job('a', { role: 'reviewer' } as Partial<JobRow>), job('b', { role: 'implementer' } as Partial<JobRow>), job('c')], overlaps: [], others: [], sendBacks: [sb('a', 'failed', 1), sb('c', 'asked', 2)] } }), NOW);
    assert.deepEqual(f.ready_to_ship!.map((x) => [x.job_id, x.role, x.send_back && [x.send_back.round, x.send_back.max, x.send_back.status, x.send_back.sendable]]),
      [['a', 'reviewer', [1, 2, 'failed', true]], ['b', null, null], ['c', null, [2, 2, 'asked', false]]]);
    assert.equal(f.ready_to_ship![2]!.send_back!.request_id, 'r-1');
  });

  test('overlaps: with another lane branch or a live one, not with a merged one; files grouped per other job', () => {
    const a = job('a');
    const b = job('b');
    const rows = {
      jobs: [a, b],
      overlaps: [overlap(1, 'a', 'b', 'x.ts'), overlap(2, 'a', 'b', 'w.ts'), overlap(3, 'live', 'a', 'y.ts'), overlap(4, 'a', 'gone', 'z.ts')],
      others: [{ id: 'live', title: 'Live one', status: 'running', merged: 0 }, { id: 'gone', title: 'Merged one', status: 'succeeded', merged: 1 }],
    };
    const f = buildFloor(input({ ship: rows }), NOW);
    assert.deepEqual(f.ready_to_ship![0]!.overlaps, [{ job_id: 'b', title: 'T b', files: ['w.ts', 'x.ts'] }, { job_id: 'live', title: 'Live one', files: ['y.ts'] }]);
    assert.deepEqual(f.ready_to_ship![1]!.overlaps, [{ job_id: 'a', title: 'T a', files: ['w.ts', 'x.ts'] }]);
  });

  test('narrowed like the rest: one project\'s, or without archived projects\' jobs; no rows → an empty lane', () => {
    const rows = { jobs: [job('p1', { project: 'web' }), job('p2', { project: 'old' }), job('p3')], overlaps: [], others: [] };
    assert.deepEqual(buildFloor(input({ ship: rows, archived: ['old'] }), NOW).ready_to_ship!.map((x) => x.job_id), ['p1', 'p3']);
    assert.deepEqual(buildFloor(input({ ship: rows, project: 'web' }), NOW).ready_to_ship!.map((x) => x.job_id), ['p1']);
    assert.deepEqual(buildFloor(input({}), NOW).ready_to_ship, []);
  });
});

describe('an approval shows its plan', () => {
  const req = (id: string, o: Partial<FullRequestRow>): FullRequestRow => ({
    id, job_id: 'j', kind: 'approval', summary: 'push fix/login\nto origin', plan_json: null, options_json: null, status: 'pending', decision: null, answer: null,
    comment: null, created_at: NOW - 1000, answered_at: null, tool_name: null, tool_input_json: null, expires_at: null, answered_by: null, who: 'any', lead_seen_at: null, ...o,
  } as FullRequestRow);

  test('the four sections as given (text or list), the whole summary; empty sections and no plan leave it out', () => {
    const plan = { rationale: 'CI needs it', resources: ['origin', 'branch fix/login'], risks: 'a force push', rollback: 'git push origin :fix/login' };
    const f = buildFloor(input({
      jobs: [job('j', { status: 'running', ended_at: null })],
      requests: [req('r-1', { plan_json: JSON.stringify(plan) }), req('r-2', { plan_json: JSON.stringify({ rationale: '', risks: [] }), created_at: NOW - 500 }), req('r-3', { kind: 'question', options_json: '["a","b"]', created_at: NOW - 400 })],
    }), NOW);
    const [a, b, c] = f.needs_you;
    assert.deepEqual(a!.plan, plan);
    assert.equal(a!.summary, 'push fix/login\nto origin');
    assert.equal(a!.text, 'push fix/login');
    assert.equal(b!.plan, undefined);
    assert.deepEqual(c!.options, ['a', 'b']);
  });
});
