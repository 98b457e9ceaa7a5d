// The pure core of a debate: which turns come next, when a loop ends in consensus or
// disagreement, what a side's structured answer must hold, and the JSON schemas the sides
// answer with. No I/O: the engine (engine.ts) feeds it the stored turns and applies its steps.

export type Side = 0 | 1;
export type Verdict = 'agree' | 'disagree' | 'partial';
export const VERDICTS: readonly Verdict[] = ['agree', 'disagree', 'partial'];
export type TurnKind = 'answer' | 'post_action' | 'review' | 'response';
export type TurnStatus = 'running' | 'done' | 'failed';
export type Outcome = 'consensus' | 'disagreement';

/** What the decisions need of a debate. */
export interface DebateShape {
  maxRounds: number;
  loops: number;
  postAction: boolean;
  postActionSide: Side;
  verify: boolean;
}

/** What the decisions need of a stored turn. */
export interface TurnFacts {
  loop: number;
  kind: TurnKind;
  round: number;
  side: Side;
  status: TurnStatus;
  verdict?: string | null;
  position?: string | null;
  reasoning?: string | null;
  open_points?: string[] | null;
}

export interface TurnKey { loop: number; kind: TurnKind; round: number; side: Side }

export type Step =
  /** a turn is still running: nothing to do until it settles */
  | { kind: 'wait' }
  /** a turn failed: the debate fails */
  | { kind: 'failed'; turn: TurnFacts }
  /** start these turns (both sides of a round, or one post-action turn) */
  | { kind: 'spawn'; turns: TurnKey[] }
  /** every loop ran: the debate ends with the last loop's outcome */
  | { kind: 'done'; outcome: Outcome; loops: Outcome[] };

export interface Answer {
  position: string;
  reasoning: string;
  verdict?: Verdict;
  open_points?: string[];
}

export const other = (s: Side): Side => (s === 0 ? 1 : 0);
export const sideName = (s: Side): string => (s === 0 ? 'A' : 'B');

const answersOf = (turns: readonly TurnFacts[], loop: number, round: number): TurnFacts[] =>
  turns.filter((t) => t.kind === 'answer' && t.loop === loop && t.round === round);

/** The last round of a loop that has any answer (0: none yet). */
export function lastRound(turns: readonly TurnFacts[], loop: number): number {
  return turns.filter((t) => t.kind === 'answer' && t.loop === loop).reduce((m, t) => Math.max(m, t.round), 0);
}

/** How a round ended once both answers are in: consensus when both sides agree, disagreement
 * when max_rounds is reached without it, else another round. */
export function roundOutcome(both: readonly TurnFacts[], round: number, maxRounds: number): Outcome | 'next' {
  if (both.length === 2 && both.every((t) => t.verdict === 'agree')) return 'consensus';
  return round >= maxRounds ? 'disagreement' : 'next';
}

/** How a loop ended (undefined while its rounds go on). */
export function loopOutcome(shape: DebateShape, turns: readonly TurnFacts[], loop: number): Outcome | undefined {
  const r = lastRound(turns, loop);
  if (r === 0) return undefined;
  const both = answersOf(turns, loop, r);
  if (both.length < 2 || both.some((t) => t.status !== 'done')) return undefined;
  const o = roundOutcome(both, r, shape.maxRounds);
  return o === 'next' ? undefined : o;
}

/**
 * The answers a round's prompt shows both sides: the previous round's of the same loop, or for
 * round 1 of a later loop the previous loop's final answers. Never the current round's.
 * Undefined for round 1 of loop 1 (nothing to react to, so no verdict is asked for).
 */
export function priorAnswers(turns: readonly TurnFacts[], loop: number, round: number): [TurnFacts, TurnFacts] | undefined {
  const at = round > 1 ? { loop, round: round - 1 } : loop > 1 ? { loop: loop - 1, round: lastRound(turns, loop - 1) } : undefined;
  if (!at) return undefined;
  const both = answersOf(turns, at.loop, at.round);
  const a = both.find((t) => t.side === 0);
  const b = both.find((t) => t.side === 1);
  return a && b ? [a, b] : undefined;
}

/** Whether a round's answers must carry a verdict on the other side's previous position. */
export const needsVerdict = (loop: number, round: number): boolean => loop > 1 || round > 1;

