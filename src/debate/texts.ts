// What a debate says: the prompts of its turns (from prompts/debate-*.md) and the notes it
// writes (debate/<id>/round-<n>, …/final). Pure functions of the debate's row and turns.
import type { PromptLibrary } from '../prompts/load.js';
import { lastRound, needsVerdict, priorAnswers, sideName, type Outcome, type Side, type TurnFacts } from './logic.js';
import type { DebateRow, SideSpec, TurnRow } from './store.js';

/** Characters of a diff shown to a reviewer. */
export const DIFF_CAP = 30_000;

export const workDirOf = (d: DebateRow): string => d.worktree_path ?? d.cwd;
export const sidesOf = (d: DebateRow): [SideSpec, SideSpec] => JSON.parse(d.sides_json) as [SideSpec, SideSpec];
const loopLabel = (d: DebateRow, loop: number): string => (d.loops > 1 ? `, loop ${loop} of ${d.loops}` : '');

/** Note keys: loop 1 is debate/<id>/round-<n>; later loops are under debate/<id>/loop-<l>/. */
export const noteKeys = (id: string, loop: number) => {
  const base = loop > 1 ? `debate/${id}/loop-${loop}/` : `debate/${id}/`;
  return { round: (n: number) => `${base}round-${n}`, post: (kind: string) => `${base}${kind.replace('_', '-')}`, final: `debate/${id}/final` };
};

function answerText(t: TurnFacts): string {
  const lines = [t.position ?? '(no position)'];
  if (t.reasoning) lines.push('', `Reasoning: ${t.reasoning}`);
  if (t.verdict) lines.push('', `Verdict on the other side's previous position: ${t.verdict}`);
  if (t.open_points?.length) lines.push('', 'Open points:', ...t.open_points.map((p) => `- ${p}`));
  return lines.join('\n');
}

/** The final answers of a loop, side A then side B. */
export function finalAnswers(turns: readonly TurnFacts[], loop: number): [TurnFacts | undefined, TurnFacts | undefined] {
  const r = lastRound(turns, loop);
  const at = turns.filter((t) => t.kind === 'answer' && t.loop === loop && t.round === r);
  return [at.find((t) => t.side === 0), at.find((t) => t.side === 1)];
}

export function roundPrompt(p: PromptLibrary, d: DebateRow, turns: readonly TurnFacts[], loop: number, round: number, side: Side): string {
  const prior = priorAnswers(turns, loop, round);
  let previous = '';
  if (prior) {
    const mine = prior[side];
    const theirs = prior[side === 0 ? 1 : 0];
    const where = round > 1 ? `round ${round - 1}` : `the end of loop ${loop - 1}`;
    const head = round > 1
      ? `## The previous round (round ${round - 1})`
      : `## Where the previous loop ended\nLoop ${loop - 1} ended; this loop starts again from both sides' final positions${d.post_action ? ' (the post-action was carried out since: look at the work tree as it is now)' : ''}.`;
    previous = `${head}\n\n### Your answer (side ${sideName(side)}, ${where})\n${answerText(mine)}\n\n### The other side's answer (side ${sideName(mine.side === 0 ? 1 : 0)}, ${where})\n${answerText(theirs)}`;
  }
  const verdictRule = needsVerdict(loop, round)
    ? '- `verdict` on the other side\'s previous position: `agree` if you accept it as it stands (your position may then say the same), `partial` if you accept part of it, `disagree` otherwise. The debate ends in consensus when both sides say `agree` in the same round.'
    : '';
  return p.render('debate-round', {
    debate_id: d.id, side: sideName(side), round, max_rounds: d.max_rounds, loop_label: loopLabel(d, loop), work_dir: workDirOf(d),
    task: d.task, previous, verdict_rule: verdictRule,
  });
}

const positionsOf = (turns: readonly TurnFacts[], loop: number): { position_a: string; position_b: string } => {
  const [a, b] = finalAnswers(turns, loop);
  return { position_a: a ? answerText(a) : '(none)', position_b: b ? answerText(b) : '(none)' };
};

export function postActionPrompt(p: PromptLibrary, d: DebateRow, turns: readonly TurnFacts[], loop: number, outcome: Outcome): string {
  return p.render('debate-post-action', {
    debate_id: d.id, side: sideName(d.post_action_side as Side), loop_label: loopLabel(d, loop), outcome, work_dir: workDirOf(d), task: d.task,
    ...positionsOf(turns, loop), post_action: d.post_action ?? '',
  });
}

