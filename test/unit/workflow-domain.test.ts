// The workflow's pure decisions: milestones (src/domain/milestones.ts) — the parser, the
// matching rules of check-offs, the hub's record, its rendering into the plan note and the
// reconciliation of edited notes — and (src/domain/workflow.ts) what comes after each phase:
// repairs, plan re-assessment, plan approval, zero progress, max_cycles, retries and model
// rotation on rate limits.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_PHASE_RETRIES, MAX_REPAIRS, ZERO_PROGRESS_LIMIT,
  afterAssess, afterFailure, afterImplement, afterReview, assessProblem, freshCounters,
  type Counters,
} from '../../src/domain/workflow.js';
import {
  carryOver, matchMilestone, matchProblem, milestoneKey, noteDiscrepancies, parseMilestones, progressOf, recordOf, renderPlan, reopenIn, topOpen,
  type MilestoneRecord,
} from '../../src/domain/milestones.js';

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

});

const rec = (text: string, done = false, cycle: number | null = done ? 1 : null): MilestoneRecord => ({ text, done, cycle, job: done ? `j-${cycle}` : null });

describe('milestoneKey: the matching rules of check-offs', () => {
  test('tolerates whitespace, a copied list prefix with either box, bullet style, trailing punctuation and letter case', () => {
    const same = [
      'Add the parser', '  add   the\tparser  ', '- [ ] Add the parser', '* [x] Add the parser', '- [X] add the parser', '[ ] Add the parser',
      '[x]Add the parser', '-[ ] Add the parser', '+ [ ] Add the parser', '- Add the parser', 'Add the parser.', 'ADD THE PARSER!!', 'Add the parser :', 'Add the parser…',
    ];
    for (const s of same) assert.equal(milestoneKey(s), 'add the parser', JSON.stringify(s));
  });

  test('words, inner punctuation, backticks and numbers must be the same', () => {
    const base = milestoneKey('Wire the CLI (step 2)');
    for (const s of ['Wire the CLI — step 2', 'Wire the CLI step 2', 'Wire the CLI (step 3)', 'Wire a CLI (step 2)', 'Wire the `CLI` (step 2)', 'Wire the CLI (step 2) and docs']) {
      assert.notEqual(milestoneKey(s), base, JSON.stringify(s));
    }
    assert.notEqual(milestoneKey('add alpha.txt'), milestoneKey('add alpha txt'));
    assert.equal(milestoneKey('add alpha.txt.'), milestoneKey('add alpha.txt'), 'only trailing punctuation goes');
  });

  test('a name that is only a prefix, punctuation or blanks is empty (names no milestone)', () => {
    for (const s of ['', '   ', '- [ ]', '- [x] ', '...', '*']) assert.equal(milestoneKey(s), '', JSON.stringify(s));
  });
});

describe('matchMilestone', () => {
  const record = [rec('Add the parser', true), rec('Wire the CLI (step 2)'), rec('Docs')];

  test('finds the open milestone the phase named, whichever it is (not only the top one)', () => {
    assert.deepEqual(matchMilestone(record, '- [ ] wire the cli (step 2).'), { index: 1 });
    assert.deepEqual(matchMilestone(record, 'DOCS'), { index: 2 });
  });

  test('a done milestone is not checked again; an unknown or empty name matches nothing — never another milestone', () => {
    assert.deepEqual(matchMilestone(record, 'add the parser'), { problem: 'already_done', index: 0 });
    assert.deepEqual(matchMilestone(record, 'Wire the CLI'), { problem: 'unknown' });
    assert.deepEqual(matchMilestone(record, 'something the plan never said'), { problem: 'unknown' });
    assert.deepEqual(matchMilestone(record, ''), { problem: 'unnamed' });
    assert.deepEqual(matchMilestone([], 'Docs'), { problem: 'unknown' });
  });

  test('two milestones with one name: the first open one', () => {
    assert.deepEqual(matchMilestone([rec('tests', true), rec('tests'), rec('tests')], 'Tests'), { index: 1 });
  });

  test('matchProblem says why, naming the open milestones or the cycle that did it', () => {
    assert.equal(matchProblem({ problem: 'unnamed' }, '', record), 'the implement phase named no milestone');
    assert.equal(matchProblem({ problem: 'already_done', index: 0 }, 'add the parser', record), '"Add the parser" was already checked off by the implement phase of cycle 1');
    assert.equal(matchProblem({ problem: 'unknown' }, 'nope', record), 'no milestone of the plan matches "nope" (the plan\'s open milestones: "Wire the CLI (step 2)", "Docs")');
  });
});

