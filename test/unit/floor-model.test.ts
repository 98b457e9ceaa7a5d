// The floor model (src/floor/model.ts) on plain rows with an injected `now`: sections and their
// order, the RUNNING tree, why a job waits, totals, stable ordering, idle/elapsed values, the
// commands of NEEDS YOU; and readFloor (src/floor/source.ts) on a real database agreeing with it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { buildFloor, resultLine, workflowBar, type FloorInput } from '../../src/floor/model.js';
import { readFloor, readFloorInput } from '../../src/floor/source.js';
import type { JobRow } from '../../src/store/jobs.js';
import type { FullRequestRow } from '../../src/store/sql/requests.js';
import type { WarningRow } from '../../src/store/warnings.js';
import type { WorkflowRow } from '../../src/store/workflows.js';
import type { FloorJob } from '../../src/floor/types.js';
import { openDb } from '../../src/store/db.js';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { insertRequest } from '../../src/store/sql/requests.js';
import { sql } from 'kysely';
import { raiseWarning } from '../../src/store/sql/warnings.js';
import { sqlOver } from '../../src/store/sql/open.js';

const NOW = 1_800_000_000_000;
const H = 3600_000;

let seq = 0;
function job(id: string, o: Partial<JobRow> = {}): JobRow {
  seq++;
  return {
    id, seq, parent_id: null, depth: 1, title: `T ${id}`, prompt: 'p', provider: 'claude', model: 'm', cwd: '/r', work_dir: null, repo_root: null,
    worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
    checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'running', status_message: null, progress: null, result: null,
    outcome: null, error: null, failure_class: null, session_id: null, turns: 0, cost_usd: 0, pid: null, pr_url: null, diff_stat: null, git_note: null,
    token_hash: null, resume_message: null, created_at: NOW - 10 * 60_000, started_at: NOW - 5 * 60_000, ended_at: null, updated_at: NOW - 60_000,
    workflow_id: null, phase: null, cycle: null, json_schema: null, structured_json: null, input_tokens: 0, output_tokens: 0, cost_unknown: 0,
    cache_read_tokens: 0, cache_creation_tokens: 0, thread_usage_json: null, lock_violations_json: null, last_event_at: null, last_activity: null, ...o,
  };
}

function request(id: string, jobId: string, o: Partial<FullRequestRow> = {}): FullRequestRow {
  return {
    id, job_id: jobId, kind: 'approval', summary: `summary of ${id}`, plan_json: null, options_json: null, status: 'pending', decision: null, answer: null,
    comment: null, created_at: NOW - 30_000, answered_at: null, tool_name: null, tool_input_json: null, expires_at: null, answered_by: null, who: 'any',
    lead_seen_at: null, ...o,
  };
}

function warning(id: number, jobId: string, kind: WarningRow['kind'], raisedAt: number): WarningRow {
  return { id, job_id: jobId, kind, detail: `${kind} detail`, raised_at: raisedAt, cleared_at: null, lead_seen_at: null, reaction: null };
}

function workflow(id: string, o: Partial<WorkflowRow> = {}): WorkflowRow {
  return {
    id, seq: ++seq, title: `W ${id}`, task: 't', status: 'running', cycle: 1, phase: 'implement', cwd: '/r', repo_root: null, worktree_path: null, branch: null,
    base_commit: null, implementer_json: '{}', reviewer_json: '{}', max_cycles: 6, approve_plan: 0, plan_approved: 0, checks_json: '[]', template: null,
    phase_limits_json: null, state_json: '{}', blocked_json: null, current_job: null, approval_request: null, pr_url: null, git_note: null,
    created_at: NOW - H, updated_at: NOW - 1000, ended_at: null, plan_text: null, ...o,
  };
}

function input(o: Partial<FloorInput>): FloorInput {
  return { jobs: [], requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 8, source: 'database', ...o };
}

