// Debate rows (one per debate) and their turns (one per side's job: each round's answers and
// the post-action, review and response), in the tables of migration 21.
import type { Db } from '../store/db.js';
import type { Side, TurnFacts, TurnKind, TurnStatus } from './logic.js';
import type { DebateStatus, SideSpec } from '../contract/debates.js';

export type { DebateStatus, SideSpec };

export const DEBATE_STATUSES: readonly DebateStatus[] = ['running', 'consensus', 'disagreement', 'failed', 'cancelled'];

export interface DebateRow {
  id: string;
  title: string;
  task: string;
  status: DebateStatus;
  cwd: string;
  repo_root: string | null;
  worktree_path: string | null;
  branch: string | null;
  base_commit: string | null;
  sides_json: string;
  max_rounds: number;
  loops: number;
  post_action: string | null;
  post_action_side: number;
  verify: number;
  error: string | null;
  /** The project its turns' jobs carry (src/projects); null: none. */
  project: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface TurnRow {
  debate_id: string;
  loop: number;
  kind: TurnKind;
  round: number;
  side: Side;
  job_id: string;
  status: TurnStatus;
  verdict: string | null;
  position: string | null;
  reasoning: string | null;
  open_points: string | null;
  text: string | null;
  error: string | null;
  created_at: number;
  ended_at: number | null;
}

export const turnFacts = (t: TurnRow): TurnFacts => ({
  loop: t.loop, kind: t.kind, round: t.round, side: t.side, status: t.status, verdict: t.verdict, position: t.position, reasoning: t.reasoning,
  open_points: t.open_points ? (JSON.parse(t.open_points) as string[]) : null,
});

export class DebateStore {
  constructor(readonly db: Db, private readonly onChange: (d: DebateRow) => void = () => undefined) {}

  insert(d: Omit<DebateRow, 'updated_at'>): void {
    this.db.prepare(`INSERT INTO debates (id, title, task, status, cwd, repo_root, worktree_path, branch, base_commit, sides_json, max_rounds, loops,
      post_action, post_action_side, verify, error, project, created_at, updated_at, ended_at)
      VALUES (@id, @title, @task, @status, @cwd, @repo_root, @worktree_path, @branch, @base_commit, @sides_json, @max_rounds, @loops,
      @post_action, @post_action_side, @verify, @error, @project, @created_at, @created_at, @ended_at)`).run(d);
    this.onChange(this.get(d.id)!);
  }

  get(id: string): DebateRow | undefined {
    return this.db.prepare('SELECT * FROM debates WHERE id = ?').get(id) as DebateRow | undefined;
  }

  list(status: DebateStatus | undefined, limit: number): DebateRow[] {
    return (status
      ? this.db.prepare('SELECT * FROM debates WHERE status = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(status, limit)
      : this.db.prepare('SELECT * FROM debates ORDER BY created_at DESC, rowid DESC LIMIT ?').all(limit)) as DebateRow[];
  }

  recentIds(n = 5): string[] {
    return (this.db.prepare('SELECT id FROM debates ORDER BY created_at DESC, rowid DESC LIMIT ?').all(n) as { id: string }[]).map((r) => r.id);
  }

  update(id: string, patch: Partial<Pick<DebateRow, 'status' | 'error' | 'ended_at'>>, now: number): void {
    const keys = Object.keys(patch);
    this.db.prepare(`UPDATE debates SET ${keys.map((k) => `${k} = @${k}`).join(', ')}, updated_at = @now WHERE id = @id`).run({ ...patch, now, id });
    this.onChange(this.get(id)!);
  }

  turns(id: string): TurnRow[] {
    return this.db.prepare('SELECT * FROM debate_turns WHERE debate_id = ? ORDER BY loop, round, kind, side').all(id) as TurnRow[];
  }

  turnByJob(jobId: string): TurnRow | undefined {
    return this.db.prepare('SELECT * FROM debate_turns WHERE job_id = ?').get(jobId) as TurnRow | undefined;
  }

  /** A turn's (new) job: inserted, or replacing the job of a turn whose job was interrupted. */
  putTurn(t: Pick<TurnRow, 'debate_id' | 'loop' | 'kind' | 'round' | 'side' | 'job_id'>, now: number): void {
    this.db.prepare(`INSERT INTO debate_turns (debate_id, loop, kind, round, side, job_id, status, created_at)
      VALUES (@debate_id, @loop, @kind, @round, @side, @job_id, 'running', @now)
      ON CONFLICT (debate_id, loop, kind, round, side) DO UPDATE SET job_id = excluded.job_id, status = 'running', error = NULL, ended_at = NULL`).run({ ...t, now });
  }

  settleTurn(jobId: string, r: Partial<Pick<TurnRow, 'verdict' | 'position' | 'reasoning' | 'open_points' | 'text' | 'error'>> & { status: TurnStatus }, now: number): void {
    this.db.prepare(`UPDATE debate_turns SET status = @status, verdict = @verdict, position = @position, reasoning = @reasoning, open_points = @open_points,
      text = @text, error = @error, ended_at = @now WHERE job_id = @job_id`).run({
      verdict: null, position: null, reasoning: null, open_points: null, text: null, error: null, ...r, now, job_id: jobId,
    });
  }
}
