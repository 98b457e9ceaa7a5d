// Unit: the lines `overseer logs` frames a transcript with — attempt header/footer and the
// verdict — come from the job and attempt rows (the hub's decision), not from the transcript.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { attemptFooter, attemptHeader, verdictLine } from '../../src/cli/logs.js';
import type { AttemptRow, JobRow } from '../../src/store/jobs.js';

const T0 = Date.UTC(2026, 10, 24, 14, 20, 3);
const job = (o: Partial<JobRow>): JobRow => ({
  id: 'j-abc', title: 't', status: 'running', provider: 'claude', model: null, cwd: '/w', work_dir: null, branch: null, worktree: 0, parent_id: null,
  created_at: T0, started_at: T0, ended_at: null, turns: 3, cost_usd: 0.0024, cost_unknown: 0, input_tokens: 0, output_tokens: 0,
  status_message: null, progress: null, result: null, error: null, failure_class: null, session_id: null, pr_url: null,
  lock_violations_json: null, diff_stat: null, git_note: null, labels_json: '[]', depends_on_json: '[]', priority: 0, ...o,
} as JobRow);
const attempt = (o: Partial<AttemptRow>): AttemptRow => ({
  job_id: 'j-abc', n: 1, kind: 'initial', status: 'running', started_at: T0, ended_at: null, session_id: null, pid: null, exit_code: null, signal: null,
  turns: 3, cost_usd: 0.0024, failure_class: null, error: null, diagnosis: null, transcript: '/x', ...o,
} as AttemptRow);

test('attempt header and footer: times in UTC, status, failure class, turns, cost, error', () => {
  assert.equal(attemptHeader(attempt({ n: 2, kind: 'retry' })), '── attempt 2 (retry) started 2026-11-24 14:20:03 UTC');
  assert.equal(attemptFooter(attempt({})), '── attempt 1 still running: 3 turns so far, $0.0024');
  assert.equal(
    attemptFooter(attempt({ status: 'failed', ended_at: T0 + 65_000, failure_class: 'max_turns', turns: 1, error: 'Reached maximum\nnumber of turns' })),
    '── attempt 1 ended 2026-11-24 14:21:08 UTC: failed (max_turns), 1 turn, $0.0024 — Reached maximum number of turns',
  );
});

test('verdict: the status Overseer decided, with its error or result; "so far" while the job runs', () => {
  const a = [attempt({ status: 'failed' }), attempt({ n: 2, kind: 'retry', status: 'failed' })];
  assert.equal(
    verdictLine(job({ status: 'failed', failure_class: 'check_failed', error: 'check command:exit 3 exited 3', ended_at: T0 }), a),
    'overseer: job j-abc failed (check_failed) after 2 attempts, 3 turns, $0.0024 — error: check command:exit 3 exited 3',
  );
  assert.equal(verdictLine(job({ status: 'succeeded', result: 'done it', ended_at: T0 }), a.slice(0, 1)), 'overseer: job j-abc succeeded after 1 attempt, 3 turns, $0.0024 — result: done it');
  assert.equal(verdictLine(job({}), a.slice(0, 1)), 'overseer: job j-abc is running (1 attempt so far), 3 turns, $0.0024 so far');
  assert.equal(verdictLine(job({ status: 'succeeded', cost_unknown: 1 }), []), 'overseer: job j-abc succeeded after 0 attempts, 3 turns, cost unknown');
});