const ids = (xs: readonly { job_id: string }[]): string[] => xs.map((x) => x.job_id);
const tree = (xs: readonly FloorJob[]): unknown => xs.map((x) => (x.children.length ? { [x.job_id]: tree(x.children) } : x.job_id));

describe('buildFloor', () => {
  test('an empty crew: every section is an empty array, totals are zero, no hub facts', () => {
    const f = buildFloor(input({}), NOW);
    assert.deepEqual([f.needs_you, f.running, f.queued, f.done, f.workflows, f.locks], [[], [], [], [], [], []]);
    assert.deepEqual(f.totals, { running: 0, queued: 0, done: 0, failed: 0, needs_you: 0, cost_usd: 0, cost_unknown: false, cap: 8, frozen: 0, cancelled: 0 });
    assert.deepEqual(f.hub, { url: null, pid: null, started_at: null, uptime_ms: null, version: null });
    assert.equal(f.at, NOW);
    assert.equal(f.source, 'database');
  });

  test('each job lands in its section: live in RUNNING, queued/waiting in QUEUED, ended in DONE', () => {
    const f = buildFloor(input({
      jobs: [
        job('run'), job('ask', { status: 'needs_input' }), job('ice', { status: 'frozen' }),
        job('q', { status: 'queued', started_at: null }), job('w', { status: 'waiting', started_at: null }),
        job('ok', { status: 'succeeded', ended_at: NOW - 1000 }), job('bad', { status: 'failed', ended_at: NOW - 2000 }),
        job('off', { status: 'cancelled', ended_at: NOW - 3000 }), job('int', { status: 'interrupted', ended_at: NOW - 4000 }),
      ],
    }), NOW);
    assert.deepEqual(ids(f.running), ['run', 'ask', 'ice']);
    assert.deepEqual(ids(f.queued), ['q', 'w']);
    assert.deepEqual(ids(f.done), ['ok', 'bad', 'off', 'int']);
    assert.deepEqual(f.totals, { running: 2, queued: 2, done: 1, failed: 1, needs_you: 1, cost_usd: 0, cost_unknown: false, cap: 8, frozen: 1, cancelled: 2 });
  });

  test('RUNNING is a tree: lead → child → grandchild; a live job whose parent ended is a root after the lead\'s children', () => {
    const f = buildFloor(input({
      jobs: [
        job('a'), job('a1', { parent_id: 'a', depth: 2 }), job('gone', { status: 'succeeded', ended_at: NOW - 5 }), job('a1x', { parent_id: 'a1', depth: 3 }),
        job('orphan', { parent_id: 'gone', depth: 2 }), job('b'), job('a2', { parent_id: 'a', depth: 2 }),
      ],
    }), NOW);
    assert.deepEqual(tree(f.running), [{ a: [{ a1: ['a1x'] }, 'a2'] }, 'b', 'orphan']);
    assert.equal(f.running[0]!.children[0]!.children[0]!.depth, 3);
    // Only RUNNING nests: DONE rows carry no children.
    assert.deepEqual(f.done[0]!.children, []);
  });

  test('why a job waits: a free slot, over the cap (next in line, N ahead and of higher priority), a dependency', () => {
    const free = buildFloor(input({ cap: 3, jobs: [job('r1'), job('q1', { status: 'queued', started_at: null })] }), NOW);
    assert.equal(free.queued[0]!.why_waiting, 'starting: 1 running of 3, a slot is free');
    const three = buildFloor(input({ cap: 3, jobs: [job('r1'), ...['q1', 'q2', 'q3'].map((id) => job(id, { status: 'queued', started_at: null }))] }), NOW);
    assert.deepEqual(three.queued.map((j) => j.why_waiting), ['starting: 1 running of 3, a slot is free', 'starting: 1 running of 3, a slot is free', 'over the cap (3 running of 3), next in line']);

    const full = buildFloor(input({
      cap: 2,
      jobs: [
        job('r1'), job('r2', { status: 'frozen' }),
        job('low', { status: 'queued', started_at: null, priority: 0 }), job('low2', { status: 'queued', started_at: null, priority: 0 }),
        job('high', { status: 'queued', started_at: null, priority: 5 }),
        job('dep', { status: 'waiting', started_at: null }), job('two', { status: 'waiting', started_at: null }),
      ],
      deps: [
        { job_id: 'dep', dep_id: 'r1', status: 'running' },
        { job_id: 'two', dep_id: 'low', status: 'queued' }, { job_id: 'two', dep_id: 'gone', status: 'succeeded' }, { job_id: 'two', dep_id: 'high', status: 'queued' },
      ],
    }), NOW);
    assert.deepEqual(full.queued.map((j) => [j.job_id, j.why_waiting]), [
      ['high', 'over the cap (2 running of 2), next in line'],
      ['low', 'over the cap (2 running of 2), 1 ahead in the queue (1 of higher priority)'],
      ['low2', 'over the cap (2 running of 2), 2 ahead in the queue (1 of higher priority)'],
      ['dep', 'waiting on dependency r1 (running)'],
      ['two', 'waiting on dependencies high (queued), low (queued)'],
    ]);
    const failedDep = buildFloor(input({ jobs: [job('w', { status: 'waiting', started_at: null })], deps: [{ job_id: 'w', dep_id: 'x', status: 'failed' }] }), NOW);
    assert.equal(failedDep.queued[0]!.why_waiting, 'dependency x failed: it will not run');
  });

  test('live values from the row and `now`: elapsed, idle since the last output, turns, cost, tokens, progress, last line', () => {
    const f = buildFloor(input({
      jobs: [
        job('busy', { started_at: NOW - 90_000, last_event_at: NOW - 4000, turns: 7, max_turns: 20, cost_usd: 0.12, budget_usd: 1, input_tokens: 1500, output_tokens: 300, progress: 0.4, status_message: 'writing tests\nmore', labels_json: '["ui","api"]' }),
        job('quiet', { started_at: NOW - 20_000, last_event_at: null, last_activity: 'tool_use Bash {"command":"npm test"}' }),
        job('fin', { status: 'succeeded', started_at: NOW - 50_000, ended_at: NOW - 20_000, last_event_at: NOW - 20_000, result: '\n  All done.  \nDetails follow' }),
      ],
    }), NOW);
    const busy = f.running.find((j) => j.job_id === 'busy')!;
    assert.deepEqual(
      { elapsed: busy.elapsed_ms, idle: busy.idle_ms, turns: busy.turns, max: busy.max_turns, cost: busy.cost_usd, budget: busy.budget_usd, tin: busy.input_tokens, tout: busy.output_tokens, progress: busy.progress, line: busy.last_line, labels: busy.labels },
      { elapsed: 90_000, idle: 4000, turns: 7, max: 20, cost: 0.12, budget: 1, tin: 1500, tout: 300, progress: 0.4, line: 'writing tests', labels: ['ui', 'api'] },
    );
    const quiet = f.running.find((j) => j.job_id === 'quiet')!;
    assert.equal(quiet.idle_ms, null, 'no output yet: no idle time');
    assert.equal(quiet.last_line, 'tool_use Bash {"command":"npm test"}', 'no status line: the last activity');
    assert.equal(quiet.last_activity, 'tool_use Bash {"command":"npm test"}');
    const fin = f.done[0]!;
    assert.deepEqual({ elapsed: fin.elapsed_ms, idle: fin.idle_ms, result: fin.result_line }, { elapsed: 30_000, idle: null, result: 'All done.' });
    // Moving `now` moves the live values only.
    const later = buildFloor(input({ jobs: [job('busy', { started_at: NOW - 90_000, last_event_at: NOW - 4000 })] }), NOW + 600_000);
    assert.deepEqual([later.running[0]!.elapsed_ms, later.running[0]!.idle_ms], [690_000, 604_000]);
  });

  test('DONE: newest first, at most doneLimit, with result line, branch, diff stat and PR', () => {
    const jobs = Array.from({ length: 25 }, (_, i) => job(`d${i}`, { status: 'succeeded', ended_at: NOW - (25 - i) * 1000, result: `r${i}` }));
    jobs.push(job('x', { status: 'failed', ended_at: NOW - 500, failure_class: 'check_failed', error: 'npm test exited 1\nstack…', branch: 'overseer/x', diff_stat: '2 files changed', pr_url: 'https://example/pr/1' }));
    const f = buildFloor(input({ jobs, doneLimit: 5 }), NOW);
    assert.deepEqual(ids(f.done), ['x', 'd24', 'd23', 'd22', 'd21']);
    assert.deepEqual([f.done[0]!.result_line, f.done[0]!.branch, f.done[0]!.diff_stat, f.done[0]!.pr_url], ['check_failed: npm test exited 1', 'overseer/x', '2 files changed', 'https://example/pr/1']);
    assert.equal(buildFloor(input({ jobs }), NOW).done.length, 20, 'default: 20');
    assert.equal(resultLine({ status: 'cancelled', result: null, error: null, failure_class: 'cancelled' }), 'cancelled');
    assert.equal(resultLine({ status: 'cancelled', result: null, error: 'cancelled: by the person', failure_class: 'cancelled' }), 'cancelled: by the person', 'no doubled prefix');
    assert.equal(resultLine({ status: 'failed', result: null, error: 'timeout: slow', failure_class: 'timeout' }), 'timeout: slow');
  });

  test('NEEDS YOU in priority order, each with its key, text and the exact command', () => {
    const f = buildFloor(input({
      jobs: [
        job('j1'), job('j2'), job('j3', { status: 'needs_input' }),
        job('f1', { status: 'failed', ended_at: NOW - H, failure_class: 'crashed', error: 'exit 1' }),
        job('v1', { status: 'succeeded', ended_at: NOW - H, lock_violations_json: '["/p/a.txt","/p/b.txt"]' }),
      ],
      requests: [
        request('r-q', 'j3', { kind: 'question', options_json: '["yes","no"]', created_at: NOW - 10_000, who: 'person', summary: 'Ship it?\nlong text' }),
        request('r-a', 'j3', { kind: 'approval', created_at: NOW - 20_000 }),
        request('r-p', 'j1', { kind: 'permission', created_at: NOW - 10_000, tool_name: 'Bash' }),
      ],
      warnings: [warning(1, 'j1', 'turns_high', NOW - 50_000), warning(2, 'j2', 'stalled', NOW - 40_000)],
      workflows: [workflow('wf-b', { status: 'blocked', blocked_json: JSON.stringify({ code: 'zero_progress', message: 'no milestone in 2 cycles', phase: 'implement', cycle: 3, job_id: 'j9' }) })],
    }), NOW);
    assert.deepEqual(f.needs_you.map((n) => [n.key, n.kind]), [
      ['req:r-a', 'approval'], ['req:r-p', 'permission'], ['req:r-q', 'question'],
      ['warn:2', 'warning'], ['warn:1', 'warning'],
      ['job:f1', 'failed'],
      ['wf:wf-b', 'workflow_blocked'],
      ['viol:v1', 'lock_violation'],
    ]);
    const by = Object.fromEntries(f.needs_you.map((n) => [n.key, n]));
    assert.equal(by['req:r-a']!.command, 'overseer respond r-a --approve|--reject [--comment "<text>"]');
    assert.equal(by['req:r-q']!.command, 'overseer respond r-q --answer "yes"|"no" [--comment "<text>"]');
    assert.deepEqual([by['req:r-q']!.text, by['req:r-q']!.options, by['req:r-q']!.who, by['req:r-q']!.title], ['for you only: Ship it?', ['yes', 'no'], 'person', 'T j3']);
    assert.deepEqual([by['warn:2']!.text, by['warn:2']!.command], ['stalled: stalled detail', 'overseer logs j2']);
    assert.deepEqual([by['job:f1']!.text, by['job:f1']!.command], ['crashed: exit 1', 'overseer logs f1']);
    assert.deepEqual([by['wf:wf-b']!.text, by['wf:wf-b']!.command, by['wf:wf-b']!.job_id], ['blocked: zero_progress: no milestone in 2 cycles (the lead resumes it with resume_workflow)', 'overseer logs j9', 'j9']);
    assert.deepEqual([by['viol:v1']!.command, /\/p\/a\.txt, \/p\/b\.txt/.test(by['viol:v1']!.text)], ['overseer events --job v1', true]);
    assert.equal(f.totals.needs_you, 8);
    // The job rows carry their open warnings too, stalled first.
    assert.deepEqual(f.running.find((j) => j.job_id === 'j2')!.warnings.map((w) => w.kind), ['stalled']);
  });

  test('failed jobs "not yet seen": still failed and ended within the window; not retried, not dependency_failed, not a workflow phase', () => {
    const f = buildFloor(input({
      jobs: [
        job('new', { status: 'failed', ended_at: NOW - H, failure_class: 'crashed' }),
        job('old', { status: 'failed', ended_at: NOW - 25 * H, failure_class: 'crashed' }),
        job('retried', { status: 'queued', ended_at: null, failure_class: 'crashed' }),
        job('dep', { status: 'failed', ended_at: NOW - H, failure_class: 'dependency_failed' }),
        job('phase', { status: 'failed', ended_at: NOW - H, failure_class: 'crashed', workflow_id: 'wf-1' }),
      ],
    }), NOW);
    assert.deepEqual(f.needs_you.map((n) => n.key), ['job:new']);
    const wide = buildFloor(input({ jobs: [job('old', { status: 'failed', ended_at: NOW - 25 * H })], failedWindowMs: 48 * H }), NOW);
    assert.deepEqual(wide.needs_you.map((n) => n.key), ['job:old']);
  });

  test('workflows: milestone bar, blocked first; a plan approval shows once (as its request when that is pending)', () => {
    assert.equal(workflowBar({ cycle: 4, phase: 'review' }, 3, 5), '3/5 · cycle 4 · review');
    assert.equal(workflowBar({ cycle: 0, phase: 'assess' }, 0, 0), 'no plan yet · cycle 0 · assess');
    const wfs = [
      workflow('wf-run', { cycle: 4, phase: 'review' }),
      workflow('wf-wait', { status: 'waiting_approval', approval_request: 'r-plan', phase: 'assess' }),
      workflow('wf-wait2', { status: 'waiting_approval', approval_request: null, phase: 'assess' }),
      workflow('wf-blk', { status: 'blocked', blocked_json: null, current_job: 'j5' }),
    ];
    const f = buildFloor(input({
      workflows: wfs,
      milestones: [{ workflow_id: 'wf-run', done: 3, total: 5 }],
      requests: [request('r-plan', 'j-assess')],
    }), NOW);
    assert.deepEqual(f.workflows.map((w) => [w.workflow_id, w.bar]), [
      ['wf-blk', 'no plan yet · cycle 1 · implement'], ['wf-wait', 'no plan yet · cycle 1 · assess'], ['wf-wait2', 'no plan yet · cycle 1 · assess'], ['wf-run', '3/5 · cycle 4 · review'],
    ]);
    assert.deepEqual(f.needs_you.map((n) => [n.key, n.kind, n.workflow_id, n.command]), [
      ['req:r-plan', 'approval', 'wf-wait', 'overseer respond r-plan --approve|--reject [--comment "<text>"]'],
      ['wf:wf-wait2', 'workflow_approval', 'wf-wait2', 'overseer requests'],
      ['wf:wf-blk', 'workflow_blocked', 'wf-blk', 'overseer logs j5'],
    ]);
  });

  test('locks with holders and waiters (expired ones dropped); a waiting job names what it waits for and who holds it', () => {
    const f = buildFloor(input({
      jobs: [job('h1'), job('h2'), job('w1', { status: 'running' })],
      locks: [
        { repo: '', rel_path: '/p/b.ts', path: '/p/b.ts', holder: 'h2', reason: null, ttl_s: 60, acquired_at: NOW - 1000, expires_at: NOW + 59_000 },
        { repo: '', rel_path: '/p/a.ts', path: '/p/a.ts', holder: 'h1', reason: null, ttl_s: 60, acquired_at: NOW - 1000, expires_at: NOW + 59_000 },
        { repo: '', rel_path: '/p/old.ts', path: '/p/old.ts', holder: 'h1', reason: null, ttl_s: 1, acquired_at: NOW - 5000, expires_at: NOW - 4000 },
        { repo: '', rel_path: '/p/l.ts', path: '/p/l.ts', holder: 'lead', reason: null, ttl_s: 60, acquired_at: NOW - 1000, expires_at: NOW + 59_000 },
      ],
      lockWaits: [{ id: 3, holder: 'w1', keys_json: null, paths_json: '["/p/a.ts","/p/b.ts"]', reason: null, ttl_s: 60, status: 'waiting', created_at: NOW - 500 }],
    }), NOW);
    assert.deepEqual(f.locks.map((l) => [l.path, l.holder, l.holder_title, l.waiters]), [
      ['/p/a.ts', 'h1', 'T h1', ['w1']], ['/p/b.ts', 'h2', 'T h2', ['w1']], ['/p/l.ts', 'lead', 'the lead', []],
    ]);
    assert.deepEqual(f.running.find((j) => j.job_id === 'w1')!.lock_waits, [{ paths: ['/p/a.ts', '/p/b.ts'], holders: ['h1', 'h2'] }]);
  });

  test('totals: from whole-database counts when given (cost so far, unpriced), the cap, the hub\'s uptime', () => {
    const f = buildFloor(input({
      jobs: [job('a', { cost_usd: 0.5 })],
      counts: [
        { status: 'running', n: 1, cost_usd: 0.5, cost_unknown: 0 }, { status: 'succeeded', n: 40, cost_usd: 3.25, cost_unknown: 1 },
        { status: 'failed', n: 2, cost_usd: 0.25, cost_unknown: 0 }, { status: 'waiting', n: 3, cost_usd: 0, cost_unknown: 0 },
      ],
      cap: 4,
      hub: { url: 'http://127.0.0.1:5/mcp', pid: 42, started_at: NOW - 65_000, version: '0.1.0' },
      source: 'hub',
    }), NOW);
    assert.deepEqual(f.totals, { running: 1, queued: 3, done: 40, failed: 2, needs_you: 0, cost_usd: 4, cost_unknown: true, cap: 4, frozen: 0, cancelled: 0 });
    assert.deepEqual(f.hub, { url: 'http://127.0.0.1:5/mcp', pid: 42, started_at: NOW - 65_000, uptime_ms: 65_000, version: '0.1.0' });
  });

  test('stable: the same rows in any order give the same floor', () => {
    const rows: Partial<FloorInput> = {
      jobs: [
        job('a'), job('a1', { parent_id: 'a', depth: 2 }), job('b'), job('c', { status: 'queued', started_at: null }), job('d', { status: 'queued', started_at: null }),
        job('e', { status: 'succeeded', ended_at: NOW - 1000 }), job('f', { status: 'succeeded', ended_at: NOW - 1000 }), job('g', { status: 'failed', ended_at: NOW - 1000 }),
        job('h', { status: 'failed', ended_at: NOW - 1000 }),
      ],
      requests: [request('r1', 'a'), request('r2', 'b'), request('r3', 'a1')],
      warnings: [warning(5, 'a', 'stalled', NOW - 10), warning(4, 'b', 'stalled', NOW - 10), warning(3, 'a1', 'long_running', NOW - 10)],
      workflows: [workflow('w1', { status: 'blocked' }), workflow('w2', { status: 'blocked' })],
    };
    const base = buildFloor(input(rows), NOW);
    const reversed = buildFloor(input(Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, [...(v as unknown[])].reverse()]))), NOW);
    assert.deepEqual(reversed, base);
    assert.deepEqual(base.needs_you.map((n) => n.key), ['req:r1', 'req:r2', 'req:r3', 'warn:4', 'warn:5', 'warn:3', 'job:h', 'job:g', 'wf:w1', 'wf:w2']);
    assert.deepEqual(ids(base.done), ['h', 'g', 'f', 'e']);
  });
});

