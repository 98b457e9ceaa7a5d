// Debate rows (one per debate) and their turns (one per side's job: each round's answers and
// the post-action, review and response), in the tables of migration 21, read and written through
// the layer (src/store/sql/debates.ts); here what the engine reads out of them.
import type { TurnFacts } from './logic.js';
import type { DebateStatus, SideSpec } from '../contract/debates.js';
import type { TurnRow } from '../store/sql/debates.js';

export type { DebateStatus, SideSpec };
export type { DebateRow, TurnRow } from '../store/sql/debates.js';

export const DEBATE_STATUSES: readonly DebateStatus[] = ['running', 'consensus', 'disagreement', 'failed', 'cancelled'];

export const turnFacts = (t: TurnRow): TurnFacts => ({
  loop: t.loop, kind: t.kind, round: t.round, side: t.side, status: t.status, verdict: t.verdict, position: t.position, reasoning: t.reasoning,
  open_points: t.open_points ? (JSON.parse(t.open_points) as string[]) : null,
});
