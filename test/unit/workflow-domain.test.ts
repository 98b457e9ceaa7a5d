// The workflow's pure decisions (src/domain/workflow.ts): the milestone parser, check-off and
// reopen, progress, and what comes after each phase — repairs, plan re-assessment, plan
// approval, zero progress, max_cycles, retries and model rotation on rate limits.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_PHASE_RETRIES, MAX_REPAIRS, ZERO_PROGRESS_LIMIT,
  afterAssess, afterFailure, afterImplement, afterReview, assessProblem, checkOff, freshCounters, parseMilestones, progress, reopen, topUnchecked,
  type Counters,
} from '../../src/domain/workflow.js';

const PLAN = [
  '# Plan',
  '',
  'Some prose about the approach. - [ ] not at line start, not a milestone',
  '- [ ] Add the parser',
  '* [x] Write the README',
  '  - [X] indented, upper-case X',
  '    * [ ] deeper: Wire the CLI (step 3)',
  '- [] missing space: not a milestone',
  '-[ ] no space after the bullet: not a milestone',
  '1. [ ] numbered: not a milestone',
  '- [ ]',
  '- [y] unknown mark',
  '+ [ ] plus bullet',
  '- [ ] Last one   ',
].join('\n');

describe('parseMilestones', () => {
  test('takes "-" and "*" bullets, [ ]/[x]/[X], any indentation; text trimmed; line numbers kept', () => {
    assert.deepEqual(parseMilestones(PLAN), [
      { text: 'Add the parser', done: false, line: 3 },
      { text: 'Write the README', done: true, line: 4 },
      { text: 'indented, upper-case X', done: true, line: 5 },
      { text: 'deeper: Wire the CLI (step 3)', done: false, line: 6 },
      { text: 'Last one', done: false, line: 13 },
    ]);
  });

  test('a plan without milestone lines has none; CRLF line ends are tolerated', () => {
    assert.deepEqual(parseMilestones(''), []);
    assert.deepEqual(parseMilestones('just do it\n\n## Steps\n1. first\n2. second'), []);
    const crlf = parseMilestones('# P\r\n- [ ] one\r\n- [x] two\r\n');
    assert.deepEqual(crlf.map((m) => [m.text, m.done]), [['one', false], ['two', true]]);
  });

  test('a checkbox followed only by whitespace is not a milestone (whatever the amount of whitespace)', () => {
    assert.deepEqual(parseMilestones('- [ ] '), []);
    // Two or more trailing blanks must not become a milestone whose text is " ".
    assert.deepEqual(parseMilestones('- [ ]  \n* [x] \t '), []);
  });

  test('topUnchecked is the first milestone not done', () => {
    assert.equal(topUnchecked(PLAN)?.text, 'Add the parser');
    assert.equal(topUnchecked('- [x] a\n- [ ] b\n- [ ] c')?.text, 'b');
    assert.equal(topUnchecked('- [x] a'), undefined);
  });
});

describe('checkOff', () => {
  const plan = '# Plan\n- [ ] Add the parser\n- [ ] Wire the CLI (step 2)\n- [ ] Docs\n';

  test('matches the named milestone by normalised text (case, punctuation, spacing) and checks only that line', () => {
    const r = checkOff(plan, '  wire THE cli — step 2!! ');
    assert.equal(r.checked, 'Wire the CLI (step 2)');
    assert.equal(r.plan, '# Plan\n- [ ] Add the parser\n- [x] Wire the CLI (step 2)\n- [ ] Docs\n');
  });

  test('keeps the bullet, indentation and spacing of the line', () => {
    const r = checkOff('  *   [ ]   Indented one\n', 'indented one');
    assert.equal(r.plan, '  *   [x]   Indented one\n');
  });

  test('an unknown milestone falls back to the top unchecked one, unless fallbackTop is false', () => {
    const r = checkOff(plan, 'something the plan never said');
    assert.equal(r.checked, 'Add the parser');
    assert.match(r.plan, /- \[x\] Add the parser\n- \[ \] Wire/);
    const none = checkOff(plan, 'something the plan never said', false);
    assert.equal(none.checked, null);
    assert.equal(none.plan, plan);
  });

  test('an already checked milestone is not checked again: the name matches no unchecked line', () => {
    const p = '- [x] A\n- [ ] B\n';
    assert.deepEqual(checkOff(p, 'A', false), { plan: p, checked: null });
  });

  test('nothing unchecked left: the plan is unchanged and nothing is checked', () => {
    const done = '- [x] a\n- [X] b\n';
    assert.deepEqual(checkOff(done, 'a'), { plan: done, checked: null });
    assert.deepEqual(checkOff('no milestones at all', 'x'), { plan: 'no milestones at all', checked: null });
  });
});

