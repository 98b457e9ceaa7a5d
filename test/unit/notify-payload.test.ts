// What notifications say (src/floor/notify/payload.ts, text.ts, filter.ts): which job ends,
// requests, warnings and workflow changes make a notice, their reason and exact command, the
// Slack and desktop texts, and which events a sink takes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { jobEnded, requestOpened, repeatKey, warningRaised, workflowChanged, type JobFacts, type PayloadBase } from '../../src/floor/notify/payload.js';
import { desktopText, slackText } from '../../src/floor/notify/text.js';
import { eventsOf, sinkName, wants } from '../../src/floor/notify/filter.js';

const base: PayloadBase = { at: '2025-01-02T03:04:05.000Z', project: 'shop', project_dir: '/src/shop' };
const job = (over: Partial<JobFacts> = {}): JobFacts => ({
  id: 'j-1a2b', title: 'Fix the parser', status: 'succeeded', result: null, error: null, failure_class: null, workflow_id: null, ...over,
});

describe('job ends', () => {
  test('succeeded: the result\'s first non-empty line, and the logs command', () => {
    const p = jobEnded(job({ result: '\n  Parser fixed: 3 tests added.\nDetails follow…' }), base)!;
    assert.deepEqual(p, { ...base, event: 'succeeded', job_id: 'j-1a2b', title: 'Fix the parser', reason: 'Parser fixed: 3 tests added.', command: 'overseer logs j-1a2b' });
  });

  test('failed: failure class and error, and what the agent said when it reported the failure', () => {
    assert.equal(jobEnded(job({ status: 'failed', failure_class: 'max_turns', error: 'hit --max-turns 5' }), base)!.reason, 'max_turns: hit --max-turns 5');
    const reported = jobEnded(job({ status: 'failed', failure_class: 'reported_failure', error: 'the agent reported failure', result: 'could not reach the DB\nmore' }), base)!;
    assert.equal(reported.event, 'failed');
    assert.equal(reported.reason, 'reported_failure: the agent reported failure — could not reach the DB');
    assert.equal(reported.command, 'overseer logs j-1a2b');
  });

  test('a long reason is one line of at most 500 characters', () => {
    const p = jobEnded(job({ status: 'failed', failure_class: 'crashed', error: `line one\n${'x'.repeat(2000)}` }), base)!;
    assert.equal(p.reason.length, 500);
    assert.doesNotMatch(p.reason, /\n/);
    assert.match(p.reason, /^crashed: line one x+…$/);
  });

  test('no notice: cancelled, interrupted, a dependency_failed cascade, a workflow\'s phase', () => {
    assert.equal(jobEnded(job({ status: 'cancelled' }), base), undefined);
    assert.equal(jobEnded(job({ status: 'interrupted' }), base), undefined);
    assert.equal(jobEnded(job({ status: 'failed', failure_class: 'dependency_failed', error: 'dependency j-0 failed' }), base), undefined);
    assert.equal(jobEnded(job({ status: 'failed', failure_class: 'crashed', workflow_id: 'w-1' }), base), undefined);
    assert.equal(jobEnded(job({ status: 'succeeded', workflow_id: 'w-1' }), base), undefined);
  });
});

describe('requests', () => {
  const r = { id: 'r-m5x-0', kind: 'approval', summary: 'drop the legacy\nusers table', options_json: null, tool_name: null };
  test('an approval: respond approve with its id; the summary as the reason', () => {
    const p = requestOpened(r, job(), base);
    assert.equal(p.event, 'needs_input');
    assert.equal(p.request_id, 'r-m5x-0');
    assert.equal(p.command, 'overseer respond r-m5x-0 approve');
    assert.equal(p.reason, 'approval: drop the legacy users table');
    assert.equal(p.workflow_id, undefined);
  });
  test('a question: respond --answer, with its options; a permission prompt: approve', () => {
    const q = requestOpened({ ...r, kind: 'question', summary: 'Which DB?', options_json: '["postgres","sqlite"]' }, job(), base);
    assert.equal(q.command, 'overseer respond r-m5x-0 --answer "…"');
    assert.equal(q.reason, 'question: Which DB? (options: postgres, sqlite)');
    const perm = requestOpened({ ...r, kind: 'permission', summary: 'Bash: git push origin main', tool_name: 'Bash' }, job({ workflow_id: 'w-9' }), base);
    assert.equal(perm.command, 'overseer respond r-m5x-0 approve');
    assert.equal(perm.reason, 'permission: Bash: git push origin main');
    assert.equal(perm.workflow_id, 'w-9');
  });
});

describe('warnings', () => {
  test('stalled and budget_high are their own events; the milder kinds are `warning`', () => {
    const s = warningRaised({ kind: 'stalled', detail: 'no output for 612 s' }, job(), base);
    assert.deepEqual([s.event, s.warning, s.reason, s.command], ['stalled', 'stalled', 'stalled: no output for 612 s', 'overseer logs j-1a2b']);
    assert.equal(warningRaised({ kind: 'budget_high', detail: '$4.10 of $5' }, job(), base).event, 'budget_high');
    for (const kind of ['turns_high', 'time_high', 'long_running']) {
      const w = warningRaised({ kind, detail: 'd' }, job(), base);
      assert.deepEqual([w.event, w.warning], ['warning', kind]);
    }
  });
  test('the health reaction, when it did more than notify, is named; a frozen job is resumed', () => {
    const frozen = warningRaised({ kind: 'stalled', detail: 'no output for 10 m', reaction: 'freeze' }, job(), base);
    assert.deepEqual([frozen.reason, frozen.command], ['stalled: no output for 10 m (frozen)', 'overseer resume j-1a2b']);
    assert.equal(warningRaised({ kind: 'budget_high', detail: 'd', reaction: 'cancel' }, job(), base).reason, 'budget_high: d (cancelled)');
    assert.equal(warningRaised({ kind: 'turns_high', detail: 'd', reaction: 'message' }, job(), base).reason, 'turns_high: d (the agent was nudged)');
    assert.equal(warningRaised({ kind: 'turns_high', detail: 'd', reaction: 'notify' }, job(), base).reason, 'turns_high: d');
  });
});