export function reviewPrompt(p: PromptLibrary, d: DebateRow, turns: readonly TurnRow[], facts: readonly TurnFacts[], loop: number, diff: string | undefined): string {
  const impl = d.post_action_side as Side;
  const post = turns.find((t) => t.loop === loop && t.kind === 'post_action');
  const diffText = diff === undefined
    ? '## Changes\nThe debate has no worktree of its own: look at the work tree and its git status yourself.'
    : `## The diff of the debate's branch against its base\n${diff.trim() ? `\`\`\`diff\n${diff.length > DIFF_CAP ? `${diff.slice(0, DIFF_CAP)}\n… (diff cut at ${DIFF_CAP} characters)` : diff}\n\`\`\`` : '(empty: nothing changed)'}`;
  return p.render('debate-review', {
    debate_id: d.id, side: sideName(impl === 0 ? 1 : 0), implementer: sideName(impl), loop_label: loopLabel(d, loop), work_dir: workDirOf(d), task: d.task,
    post_action: d.post_action ?? '', ...positionsOf(facts, loop), report: post?.text || '(no report)', diff: diffText,
  });
}

export function responsePrompt(p: PromptLibrary, d: DebateRow, turns: readonly TurnRow[], loop: number): string {
  const impl = d.post_action_side as Side;
  const post = turns.find((t) => t.loop === loop && t.kind === 'post_action');
  const review = turns.find((t) => t.loop === loop && t.kind === 'review');
  return p.render('debate-response', {
    debate_id: d.id, side: sideName(impl), reviewer: sideName(impl === 0 ? 1 : 0), loop_label: loopLabel(d, loop), work_dir: workDirOf(d), task: d.task,
    post_action: d.post_action ?? '', report: post?.text || '(no report)', assessment: review?.verdict ?? '?', notes: review?.text || '(no notes)',
  });
}

/** The note of one finished round: both answers. */
export function roundNote(d: DebateRow, turns: readonly TurnFacts[], loop: number, round: number): string {
  const sides = sidesOf(d);
  const at = turns.filter((t) => t.kind === 'answer' && t.loop === loop && t.round === round).sort((a, b) => a.side - b.side);
  return [`# Debate ${d.id}, round ${round}${loopLabel(d, loop)}`, '',
    ...at.flatMap((t) => [`## Side ${sideName(t.side)} (${sides[t.side].provider}${sides[t.side].model ? ` ${sides[t.side].model}` : ''})`, answerText(t), ''])].join('\n').trim();
}

/** The note of a post-action, review or response turn. */
export function postNote(d: DebateRow, t: TurnRow): string {
  const what = t.kind === 'post_action' ? 'post-action' : t.kind;
  return `# Debate ${d.id}, ${what} by side ${sideName(t.side)}${loopLabel(d, t.loop)}\n\n${t.kind === 'review' ? `assessment: ${t.verdict}\n\n` : ''}${t.text ?? ''}`.trim();
}

/** debate/<id>/final: the outcome, the final positions, and what the post-action turns said. */
export function finalNote(d: DebateRow, turns: readonly TurnRow[], facts: readonly TurnFacts[], status: string, loops: readonly Outcome[], error?: string): string {
  const lines = [`# Debate ${d.id}: ${d.title}`, '', `outcome: ${status}${error ? ` — ${error}` : ''}`];
  if (d.loops > 1) lines.push(`loops: ${loops.map((o, i) => `${i + 1}: ${o}`).join(', ') || '(none finished)'}`);
  const loop = Math.max(0, ...facts.map((t) => t.loop));
  if (loop > 0) {
    const rounds = lastRound(facts, loop);
    lines.push(`rounds: ${rounds} of at most ${d.max_rounds}${d.loops > 1 ? ` (loop ${loop})` : ''}`, '', '## Task', d.task);
    const [a, b] = finalAnswers(facts, loop);
    for (const t of [a, b]) if (t && t.status === 'done') lines.push('', `## Final position of side ${sideName(t.side)}`, answerText(t));
    for (const t of turns.filter((x) => x.loop === loop && x.kind !== 'answer' && x.status === 'done')) {
      lines.push('', `## ${t.kind === 'post_action' ? 'Post-action' : t.kind === 'review' ? 'Review' : 'Response'} (side ${sideName(t.side)})`, t.kind === 'review' ? `assessment: ${t.verdict}\n\n${t.text ?? ''}` : t.text ?? '');
    }
  }
  return lines.join('\n').trim();
}