describe('reopen and progress', () => {
  test('reopen unchecks the named checked milestones (normalised match) and reports them', () => {
    const p = '- [x] Add parser\n  * [X] Wire CLI\n- [ ] Docs\n- [x] Tests\n';
    const r = reopen(p, ['wire cli', 'DOCS', 'not in the plan', 'add   parser.']);
    assert.deepEqual(r.reopened, ['Add parser', 'Wire CLI']);
    assert.equal(r.plan, '- [ ] Add parser\n  * [ ] Wire CLI\n- [ ] Docs\n- [x] Tests\n');
  });

  test('reopen of nothing changes nothing', () => {
    const p = '- [x] a\n- [ ] b';
    assert.deepEqual(reopen(p, []), { plan: p, reopened: [] });
  });

  test('progress counts done and total milestones', () => {
    assert.deepEqual(progress(PLAN), { done: 2, total: 5 });
    assert.deepEqual(progress(''), { done: 0, total: 0 });
    assert.deepEqual(progress(checkOff('- [ ] a\n- [ ] b', 'b').plan), { done: 1, total: 2 });
  });
});

describe('afterAssess', () => {
  const good = { plan: '- [ ] one\n- [ ] two', contract: 'both exist' };

  test('a valid plan and contract go to the cycle-1 review (also from a cycle-1 re-assessment)', () => {
    assert.deepEqual(afterAssess(good, 0, freshCounters()), { kind: 'spawn', phase: 'review', cycle: 1 });
    assert.deepEqual(afterAssess(good, 1, freshCounters()), { kind: 'spawn', phase: 'review', cycle: 1 });
  });

  const cases: [string, Parameters<typeof afterAssess>[0], string, RegExp][] = [
    ['no result at all', undefined, 'missing_artifact', /no plan/],
    ['an empty plan', { plan: '  \n', contract: 'c' }, 'missing_artifact', /no plan/],
    ['a plan that is not a string', { plan: ['- [ ] a'], contract: 'c' }, 'missing_artifact', /no plan/],
    ['no contract', { plan: '- [ ] a' }, 'missing_artifact', /no contract/],
    ['a blank contract', { plan: '- [ ] a', contract: ' ' }, 'missing_artifact', /no contract/],
    ['a plan without milestones', { plan: 'just do it', contract: 'c' }, 'no_milestones', /no "- \[ \] …" milestone/],
  ];
  for (const [what, r, code, re] of cases) {
    test(`${what}: repaired ${MAX_REPAIRS} times per cycle, then blocked with ${code}`, () => {
      assert.equal(assessProblem(r)?.code, code);
      const c = freshCounters();
      for (let i = 1; i <= MAX_REPAIRS; i++) {
        const n = afterAssess(r, 0, c);
        assert.equal(n.kind, 'spawn');
        if (n.kind !== 'spawn') return;
        assert.equal(n.phase, 'assess');
        assert.equal(n.cycle, 0);
        assert.match(n.repair ?? '', re);
        assert.equal(c.repairs['assess:0'], i);
      }
      const last = afterAssess(r, 0, c);
      assert.equal(last.kind, 'block');
      if (last.kind !== 'block') return;
      assert.equal(last.code, code);
      assert.match(last.message, re);
      assert.match(last.message, new RegExp(`after ${MAX_REPAIRS} repair attempts`));
      assert.equal(c.repairs['assess:0'], MAX_REPAIRS, 'blocking uses no repair');
    });
  }

  test('repairs are counted per cycle', () => {
    const c = freshCounters();
    c.repairs['assess:0'] = MAX_REPAIRS;
    assert.equal(afterAssess({ plan: '- [ ] a' }, 0, c).kind, 'block');
    assert.equal(afterAssess({ plan: '- [ ] a' }, 1, c).kind, 'spawn');
    assert.equal(c.repairs['assess:1'], 1);
  });
});

