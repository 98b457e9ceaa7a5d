// Which calls of a re-executed script come from its journal (src/domain/scriptReplay.ts): by what
// they ask and how often, not by the order answers arrived in; recover continues a crashed run,
// resume reuses the longest unchanged part and says where it diverged.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, ScriptReplay, type JournaledCall } from '../../src/domain/scriptReplay.js';

const a = (prompt: string, opts?: object): string => canonicalJson(opts ? [prompt, opts] : [prompt]);
const done = (seq: number, args: string, outcome: unknown): JournaledCall => ({ seq, kind: 'agent', args, status: 'done', jobId: `j-${seq}`, outcome: JSON.stringify(outcome) });

describe('script replay', () => {
  test('canonical JSON ignores key order and undefined members', () => {
    assert.equal(canonicalJson({ b: 1, a: [1, { d: 2, c: undefined }] }), canonicalJson({ a: [1, { d: 2 }], b: 1 }));
    assert.notEqual(canonicalJson(['x', { model: 'a' }]), canonicalJson(['x', { model: 'b' }]));
  });

  test('recover: finished calls come from the journal in any order, a running one is attached to its job, the rest run live', () => {
    const journal: JournaledCall[] = [
      done(1, a('review a'), 'A'), done(2, a('review b'), 'B'),
      { seq: 3, kind: 'agent', args: a('verify', { schema: {} }), status: 'failed', jobId: 'j-3', outcome: JSON.stringify({ name: 'AgentFailed', message: 'tests failed' }) },
      { seq: 4, kind: 'agent', args: a('fix'), status: 'running', jobId: 'j-4' },
    ];
    const r = new ScriptReplay(journal, 'recover');
    // Asked in another order than the journal's.
    assert.deepEqual(r.next('agent', a('review b')), { from: 'journal', entry: journal[1] });
    assert.deepEqual(r.next('agent', a('review a')), { from: 'journal', entry: journal[0] });
    assert.deepEqual(r.next('agent', a('verify', { schema: {} })), { from: 'journal', entry: journal[2] }, 'a failure is replayed: the script already went on from it');
    assert.deepEqual(r.next('agent', a('fix')), { from: 'job', entry: journal[3] });
    assert.deepEqual(r.next('agent', a('report')), { from: 'live' });
    assert.equal(r.diverged, null);
  });

  test('identical calls match by occurrence: the third of three same prompts is new', () => {
    const r = new ScriptReplay([done(1, a('try'), 1), done(2, a('try'), 2)], 'recover');
    assert.equal((r.next('agent', a('try')) as { entry: JournaledCall }).entry.seq, 1);
    assert.equal((r.next('agent', a('try')) as { entry: JournaledCall }).entry.seq, 2);
    assert.deepEqual(r.next('agent', a('try')), { from: 'live' });
  });

  test('the scope is part of the call: the same prompt inside a workflow() is another call', () => {
    const r = new ScriptReplay([{ ...done(1, a('x'), 'top'), scope: '' }, { ...done(2, a('x'), 'nested'), scope: 'w#0' }], 'recover');
    assert.equal((r.next('agent', a('x'), 'w#0') as { entry: JournaledCall }).entry.seq, 2);
    assert.equal((r.next('agent', a('x')) as { entry: JournaledCall }).entry.seq, 1);
    assert.deepEqual(r.next('agent', a('x'), 'w#0'), { from: 'live' });
  });

  test('resume: a journaled workflow() call, finished or failed, runs again without ending reuse', () => {
    const wf = (seq: number, status: 'done' | 'failed'): JournaledCall => ({ seq, kind: 'workflow', args: canonicalJson(['inner']), status, outcome: '1' });
    const journal = [wf(1, 'failed'), wf(2, 'done')];
    const r = new ScriptReplay(journal, 'resume');
    assert.deepEqual(r.next('workflow', canonicalJson(['inner'])), { from: 'job', entry: journal[0] });
    assert.deepEqual(r.next('workflow', canonicalJson(['inner'])), { from: 'job', entry: journal[1] });
    assert.equal(r.diverged, null);
  });

  test('recover: a running workflow() call is attached (its nested script runs again), a finished one is answered', () => {
    const journal: JournaledCall[] = [
      { seq: 1, kind: 'workflow', args: canonicalJson(['w']), status: 'running' },
      { seq: 2, kind: 'workflow', args: canonicalJson(['v']), status: 'done', outcome: '"V"' },
    ];
    const r = new ScriptReplay(journal, 'recover');
    assert.deepEqual(r.next('workflow', canonicalJson(['w'])), { from: 'job', entry: journal[0] });
    assert.deepEqual(r.next('workflow', canonicalJson(['v'])), { from: 'journal', entry: journal[1] });
  });

  test('the kind is part of the call', () => {
    const r = new ScriptReplay([done(1, canonicalJson(['ship it?']), true)], 'recover');
    assert.deepEqual(r.next('approve', canonicalJson(['ship it?'])), { from: 'live' });
  });

  test('resume: reuse until the first edited call, then everything runs live, and say where', () => {
    const journal = [done(1, a('plan'), 'P'), done(2, a('build', { model: 'sonnet' }), 'B'), done(3, a('test'), 'T')];
    const r = new ScriptReplay(journal, 'resume');
    assert.deepEqual(r.next('agent', a('plan')), { from: 'journal', entry: journal[0] });
    const edited = r.next('agent', a('build', { model: 'opus' }));
    assert.deepEqual(edited, { from: 'live', diverged: { seq: null, kind: 'agent', args: a('build', { model: 'opus' }), reason: 'new_or_edited' } });
    assert.deepEqual(r.next('agent', a('test')), { from: 'live' }, 'a call after the divergence runs again even though it is unchanged');
    assert.equal(r.diverged?.reason, 'new_or_edited');
  });

  test('resume: a failed call runs again and ends reuse; a running one is attached to its agent, a limit-refused one runs again, neither ends it', () => {
    const journal: JournaledCall[] = [
      done(1, a('one'), 1),
      { seq: 2, kind: 'agent', args: a('limited'), status: 'failed', limited: true, jobId: 'j-2', outcome: '{"name":"ProviderLimit","message":"429"}' },
      { seq: 3, kind: 'agent', args: a('was running'), status: 'running', jobId: 'j-3' },
      done(4, a('two'), 2),
      { seq: 5, kind: 'agent', args: a('broke'), status: 'failed', jobId: 'j-5', outcome: '{"name":"AgentFailed","message":"x"}' },
      done(6, a('three'), 3),
    ];
    const r = new ScriptReplay(journal, 'resume');
    assert.equal(r.next('agent', a('one')).from, 'journal');
    assert.deepEqual(r.next('agent', a('limited')), { from: 'live' });
    assert.deepEqual(r.next('agent', a('was running')), { from: 'job', entry: journal[2] });
    assert.equal(r.next('agent', a('two')).from, 'journal', 'reuse went on past the unfinished calls');
    assert.deepEqual(r.next('agent', a('broke')), { from: 'live', diverged: { seq: 5, kind: 'agent', args: a('broke'), reason: 'failed' } });
    assert.deepEqual(r.next('agent', a('three')), { from: 'live' });
  });
});
