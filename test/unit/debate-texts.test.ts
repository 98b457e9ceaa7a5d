// What a debate says (src/debate/texts.ts) rendered from the real prompts/debate-*.md: every
// placeholder filled, round 1 with no answers and no verdict asked, round r with round r-1 of
// both sides and never round r, a later loop's first round with the previous loop's final
// positions, the post-action turns, and the notes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { PromptLibrary } from '../../src/prompts/load.js';
import { finalNote, postActionPrompt, responsePrompt, reviewPrompt, roundNote, roundPrompt, noteKeys } from '../../src/debate/texts.js';
import type { DebateRow, TurnRow } from '../../src/debate/store.js';
import { turnFacts } from '../../src/debate/store.js';
import type { Side } from '../../src/debate/logic.js';

const lib = new PromptLibrary(join(process.cwd(), 'prompts'));
const row = (o: Partial<DebateRow> = {}): DebateRow => ({
  id: 'd-1234abcd', title: 'Cache', task: 'How should we cache?', status: 'running', cwd: '/repo', repo_root: null, worktree_path: null, branch: null,
  base_commit: null, sides_json: JSON.stringify([{ provider: 'claude' }, { provider: 'codex', model: 'gpt-5' }]), max_rounds: 3, loops: 1,
  post_action: 'Implement it', post_action_side: 0, verify: 1, error: null, project: null, created_at: 0, updated_at: 0, ended_at: null, ...o,
});
const turn = (loop: number, round: number, side: Side, verdict: string | null = null, kind: TurnRow['kind'] = 'answer', text: string | null = null): TurnRow => ({
  debate_id: 'd-1234abcd', loop, kind, round, side, job_id: `j-${loop}${round}${side}${kind}`, status: 'done', verdict,
  position: kind === 'answer' ? `P${loop}.${round}.${side ? 'B' : 'A'}` : null, reasoning: kind === 'answer' ? 'because' : null,
  open_points: side ? JSON.stringify(['what about eviction']) : null, text, error: null, created_at: 0, ended_at: 0,
});
const noPlaceholder = (s: string): void => assert.doesNotMatch(s, /\{\{\w+\}\}/);

describe('debate prompts', () => {
  const rows = [turn(1, 1, 0), turn(1, 1, 1), turn(1, 2, 0, 'agree'), turn(1, 2, 1, 'partial')];
  const facts = rows.map(turnFacts);

  test('round 1: the task, no answers, no verdict asked', () => {
    const p = roundPrompt(lib, row(), [], 1, 1, 0);
    noPlaceholder(p);
    assert.match(p, /^# Debate d-1234abcd — side A, round 1 of at most 3\n/);
    assert.match(p, /## Task\nHow should we cache\?/);
    assert.doesNotMatch(p, /verdict|previous round/i);
  });

  test('round 3 shows round 2 of both sides (own first), not round 1 or 3', () => {
    const p = roundPrompt(lib, row(), facts, 1, 3, 1);
    noPlaceholder(p);
    assert.match(p, /### Your answer \(side B, round 2\)\nP1\.2\.B[\s\S]*Verdict on the other side's previous position: partial[\s\S]*- what about eviction[\s\S]*### The other side's answer \(side A, round 2\)\nP1\.2\.A/);
    assert.doesNotMatch(p, /P1\.1\./);
    assert.match(p, /`verdict` on the other side's previous position/);
  });

  test('a later loop starts from the previous loop\'s final positions and asks for a verdict', () => {
    const p = roundPrompt(lib, row({ loops: 2 }), facts, 2, 1, 0);
    noPlaceholder(p);
    assert.match(p, /round 1 of at most 3, loop 2 of 2/);
    assert.match(p, /## Where the previous loop ended[\s\S]*### Your answer \(side A, the end of loop 1\)\nP1\.2\.A[\s\S]*P1\.2\.B/);
    assert.match(p, /`verdict`/);
  });

  test('post-action, review (with the diff) and response', () => {
    const post = postActionPrompt(lib, row(), facts, 1, 'disagreement');
    noPlaceholder(post);
    assert.match(post, /ended in \*\*disagreement\*\*[\s\S]*### Side A\nP1\.2\.A[\s\S]*### Side B\nP1\.2\.B[\s\S]*## What to do now\nImplement it/);
    const withPost = [...rows, turn(1, 0, 0, null, 'post_action', 'did it')];
    const review = reviewPrompt(lib, row(), withPost, facts, 1, '+new line\n');
    noPlaceholder(review);
    assert.match(review, /review by side B[\s\S]*## Side A's report\ndid it[\s\S]*```diff\n\+new line/);
    assert.match(reviewPrompt(lib, row(), withPost, facts, 1, undefined), /no worktree of its own/);
    const response = responsePrompt(lib, row(), [...withPost, turn(1, 0, 1, 'concerns', 'review', 'add a test')], 1);
    noPlaceholder(response);
    assert.match(response, /## Side B's review: concerns\nadd a test/);
  });

  test('notes: round note with both sides and models; final with positions; keys per loop', () => {
    assert.match(roundNote(row(), facts, 1, 2), /## Side A \(claude\)\nP1\.2\.A[\s\S]*## Side B \(codex gpt-5\)\nP1\.2\.B/);
    const f = finalNote(row(), rows, facts, 'disagreement', ['disagreement']);
    assert.match(f, /outcome: disagreement\nrounds: 2 of at most 3[\s\S]*## Final position of side A\nP1\.2\.A/);
    assert.equal(noteKeys('d-1', 1).round(2), 'debate/d-1/round-2');
    assert.equal(noteKeys('d-1', 2).round(1), 'debate/d-1/loop-2/round-1');
    assert.equal(noteKeys('d-1', 2).post('post_action'), 'debate/d-1/loop-2/post-action');
    assert.equal(noteKeys('d-1', 2).final, 'debate/d-1/final');
  });
});