/** The next step of a debate, from its shape and every turn stored so far. */
export function decide(shape: DebateShape, turns: readonly TurnFacts[]): Step {
  const failed = turns.find((t) => t.status === 'failed');
  if (failed) return { kind: 'failed', turn: failed };
  if (turns.some((t) => t.status === 'running')) return { kind: 'wait' };
  const outcomes: Outcome[] = [];
  for (let loop = 1; loop <= shape.loops; loop++) {
    const r = lastRound(turns, loop);
    if (r === 0) return { kind: 'spawn', turns: [0, 1].map((side) => ({ loop, kind: 'answer', round: 1, side: side as Side })) };
    const both = answersOf(turns, loop, r);
    if (both.length < 2) {
      const missing = other(both[0]!.side);
      return { kind: 'spawn', turns: [{ loop, kind: 'answer', round: r, side: missing }] };
    }
    const o = roundOutcome(both, r, shape.maxRounds);
    if (o === 'next') return { kind: 'spawn', turns: [0, 1].map((side) => ({ loop, kind: 'answer', round: r + 1, side: side as Side })) };
    outcomes.push(o);
    if (shape.postAction) {
      const impl = shape.postActionSide;
      const chain: TurnKey[] = [{ loop, kind: 'post_action', round: 0, side: impl }];
      if (shape.verify) chain.push({ loop, kind: 'review', round: 0, side: other(impl) }, { loop, kind: 'response', round: 0, side: impl });
      const todo = chain.find((k) => !turns.some((t) => t.loop === k.loop && t.kind === k.kind));
      if (todo) return { kind: 'spawn', turns: [todo] };
    }
  }
  return { kind: 'done', outcome: outcomes.at(-1)!, loops: outcomes };
}

/** A side's structured answer, or what is wrong with it. */
export function parseAnswer(structured: unknown, verdictWanted: boolean): Answer | { problem: string } {
  if (!structured || typeof structured !== 'object' || Array.isArray(structured)) return { problem: `it returned no structured answer (expected {position, reasoning${verdictWanted ? ', verdict' : ''}, open_points?})` };
  const s = structured as Record<string, unknown>;
  const position = typeof s.position === 'string' ? s.position.trim() : '';
  if (!position) return { problem: 'its structured answer has no position' };
  const reasoning = typeof s.reasoning === 'string' ? s.reasoning.trim() : '';
  const open = Array.isArray(s.open_points) ? s.open_points.filter((p): p is string => typeof p === 'string' && p.trim() !== '') : [];
  const a: Answer = { position, reasoning, ...(open.length ? { open_points: open } : {}) };
  if (!verdictWanted) return a;
  if (!VERDICTS.includes(s.verdict as Verdict)) return { problem: `its structured answer has no valid verdict (got ${JSON.stringify(s.verdict ?? null)}; expected agree, disagree or partial)` };
  return { ...a, verdict: s.verdict as Verdict };
}

/** The review of a post-action, or what is wrong with it. */
export function parseReview(structured: unknown): { assessment: 'approve' | 'concerns'; notes: string } | { problem: string } {
  const s = (structured && typeof structured === 'object' ? structured : {}) as Record<string, unknown>;
  if (s.assessment !== 'approve' && s.assessment !== 'concerns') return { problem: 'its structured review has no assessment (expected approve or concerns)' };
  return { assessment: s.assessment, notes: typeof s.notes === 'string' ? s.notes.trim() : '' };
}

const ANSWER_PROPS = {
  position: { type: 'string', description: 'your position on the task now: what you conclude or propose, self-contained' },
  reasoning: { type: 'string', description: 'why: the arguments and evidence behind your position' },
  open_points: { type: 'array', items: { type: 'string' }, description: 'questions still open or points you still dispute, if any' },
} as const;

/** Round 1 of loop 1: nothing to react to yet. */
export const OPENING_SCHEMA = { type: 'object', properties: ANSWER_PROPS, required: ['position', 'reasoning'] } as const;

/** Later rounds: also a verdict on the other side's previous position. */
export const ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    ...ANSWER_PROPS,
    verdict: { type: 'string', enum: VERDICTS, description: 'on the other side\'s previous position: agree, disagree or partial' },
  },
  required: ['position', 'reasoning', 'verdict'],
} as const;

export const REVIEW_SCHEMA = {
  type: 'object',
  properties: {
    assessment: { type: 'string', enum: ['approve', 'concerns'], description: 'approve if the post-action does what the sides agreed, concerns otherwise' },
    notes: { type: 'string', description: 'concrete findings the implementer should answer' },
  },
  required: ['assessment', 'notes'],
} as const;