describe('afterReview', () => {
  const noApproval = { approvePlan: false, planApproved: false };

  test('cycle 1, changes requested: re-assess with the notes, bounded, then blocked plan_rejected', () => {
    const c = freshCounters();
    for (let i = 1; i <= MAX_REPAIRS; i++) {
      const n = afterReview({ verdict: 'changes_requested', notes: `split milestone ${i}` }, 1, c, noApproval);
      assert.deepEqual(n, { kind: 'spawn', phase: 'assess', cycle: 1, repair: `the reviewer asked for changes to the plan: split milestone ${i}` });
      assert.equal(c.repairs['assess:1'], i);
    }
    const b = afterReview({ verdict: 'changes_requested', notes: 'still too big' }, 1, c, noApproval);
    assert.equal(b.kind, 'block');
    if (b.kind !== 'block') return;
    assert.equal(b.code, 'plan_rejected');
    assert.match(b.message, new RegExp(`rejected the plan ${MAX_REPAIRS + 1} times: still too big`));
  });

  test('cycle 1, changes requested, with approve_plan: re-assess first, no approval yet', () => {
    assert.equal(afterReview({ verdict: 'changes_requested', notes: 'x' }, 1, freshCounters(), { approvePlan: true, planApproved: false }).kind, 'spawn');
  });

  test('cycle 1 approved: the lead approves the plan first when approve_plan is set and not yet approved', () => {
    assert.deepEqual(afterReview({ verdict: 'approve', notes: 'ok' }, 1, freshCounters(), { approvePlan: true, planApproved: false }), { kind: 'approval' });
    assert.deepEqual(afterReview({ verdict: 'approve', notes: 'ok' }, 1, freshCounters(), { approvePlan: true, planApproved: true }), { kind: 'spawn', phase: 'implement', cycle: 1 });
    assert.deepEqual(afterReview({ verdict: 'approve', notes: 'ok' }, 1, freshCounters(), noApproval), { kind: 'spawn', phase: 'implement', cycle: 1 });
  });

  test('later cycles go to implement of the same cycle, whatever the verdict (the notes steer it)', () => {
    const c = freshCounters();
    assert.deepEqual(afterReview({ verdict: 'changes_requested', notes: 'fix' }, 3, c, noApproval), { kind: 'spawn', phase: 'implement', cycle: 3 });
    assert.deepEqual(afterReview({ verdict: 'approve', notes: 'ok' }, 2, c, noApproval), { kind: 'spawn', phase: 'implement', cycle: 2 });
    assert.deepEqual(c.repairs, {}, 'no re-assessment counted after cycle 1');
  });

  test('a missing review result goes on to implement', () => {
    assert.deepEqual(afterReview(undefined, 2, freshCounters(), noApproval), { kind: 'spawn', phase: 'implement', cycle: 2 });
  });
});

describe('afterImplement', () => {
  test('progress resets the zero-progress count and goes to the next review', () => {
    const c: Counters = { ...freshCounters(), zeroProgress: 1 };
    assert.deepEqual(afterImplement(true, false, 1, 10, c), { kind: 'spawn', phase: 'review', cycle: 2 });
    assert.equal(c.zeroProgress, 0);
  });

  test(`${ZERO_PROGRESS_LIMIT} implement phases in a row without progress block zero_progress`, () => {
    const c = freshCounters();
    assert.deepEqual(afterImplement(false, false, 1, 10, c), { kind: 'spawn', phase: 'review', cycle: 2 });
    assert.equal(c.zeroProgress, 1);
    const b = afterImplement(false, false, 2, 10, c);
    assert.equal(c.zeroProgress, 2);
    assert.equal(b.kind, 'block');
    if (b.kind === 'block') {
      assert.equal(b.code, 'zero_progress');
      assert.match(b.message, /2 implement phases in a row/);
    }
  });

  test('no progress, progress, no progress: never blocked (the count resets)', () => {
    const c = freshCounters();
    assert.equal(afterImplement(false, false, 1, 10, c).kind, 'spawn');
    assert.equal(afterImplement(true, false, 2, 10, c).kind, 'spawn');
    assert.equal(afterImplement(false, false, 3, 10, c).kind, 'spawn');
    assert.equal(c.zeroProgress, 1);
  });

  test('all milestones done: done, even in the last cycle', () => {
    assert.deepEqual(afterImplement(true, true, 5, 5, freshCounters()), { kind: 'done' });
    assert.deepEqual(afterImplement(false, true, 1, 10, { ...freshCounters(), zeroProgress: 5 }), { kind: 'done' });
  });

  test('max_cycles reached with milestones left: blocked max_cycles', () => {
    const b = afterImplement(true, false, 3, 3, freshCounters());
    assert.equal(b.kind, 'block');
    if (b.kind === 'block') {
      assert.equal(b.code, 'max_cycles');
      assert.match(b.message, /max_cycles \(3\)/);
    }
    assert.equal(afterImplement(true, false, 2, 3, freshCounters()).kind, 'spawn');
  });
});