describe('readFloor on a real database', () => {
  test('reads the rows the model needs (read-only connection) and gives the same floor as buildFloor on them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ovs-floor-'));
    try {
      const file = join(dir, 'state.db');
      const db = openDb(file);
      const q = sqlOver(db).db;
      const add = async (id: string, o: Partial<JobRow> = {}): Promise<void> => {
        const j = job(id, o);
        await insertJob(q, { ...j, session_id: 's', depends_on_json: o.depends_on_json ?? '[]' }, j.created_at);
        await updateJob(q, id, { status: j.status, started_at: j.started_at, ended_at: j.ended_at, cost_usd: j.cost_usd, result: j.result, turns: j.turns }, j.updated_at);
      };
      await add('lead-child', { cost_usd: 0.25 });
      await add('grand', { parent_id: 'lead-child', depth: 2 });
      await add('dep-wait', { status: 'waiting', started_at: null, depends_on_json: '["grand"]' });
      for (let i = 0; i < 30; i++) await add(`old${i}`, { status: 'succeeded', ended_at: NOW - 3 * H + i, result: `done ${i}`, cost_usd: 0.01 });
      await insertRequest(q, { id: 'r-1', job_id: 'grand', kind: 'question', summary: 'which one?', plan_json: null, options_json: null, created_at: NOW - 5, tool_name: null, tool_input_json: null, expires_at: null, who: 'any' });
      await raiseWarning(q, 'lead-child', 'stalled', 'no output for 10 min', NOW - 1000);
      // The rows the lock service writes (src/store/sql/locks.ts), as a fixture.
      await sql`INSERT INTO locks (rel_path, path, holder, reason, ttl_s, acquired_at, expires_at) VALUES ('/p/x.ts', '/p/x.ts', 'lead-child', NULL, 600, ${NOW}, ${NOW + 600_000})`.execute(q);
      await sql`INSERT INTO lock_waits (holder, paths_json, reason, ttl_s, created_at) VALUES ('grand', '["/p/x.ts"]', NULL, 600, ${NOW})`.execute(q);
      db.close();

      const ro = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const o = { now: NOW, hub: null, cap: 8, source: 'database' as const, doneLimit: 5 };
        const q = sqlOver(ro).db;
        const rows = await readFloorInput(q, o);
        const f = await readFloor(q, o);
        assert.deepEqual(f, buildFloor(rows, NOW));
        assert.deepEqual(tree(f.running), [{ 'lead-child': ['grand'] }]);
        assert.deepEqual(f.queued.map((j) => [j.job_id, j.why_waiting]), [['dep-wait', 'waiting on dependency grand (running)']]);
        assert.deepEqual(ids(f.done), ['old29', 'old28', 'old27', 'old26', 'old25']);
        assert.equal(rows.jobs.length, 3 + 5, 'live jobs and the 5 most recent ended, not every ended job');
        assert.deepEqual([f.totals.done, f.totals.running, f.totals.queued, Math.round(f.totals.cost_usd * 100)], [30, 2, 1, 55], 'totals count every job');
        assert.deepEqual(f.needs_you.map((n) => n.key), ['req:r-1', `warn:${rows.warnings[0]!.id}`]);
        assert.deepEqual(f.locks.map((l) => [l.path, l.holder, l.waiters]), [['/p/x.ts', 'lead-child', ['grand']]]);
        assert.deepEqual(f.running[0]!.children[0]!.lock_waits, [{ paths: ['/p/x.ts'], holders: ['lead-child'] }]);
      } finally {
        ro.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
