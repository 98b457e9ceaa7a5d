// Debates (docs/debates.md): two sides — Claude or Codex — answer a task in rounds on the job
// engine until both agree or max_rounds runs out, then optionally act on it and review that.
export { DebateService } from './service.js';
export { DEBATE_STATUSES, type DebateRow, type DebateStatus, type TurnRow } from './store.js';
export { debateView, type DebateView } from './view.js';
export { decide, parseAnswer, priorAnswers, type DebateShape, type Step, type TurnFacts } from './logic.js';