describe('workflows', () => {
  const wf = { id: 'w-7', title: 'Add OAuth', status: 'running', current_job: 'j-cur', blocked_json: null, pr_url: null, branch: 'overseer/add-oauth', git_note: null };
  test('blocked: its code and message, the logs of the job that blocked it', () => {
    const p = workflowChanged({ ...wf, status: 'blocked', blocked_json: JSON.stringify({ code: 'zero_progress', message: '2 implement phases without progress', phase: 'implement', cycle: 4, job_id: 'j-blk' }) }, base)!;
    assert.equal(p.event, 'workflow_blocked');
    assert.equal(p.workflow_id, 'w-7');
    assert.equal(p.job_id, 'j-blk');
    assert.match(p.reason, /^zero_progress: 2 implement phases without progress/);
    assert.equal(p.command, 'overseer logs j-blk');
    const noJob = workflowChanged({ ...wf, status: 'blocked', current_job: null, blocked_json: JSON.stringify({ code: 'no_plan', message: 'm', job_id: null }) }, base)!;
    assert.equal(noJob.command, 'overseer status');
  });
  test('succeeded: the PR, else the branch; other statuses say nothing', () => {
    assert.equal(workflowChanged({ ...wf, status: 'succeeded', pr_url: 'https://github.com/o/r/pull/3' }, base)!.reason, 'PR https://github.com/o/r/pull/3');
    const done = workflowChanged({ ...wf, status: 'succeeded', git_note: 'no remote: not pushed' }, base)!;
    assert.deepEqual([done.event, done.reason], ['workflow_done', 'branch overseer/add-oauth (no remote: not pushed)']);
    assert.equal(workflowChanged({ ...wf, status: 'running' }, base), undefined);
    assert.equal(workflowChanged({ ...wf, status: 'cancelled' }, base), undefined);
  });
});

test('repeat keys: same event and subject are equal; another job, request, warning kind or event is not', () => {
  const a = jobEnded(job({ status: 'failed', failure_class: 'crashed' }), base)!;
  assert.equal(repeatKey(a), repeatKey({ ...a, reason: 'other', at: 'later' }));
  assert.notEqual(repeatKey(a), repeatKey({ ...a, job_id: 'j-other' }));
  assert.notEqual(repeatKey(a), repeatKey({ ...a, event: 'succeeded' }));
  const w1 = warningRaised({ kind: 'turns_high', detail: '' }, job(), base);
  assert.notEqual(repeatKey(w1), repeatKey(warningRaised({ kind: 'time_high', detail: '' }, job(), base)));
  const r1 = requestOpened({ id: 'r-1', kind: 'approval', summary: 's', options_json: null, tool_name: null }, job(), base);
  assert.notEqual(repeatKey(r1), repeatKey({ ...r1, request_id: 'r-2' }));
});

describe('texts', () => {
  const p = requestOpened({ id: 'r-1', kind: 'approval', summary: 'merge <main> & `deploy`', options_json: null, tool_name: null }, job(), base);
  test('Slack: one line, escaped, the command in backticks, held-back notices counted', () => {
    assert.equal(slackText(p), '*shop*: Fix the parser (j-1a2b) needs input — approval: merge &lt;main&gt; &amp; `deploy`. Run `overseer respond r-1 approve`');
    assert.match(slackText({ ...p, suppressed: 2 }), / \[2 earlier notifications held back\]$/);
    assert.doesNotMatch(slackText(p), /\n/);
  });
  test('desktop: project, job and event in the title; reason and command in the body', () => {
    assert.deepEqual(desktopText(p), { title: 'Overseer shop: Fix the parser (j-1a2b) needs input', body: 'approval: merge <main> & `deploy`\noverseer respond r-1 approve' });
    const wf = workflowChanged({ id: 'w-7', title: 'Add OAuth', status: 'succeeded', current_job: null, blocked_json: null, pr_url: null, branch: 'b', git_note: null }, base)!;
    assert.equal(desktopText(wf).title, 'Overseer shop: Add OAuth (w-7) workflow done');
  });
});

describe('filter', () => {
  test('default: every event but succeeded and the milder warnings', () => {
    assert.deepEqual([...eventsOf({})].sort(), ['budget_high', 'failed', 'limited', 'needs_input', 'stalled', 'workflow_blocked', 'workflow_done']);
    assert.equal(wants({}, 'succeeded'), false);
    assert.equal(wants({}, 'warning'), false);
    assert.equal(wants({}, 'failed'), true);
  });
  test('a sink\'s own list replaces the default', () => {
    assert.equal(wants({ events: ['succeeded'] }, 'succeeded'), true);
    assert.equal(wants({ events: ['succeeded'] }, 'failed'), false);
  });
  test('names: its own, else type and index (never the URL)', () => {
    assert.equal(sinkName({ type: 'slack', name: 'team' }, 0), 'team');
    assert.equal(sinkName({ type: 'webhook' }, 2), 'webhook[2]');
  });
});
