// The pure round logic of debates (src/debate/logic.ts): which turns come next, consensus only
// when both sides agree in the same round, partial and disagree go on until max_rounds ends in
// disagreement, post-action → review → response, loops starting from the previous loop's
// final positions, failures, and what a structured answer must hold.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, parseAnswer, parseReview, priorAnswers, needsVerdict, type DebateShape, type Side, type TurnFacts, type Verdict } from '../../src/debate/logic.js';

const shape = (o: Partial<DebateShape> = {}): DebateShape => ({ maxRounds: 3, loops: 1, postAction: false, postActionSide: 0, verify: false, ...o });
const ans = (loop: number, round: number, side: Side, verdict?: Verdict, status: TurnFacts['status'] = 'done'): TurnFacts =>
  ({ loop, kind: 'answer', round, side, status, verdict: verdict ?? null, position: `L${loop}R${round}${side ? 'B' : 'A'}` });
const round = (loop: number, r: number, a?: Verdict, b?: Verdict): TurnFacts[] => [ans(loop, r, 0, a), ans(loop, r, 1, b)];
const spawned = (s: ReturnType<typeof decide>): string[] => (s.kind === 'spawn' ? s.turns.map((t) => `${t.loop}:${t.kind}:${t.round}:${t.side}`) : [s.kind]);

describe('debate rounds', () => {
  test('a new debate starts round 1 with both sides at once', () => {
    assert.deepEqual(spawned(decide(shape(), [])), ['1:answer:1:0', '1:answer:1:1']);
  });

  test('a running turn means wait, even when the other side is done', () => {
    assert.equal(decide(shape(), [ans(1, 1, 0), ans(1, 1, 1, undefined, 'running')]).kind, 'wait');
  });

  test('round 1 never ends in consensus (no verdicts): round 2 follows', () => {
    assert.deepEqual(spawned(decide(shape(), round(1, 1))), ['1:answer:2:0', '1:answer:2:1']);
  });

  test('consensus when both sides agree in the same round', () => {
    const s = decide(shape(), [...round(1, 1), ...round(1, 2, 'agree', 'agree')]);
    assert.deepEqual(s, { kind: 'done', outcome: 'consensus', loops: ['consensus'] });
  });

  test('one agree and one partial is not consensus: another round', () => {
    assert.deepEqual(spawned(decide(shape(), [...round(1, 1), ...round(1, 2, 'agree', 'partial')])), ['1:answer:3:0', '1:answer:3:1']);
  });

  test('disagreement at max_rounds', () => {
    const s = decide(shape({ maxRounds: 2 }), [...round(1, 1), ...round(1, 2, 'disagree', 'partial')]);
    assert.deepEqual(s, { kind: 'done', outcome: 'disagreement', loops: ['disagreement'] });
  });

  test('max_rounds 1 ends after the opening round in disagreement', () => {
    assert.deepEqual(decide(shape({ maxRounds: 1 }), round(1, 1)), { kind: 'done', outcome: 'disagreement', loops: ['disagreement'] });
  });

  test('agreeing in the last round is still consensus', () => {
    const s = decide(shape({ maxRounds: 3 }), [...round(1, 1), ...round(1, 2, 'partial', 'agree'), ...round(1, 3, 'agree', 'agree')]);
    assert.equal(s.kind === 'done' && s.outcome, 'consensus');
  });

  test('a failed turn fails the debate, before anything else', () => {
    const failed = { ...ans(1, 2, 1), status: 'failed' as const };
    const s = decide(shape(), [...round(1, 1), ans(1, 2, 0, 'agree', 'running'), failed]);
    assert.deepEqual(s, { kind: 'failed', turn: failed });
  });

  test('a round with one side missing (a lost spawn) gets that side only', () => {
    assert.deepEqual(spawned(decide(shape(), [...round(1, 1), ans(1, 2, 1, 'agree')])), ['1:answer:2:0']);
  });
});