describe('the record: recordOf, renderPlan, carryOver, reopenIn, progress', () => {
  test('a fresh record has every milestone open, even boxes the assessor checked', () => {
    assert.deepEqual(recordOf('# P\n- [ ] a\n* [x] b\n'), [rec('a'), rec('b')]);
  });

  test('renderPlan sets each milestone line\'s box from the record and leaves every other character alone', () => {
    const plan = '# Plan\nprose - [ ] not a milestone\n- [ ] a\n  *   [x]   b  \n- [X] c\r\n';
    assert.equal(renderPlan(plan, [rec('a', true), rec('b'), rec('c', true)]), '# Plan\nprose - [ ] not a milestone\n- [x] a\n  *   [ ]   b  \n- [x] c\r\n');
    assert.equal(renderPlan('- [x] a\n- [x] b', []), '- [ ] a\n- [ ] b', 'no record: nothing is done');
  });

  test('carryOver keeps the check-offs of milestones whose name is unchanged; reworded and new ones are open', () => {
    const old = [rec('Add parser', true, 1), rec('Wire CLI', true, 2), rec('Docs')];
    const next = carryOver('- [ ] add parser.\n- [ ] Wire the CLI\n- [ ] Docs\n- [ ] New one', old);
    assert.deepEqual(next, [{ text: 'add parser.', done: true, cycle: 1, job: 'j-1' }, rec('Wire the CLI'), rec('Docs'), rec('New one')]);
  });

  test('carryOver with uncheckReopens: a done milestone the new text leaves unchecked is open; a checked box without a record is not done', () => {
    const old = [rec('a', true, 1), rec('b', true, 2), rec('c')];
    assert.deepEqual(carryOver('- [x] a\n- [ ] b\n- [x] c', old, true), [{ ...rec('a', true, 1) }, rec('b'), rec('c')]);
    assert.deepEqual(carryOver('- [x] a\n- [ ] b\n- [x] c', old).map((m) => m.done), [true, true, false]);
  });

  test('a check-off is used once: a duplicated name does not double a done milestone', () => {
    assert.deepEqual(carryOver('- [ ] t\n- [ ] t', [rec('t', true)]).map((m) => m.done), [true, false]);
  });

  test('reopenIn opens the named done milestones (same matching) and reports them; open or unknown names change nothing', () => {
    const r = reopenIn([rec('Add parser', true), rec('Wire CLI', true), rec('Docs'), rec('Tests', true)], ['- [x] wire cli', 'DOCS', 'not in the plan', 'add   parser.']);
    assert.deepEqual(r.reopened, ['Add parser', 'Wire CLI']);
    assert.deepEqual(r.record.map((m) => m.done), [false, false, false, true]);
    assert.deepEqual(r.record[0], rec('Add parser'));
    assert.deepEqual(reopenIn([rec('a', true)], []).reopened, []);
  });

  test('topOpen and progressOf count the record', () => {
    assert.equal(topOpen([rec('a', true), rec('b'), rec('c')])?.text, 'b');
    assert.equal(topOpen([rec('a', true)]), undefined);
    assert.deepEqual(progressOf([rec('a', true), rec('b')]), { done: 1, total: 2 });
    assert.deepEqual(progressOf([]), { done: 0, total: 0 });
  });
});

describe('noteDiscrepancies: an edited plan note against the record', () => {
  const record = [rec('add alpha.txt', true, 1), rec('add beta.txt')];

  test('the reproduction: an agent checks its own milestone (and more) before the hub did', () => {
    assert.deepEqual(noteDiscrepancies('- [x] add alpha.txt\n- [x] add beta.txt', record), ['"add beta.txt" was checked, but no implement phase reported it completed']);
  });

  test('unchecked done milestones, reworded, removed and added ones are named', () => {
    assert.deepEqual(noteDiscrepancies('- [ ] add alpha.txt\n- [ ] add beta file\n- [x] extra', record), [
      '"add alpha.txt" was unchecked, but the implement phase of cycle 1 completed it',
      '"add beta.txt" was removed or reworded',
      '"add beta file" was added',
      '"extra" was added',
    ]);
  });

  test('matched by name, not position; a note that only differs elsewhere has no milestone discrepancy', () => {
    assert.deepEqual(noteDiscrepancies('# new title\n* [ ] Add beta.txt\n- [X] add alpha.txt', record), []);
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
