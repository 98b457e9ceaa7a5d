// What get_debate / list_debates (and the CLI, from a read-only database) show of a debate.
// Long texts are cut here; the notes (debate/<id>/…) keep them whole.
import { isoTime } from '../clock.js';
import { lastRound, sideName, type Side } from './logic.js';
import { sidesOf } from './texts.js';
import { turnFacts, type DebateRow, type TurnRow } from './store.js';
import type { TurnView, DebateView } from '../contract/debates.js';
import { turnJobs, turnsOf } from '../store/sql/debates.js';
import type { Q } from '../store/sql/tx.js';

export type { TurnView, DebateView };

const CUT = 2_000;
const cut = (s: string | null, note: string): string | null => (s && s.length > CUT ? `${s.slice(0, CUT)}… (read the note ${note} for all of it)` : s);

export interface JobLookup { get(id: string): { status: string; cost_usd: number | null } | undefined }

export function debateView(d: DebateRow, turns: readonly TurnRow[], jobs: JobLookup): DebateView {
  const loop = Math.max(1, ...turns.map((t) => t.loop));
  let cost = 0;
  const turnView = (t: TurnRow, note: string): TurnView => {
    const j = jobs.get(t.job_id);
    cost += j?.cost_usd ?? 0;
    return {
      side: sideName(t.side) as 'A' | 'B', job_id: t.job_id, status: t.status, job_status: j?.status ?? null, verdict: t.verdict,
      ...(t.kind === 'answer' ? { position: cut(t.position, note), reasoning: cut(t.reasoning, note), ...(t.open_points ? { open_points: JSON.parse(t.open_points) as string[] } : {}) } : { text: cut(t.text, note) }),
      ...(t.error ? { error: t.error } : {}),
    };
  };
  const base = (l: number): string => (l > 1 ? `debate/${d.id}/loop-${l}/` : `debate/${d.id}/`);
  const rounds = new Map<string, { loop: number; round: number; turns: TurnView[] }>();
  for (const t of turns.filter((x) => x.kind === 'answer')) {
    const k = `${t.loop}:${t.round}`;
    if (!rounds.has(k)) rounds.set(k, { loop: t.loop, round: t.round, turns: [] });
    rounds.get(k)!.turns.push(turnView(t, `${base(t.loop)}round-${t.round}`));
  }
  const post = turns.filter((x) => x.kind !== 'answer').map((t) => ({ loop: t.loop, kind: t.kind, ...turnView(t, `${base(t.loop)}${t.kind.replace('_', '-')}`) }));
  return {
    debate_id: d.id, title: d.title, task: d.task.length > CUT ? `${d.task.slice(0, CUT)}…` : d.task, status: d.status, error: d.error, project: d.project ?? null,
    sides: sidesOf(d).map((s, i) => ({ side: sideName(i as Side) as 'A' | 'B', ...s })),
    max_rounds: d.max_rounds, loops: d.loops, loop, round: lastRound(turns.map(turnFacts), loop),
    post_action: d.post_action, post_action_side: d.post_action ? (sideName(d.post_action_side as Side) as 'A' | 'B') : null, verify: d.verify === 1,
    cwd: d.cwd, branch: d.branch, cost_usd: Math.round(cost * 1e6) / 1e6,
    rounds: [...rounds.values()].sort((a, b) => a.loop - b.loop || a.round - b.round), post,
    notes: { final: `debate/${d.id}/final`, rounds: `debate/${d.id}/` },
    created_at: isoTime(d.created_at), ended_at: d.ended_at ? isoTime(d.ended_at) : null,
  };
}

/** A debate's view read through the layer: its turns and their jobs (the CLI reads it over its read-only handle). */
export async function readDebateView(q: Q, d: DebateRow): Promise<DebateView> {
  const turns = await turnsOf(q, d.id);
  return debateView(d, turns, await turnJobs(q, turns));
}