describe('post-action and verify', () => {
  const agreed = [...round(1, 1), ...round(1, 2, 'agree', 'agree')];
  const turn = (kind: TurnFacts['kind'], side: Side, status: TurnFacts['status'] = 'done'): TurnFacts => ({ loop: 1, kind, round: 0, side, status });

  test('post-action runs on its side once the rounds end, whatever the outcome', () => {
    assert.deepEqual(spawned(decide(shape({ postAction: true, postActionSide: 1 }), agreed)), ['1:post_action:0:1']);
    const disagreed = [...round(1, 1), ...round(1, 2, 'disagree', 'disagree')];
    assert.deepEqual(spawned(decide(shape({ postAction: true, maxRounds: 2 }), disagreed)), ['1:post_action:0:0']);
  });

  test('without verify the debate is done after the post-action', () => {
    assert.deepEqual(decide(shape({ postAction: true }), [...agreed, turn('post_action', 0)]), { kind: 'done', outcome: 'consensus', loops: ['consensus'] });
  });

  test('with verify: the other side reviews, then the implementer responds, then done', () => {
    const sh = shape({ postAction: true, postActionSide: 0, verify: true });
    assert.deepEqual(spawned(decide(sh, [...agreed, turn('post_action', 0)])), ['1:review:0:1']);
    assert.deepEqual(spawned(decide(sh, [...agreed, turn('post_action', 0), turn('review', 1)])), ['1:response:0:0']);
    assert.equal(decide(sh, [...agreed, turn('post_action', 0), turn('review', 1), turn('response', 0)]).kind, 'done');
  });
});

describe('loops', () => {
  test('loop 2 starts after loop 1 (and its post-action) from loop 1\'s final positions, with verdicts asked from its first round', () => {
    const sh = shape({ loops: 2, postAction: true });
    const loop1 = [...round(1, 1), ...round(1, 2, 'agree', 'agree'), { loop: 1, kind: 'post_action' as const, round: 0, side: 0 as Side, status: 'done' as const }];
    assert.deepEqual(spawned(decide(sh, loop1)), ['2:answer:1:0', '2:answer:1:1']);
    const prior = priorAnswers(loop1, 2, 1)!;
    assert.deepEqual(prior.map((t) => t.position), ['L1R2A', 'L1R2B']);
    assert.equal(needsVerdict(2, 1), true);
    assert.equal(needsVerdict(1, 1), false);
  });

  test('the debate ends with the last loop\'s outcome and reports every loop', () => {
    const sh = shape({ loops: 2, maxRounds: 2 });
    const turns = [...round(1, 1), ...round(1, 2, 'agree', 'agree'), ...round(2, 1, 'disagree', 'agree'), ...round(2, 2, 'partial', 'disagree')];
    assert.deepEqual(decide(sh, turns), { kind: 'done', outcome: 'disagreement', loops: ['consensus', 'disagreement'] });
  });

  test('loop 2 can reach consensus in its first round', () => {
    const turns = [...round(1, 1), ...round(2, 1, 'agree', 'agree')];
    assert.deepEqual(decide(shape({ loops: 2, maxRounds: 1 }), turns), { kind: 'done', outcome: 'consensus', loops: ['disagreement', 'consensus'] });
  });
});

describe('prior answers', () => {
  test('round r shows round r-1 of both sides and nothing of round r', () => {
    const turns = [...round(1, 1), ...round(1, 2, 'partial', 'partial'), ans(1, 3, 0, 'agree')];
    assert.deepEqual(priorAnswers(turns, 1, 3)!.map((t) => t.position), ['L1R2A', 'L1R2B']);
    assert.equal(priorAnswers(turns, 1, 1), undefined);
  });
});

describe('structured answers', () => {
  test('round 1: position and reasoning; open points kept, empty ones dropped; no verdict asked', () => {
    assert.deepEqual(parseAnswer({ position: ' use X ', reasoning: 'because', open_points: ['cost', '', 3] }, false), { position: 'use X', reasoning: 'because', open_points: ['cost'] });
    assert.deepEqual(parseAnswer({ position: 'p', reasoning: 'r', open_points: null }, false), { position: 'p', reasoning: 'r' });
  });

  test('later rounds need a valid verdict', () => {
    assert.deepEqual(parseAnswer({ position: 'p', reasoning: 'r', verdict: 'partial' }, true), { position: 'p', reasoning: 'r', verdict: 'partial' });
    assert.match((parseAnswer({ position: 'p', reasoning: 'r', verdict: 'maybe' }, true) as { problem: string }).problem, /no valid verdict \(got "maybe"/);
    assert.match((parseAnswer({ position: 'p', reasoning: 'r' }, true) as { problem: string }).problem, /no valid verdict/);
  });

  test('no structured result, or no position, is a problem', () => {
    assert.match((parseAnswer(undefined, false) as { problem: string }).problem, /no structured answer/);
    assert.match((parseAnswer({ position: '  ', reasoning: 'r' }, false) as { problem: string }).problem, /no position/);
  });

  test('a review needs an assessment', () => {
    assert.deepEqual(parseReview({ assessment: 'concerns', notes: 'n' }), { assessment: 'concerns', notes: 'n' });
    assert.match((parseReview({ notes: 'n' }) as { problem: string }).problem, /no assessment/);
  });
});