describe('afterFailure', () => {
  test('a failure that is not transient blocks phase_failed at once, without counting', () => {
    for (const fc of ['auth', 'binary_not_found', 'budget', 'max_turns', 'cancelled', 'check_failed', 'reported_failure']) {
      const c = freshCounters();
      const n = afterFailure('implement', 2, fc, 'boom '.repeat(200), c, 3);
      assert.equal(n.kind, 'block', fc);
      if (n.kind !== 'block') continue;
      assert.equal(n.code, 'phase_failed');
      assert.match(n.message, new RegExp(`the implement phase failed \\(${fc}\\)`));
      assert.ok(n.message.length < 600, 'the error text is cut');
      assert.equal(c.phaseFailures, 0);
      assert.equal(c.modelIndex, 0);
    }
  });

  test(`transient failures retry the same phase and cycle up to ${MAX_PHASE_RETRIES} times, then block phase_failed`, () => {
    for (const fc of ['crashed', 'api_error', 'timeout', 'mcp_unavailable', 'interrupted']) {
      const c = freshCounters();
      for (let i = 1; i <= MAX_PHASE_RETRIES; i++) {
        assert.deepEqual(afterFailure('review', 4, fc, 'x', c, 1), { kind: 'spawn', phase: 'review', cycle: 4 }, `${fc} #${i}`);
        assert.equal(c.phaseFailures, i);
      }
      const b = afterFailure('review', 4, fc, 'last error', c, 1);
      assert.equal(b.kind, 'block');
      if (b.kind === 'block') {
        assert.equal(b.code, 'phase_failed');
        assert.match(b.message, new RegExp(`failed ${MAX_PHASE_RETRIES + 1} times \\(last: ${fc}: last error\\)`));
      }
      assert.equal(c.modelIndex, 0, 'only rate limits rotate the model');
    }
  });

  test('rate_limited rotates to the next model, and blocks rate_limited when every model was tried', () => {
    const c = freshCounters();
    assert.deepEqual(afterFailure('implement', 1, 'rate_limited', '429', c, 3), { kind: 'spawn', phase: 'implement', cycle: 1 });
    assert.equal(c.modelIndex, 1);
    assert.deepEqual(afterFailure('implement', 1, 'rate_limited', '429', c, 3), { kind: 'spawn', phase: 'implement', cycle: 1 });
    assert.equal(c.modelIndex, 2);
    const b = afterFailure('implement', 1, 'rate_limited', '429', c, 3);
    assert.equal(b.kind, 'block');
    if (b.kind === 'block') {
      assert.equal(b.code, 'rate_limited');
      assert.match(b.message, /\(3 tried\)/);
    }
  });

  test('with a single model, the first rate limit blocks', () => {
    const b = afterFailure('assess', 0, 'rate_limited', '429', freshCounters(), 1);
    assert.equal(b.kind, 'block');
    if (b.kind === 'block') assert.equal(b.code, 'rate_limited');
  });

  test('rate limits count towards the retry cap too', () => {
    const c = { ...freshCounters(), phaseFailures: MAX_PHASE_RETRIES };
    const b = afterFailure('implement', 1, 'rate_limited', '429', c, 10);
    assert.equal(b.kind, 'block');
    if (b.kind === 'block') assert.equal(b.code, 'phase_failed');
  });

  test('freshCounters are independent objects', () => {
    const a = freshCounters();
    a.repairs.x = 1;
    assert.deepEqual(freshCounters(), { repairs: {}, zeroProgress: 0, phaseFailures: 0, modelIndex: 0 });
  });
});
