// Worker hosts on the floor (src/floor/workers.ts through the model, src/floor/model.ts): the host
// of each row (its worker, else its hub's host, else this machine), when rows show it (workers
// registered, or more than one host), and the health warnings: a lost worker (its lease ran out)
// and a fenced one (registered again while jobs of its old epoch still show running), gone once
// it is back, stopped, or its old jobs are settled; then how watch and status show them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildFloor, type FloorInput } from '../../src/floor/model.js';
import type { FloorWorkerRow } from '../../src/floor/workers.js';
import type { JobRow } from '../../src/store/jobs.js';
import { buildRows } from '../../src/tui/rows.js';
import { allLines } from '../../src/tui/screen.js';
import { needsYouLines } from '../../src/cli/status.js';

const NOW = 1_800_000_000_000;
let seq = 0;
const job = (id: string, o: Partial<JobRow> = {}): JobRow => ({
  id, seq: ++seq, parent_id: null, depth: 1, title: `T ${id}`, prompt: 'p', provider: 'claude', model: 'm', cwd: '/r', work_dir: null, repo_root: null,
  worktree: 0, branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null,
  checks_json: '[]', retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'running', status_message: null, progress: null, result: null,
  outcome: null, error: null, failure_class: null, session_id: null, turns: 0, cost_usd: 0, pid: null, pr_url: null, diff_stat: null, git_note: null,
  token_hash: null, resume_message: null, created_at: NOW - 60_000, started_at: NOW - 50_000, ended_at: null, updated_at: NOW - 1000,
  workflow_id: null, phase: null, cycle: null, json_schema: null, structured_json: null, input_tokens: 0, output_tokens: 0, cost_unknown: 0,
  cache_read_tokens: 0, cache_creation_tokens: 0, thread_usage_json: null, lock_violations_json: null, last_event_at: null, last_activity: null, ...o,
});
const worker = (name: string, o: Partial<FloorWorkerRow> = {}): FloorWorkerRow => ({
  name, host: `${name}.lan`, state: 'live', epoch: 1, lease_ms: 30_000, age_ms: 1000, heartbeat_at: NOW - 1000, ...o,
});
const input = (o: Partial<FloorInput>): FloorInput => ({
  jobs: [], requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 8, source: 'database', localHost: 'laptop', ...o,
});
const workerItems = (f: ReturnType<typeof buildFloor>) => f.needs_you.filter((n) => n.kind === 'worker_lost' || n.kind === 'worker_fenced');

describe('hosts on the floor', () => {
  test('each row\'s host: its worker, else its hub\'s host, else this machine; rows show it only with workers or several hosts', () => {
    const jobs = [job('j-w', { worker: 'box-7', worker_epoch: 1 }), job('j-h', { hub_id: 'h-1' }), job('j-l')];
    const f = buildFloor(input({ jobs, hubHosts: [{ id: 'h-1', host: 'hubhost' }], workers: [worker('box-7')] }), NOW);
    assert.deepEqual(f.running.map((j) => [j.job_id, j.host]), [['j-w', 'box-7'], ['j-h', 'hubhost'], ['j-l', 'laptop']]);
    assert.equal(f.show_host, true);
    // One machine, no worker: rows stay short.
    assert.equal(buildFloor(input({ jobs: [job('j-l')] }), NOW).show_host, false);
    assert.equal(buildFloor(input({ jobs: [job('j-l'), job('j-h', { hub_id: 'h-1' })], hubHosts: [{ id: 'h-1', host: 'hubhost' }] }), NOW).show_host, true);
  });

  test('watch shows `on <host>` on a row only when the floor shows hosts', () => {
    const jobs = [job('j-w', { worker: 'box-7', worker_epoch: 1, status: 'succeeded', ended_at: NOW - 1000 }), job('j-l')];
    const text = (f: ReturnType<typeof buildFloor>): string => allLines(buildRows(f), NOW, 120).map((l) => l.text).join('\n');
    const many = text(buildFloor(input({ jobs, workers: [worker('box-7')] }), NOW));
    assert.match(many, /on laptop/);
    assert.match(many, /on box-7/);
    assert.doesNotMatch(text(buildFloor(input({ jobs: [job('j-l')] }), NOW)), /on laptop/);
  });
});

describe('worker warnings', () => {
  test('a lost worker needs the person: what it means and what to do; gone when it is live again or stopped', () => {
    const lost = buildFloor(input({ workers: [worker('box-1', { state: 'lost', age_ms: 45_000, heartbeat_at: NOW - 45_000 }), worker('box-2')] }), NOW);
    const items = workerItems(lost);
    assert.equal(items.length, 1, JSON.stringify(lost.needs_you));
    const it = items[0]!;
    assert.deepEqual([it.kind, it.key, it.job_id, it.title, it.command], ['worker_lost', 'worker:box-1', null, 'worker box-1 on box-1.lan', 'overseer hosts']);
    assert.match(it.text, /^lost: no heartbeat since \d\d:\d\d:\d\d UTC \(its lease is 30s\) — its machine stopped or its network is cut; .*requeued.*overseer worker --name box-1/);
    assert.equal(lost.totals.needs_you, lost.needs_you.length);
    assert.deepEqual(workerItems(buildFloor(input({ workers: [worker('box-1')] }), NOW)), []);
    assert.deepEqual(workerItems(buildFloor(input({ workers: [worker('box-1', { state: 'stopped', age_ms: 60_000 })] }), NOW)), []);
    // Lost for longer than the failed window: no longer shown.
    assert.deepEqual(workerItems(buildFloor(input({ workers: [worker('box-1', { state: 'lost', age_ms: 25 * 3600_000 })] }), NOW)), []);
  });

  test('a fenced worker: registered again while jobs of its old epoch still show running; gone once they are settled', () => {
    const old = job('j-old', { worker: 'box-1', worker_epoch: 1 });
    const now = job('j-new', { worker: 'box-1', worker_epoch: 2 });
    const f = buildFloor(input({ jobs: [old, now], workers: [worker('box-1', { epoch: 2 })] }), NOW);
    const items = workerItems(f);
    assert.equal(items.length, 1);
    assert.equal(items[0]!.kind, 'worker_fenced');
    assert.equal(items[0]!.job_id, 'j-old');
    assert.match(items[0]!.text, /^fenced: it registered again \(lease epoch 2\) while 1 agent\(s\) of its earlier epoch still show running \(j-old\)/);
    const settled = buildFloor(input({ jobs: [{ ...old, status: 'interrupted', ended_at: NOW }, now], workers: [worker('box-1', { epoch: 2 })] }), NOW);
    assert.deepEqual(workerItems(settled), []);
    assert.deepEqual(workerItems(buildFloor(input({ jobs: [old], workers: [worker('box-1', { epoch: 2, state: 'stopped' })] }), NOW)), []);
  });

  test('watch and status show the warning as a NEEDS YOU line', () => {
    const f = buildFloor(input({ workers: [worker('box-1', { state: 'lost', age_ms: 45_000 })] }), NOW);
    const lines = allLines(buildRows(f), NOW, 200).map((l) => l.text);
    assert.ok(lines.some((l) => /^WORKER\s+worker box-1 on box-1\.lan: lost: /.test(l)), lines.join('\n'));
    assert.match(needsYouLines(f.needs_you).join('\n'), /^! worker box-1 on box-1\.lan lost: .* — overseer hosts$/);
  });
});
