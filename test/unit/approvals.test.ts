// Unit: the pure parts of approvals — who may answer, which answer fits, the person's form text
// and schema, reading the form's result, and how a closed request is described.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FullRequestRow } from '../../src/store/sql/requests.js';
import { answerProblem, cliHint, closedHow, howToAnswer, leadRefusal } from '../../src/approvals/rules.js';
import { buildForm, planText, readForm } from '../../src/approvals/form.js';
import { attentionItem, requestView } from '../../src/approvals/view.js';

const req = (o: Partial<FullRequestRow> = {}): FullRequestRow => ({
  id: 'r-1', job_id: 'j-1', kind: 'approval', summary: 'drop table x', plan_json: null, options_json: null, status: 'pending',
  decision: null, answer: null, comment: null, created_at: 1_000, answered_at: null, tool_name: null, tool_input_json: null,
  expires_at: 61_000, answered_by: null, who: 'any', lead_seen_at: null, ...o,
});

test('who: only person requests are refused to the lead, with the command the person runs', () => {
  assert.equal(leadRefusal(req({ who: 'any' })), undefined);
  assert.equal(leadRefusal(req({ who: 'lead' })), undefined);
  assert.match(leadRefusal(req({ who: 'person' }))!, /^Request r-1 is for the person .*nothing was changed.*overseer respond r-1 --approve\|--reject/);
  assert.match(howToAnswer(req({ who: 'person' })), /^Only the person can answer/);
  assert.match(howToAnswer(req({ who: 'lead' })), /answer it with respond/);
  assert.equal(cliHint(req({ kind: 'question', options_json: '["a","b"]' })), 'overseer respond r-1 --answer "a"|"b" [--comment "<text>"]');
});

test('answers must fit the request', () => {
  assert.match(answerProblem(req(), { answer: 'yes' })!, /give decision "approved" or "rejected"/);
  assert.equal(answerProblem(req(), { decision: 'rejected' }), undefined);
  const q = req({ kind: 'question', options_json: '["eu","us"]' });
  assert.match(answerProblem(q, { decision: 'approved' })!, /give answer \(one of "eu", "us"\)/);
  assert.match(answerProblem(q, { answer: 'mars' })!, /"mars" is not one of the options "eu", "us"/);
  assert.equal(answerProblem(q, { answer: 'us' }), undefined);
  assert.equal(answerProblem(req({ kind: 'question' }), { answer: 'anything' }), undefined);
});

test('the plan and a permission prompt read as text; the form times out after the request', () => {
  assert.equal(planText(JSON.stringify({ rationale: 'why not', resources: ['a', 'b'], rollback: '' })), 'Why: why not\nResources:\n  - a\n  - b');
  assert.equal(planText(null), '');
  const f = buildForm(req({ kind: 'permission', tool_name: 'Bash', summary: 'Bash: git push', tool_input_json: '{"command":"git push origin main"}' }), 'Pusher', 11_000);
  assert.equal(f.message, 'Agent "Pusher" (j-1) asks permission to use Bash:\n\nBash: git push\n\n  command: git push origin main\n\nAccept to approve, decline to reject. You may add a comment for the agent.');
  assert.equal(f.timeoutMs, 50_000 + 60_000);
  assert.match(buildForm(req({ who: 'person' }), undefined, 0).message, /^Agent j-1 asks for your approval:[\s\S]*only you can answer this/);
});

test('reading the form: accept approves, decline rejects, cancel is no answer', () => {
  assert.deepEqual(readForm('approval', { action: 'accept', content: { comment: '  ' } }), { decision: 'approved', comment: undefined });
  assert.deepEqual(readForm('approval', { action: 'decline' }), { decision: 'rejected', comment: 'declined by the person' });
  assert.deepEqual(readForm('approval', { action: 'decline', content: { comment: 'no' } }), { decision: 'rejected', comment: 'no' });
  assert.equal(readForm('approval', { action: 'cancel' }), undefined);
  assert.deepEqual(readForm('question', { action: 'accept', content: { answer: 'eu' } }), { answer: 'eu' });
  assert.equal(readForm('question', { action: 'decline' }), undefined);
  assert.equal(readForm('question', { action: 'accept', content: {} }), undefined);
});

test('views: awaiting only while pending; how a request closed', () => {
  assert.equal(requestView(req({ who: 'person' })).awaiting, 'person');
  const closed = req({ status: 'answered', decision: 'approved', answered_by: 'lead', answered_at: 5_000 });
  assert.deepEqual([requestView(closed, 'T').awaiting, requestView(closed, 'T').how_to_answer, requestView(closed, 'T').agent_title], [null, null, 'T']);
  assert.equal(closedHow(closed), 'approved by lead');
  assert.equal(closedHow(req({ status: 'timed_out', answered_by: 'timeout' })), 'timed out');
  assert.equal(closedHow(req({ status: 'cancelled', answered_by: 'hub' })), 'cancelled by hub');
  assert.equal(closedHow(req({ status: 'answered', kind: 'question', answer: 'eu', answered_by: 'person (cli)' })), '"eu" by person (cli)');
  assert.deepEqual(Object.keys(attentionItem(req(), 'T')).sort(), ['agent_title', 'awaiting', 'created_at', 'expires_at', 'how_to_answer', 'job_id', 'kind', 'request_id', 'summary', 'who']);
});
