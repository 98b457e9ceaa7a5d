// Request rows: approvals, questions and permission prompts waiting for the person or the lead,
// and the answers that arrived after their request had closed (late answers, kept and shown).
import type { Db } from './db.js';
import type { RequestRow } from './jobs.js';
import type { Who } from '../contract/coord.js';

export type { Who };

export type FullRequestRow = RequestRow & {
  tool_name: string | null;
  tool_input_json: string | null;
  expires_at: number | null;
  answered_by: string | null;
  who: Who;
  /** When a lead's wait_for_agents first returned it (a person-only request wakes the lead once). */
  lead_seen_at: number | null;
};

export interface LateAnswerRow {
  id: number;
  request_id: string;
  job_id: string;
  answered_by: string;
  decision: string | null;
  answer: string | null;
  comment: string | null;
  at: number;
  lead_seen_at: number | null;
}

type NewRequest = Omit<FullRequestRow, 'status' | 'decision' | 'answer' | 'comment' | 'answered_at' | 'answered_by' | 'lead_seen_at'>;

export class RequestStore {
  constructor(private readonly db: Db) {}

  insert(r: NewRequest): void {
    this.db.prepare(`INSERT INTO requests (id, job_id, kind, summary, plan_json, options_json, status, created_at, tool_name, tool_input_json, expires_at, who)
      VALUES (@id, @job_id, @kind, @summary, @plan_json, @options_json, 'pending', @created_at, @tool_name, @tool_input_json, @expires_at, @who)`).run(r);
  }

  get(id: string): FullRequestRow | undefined {
    return this.db.prepare('SELECT * FROM requests WHERE id = ?').get(id) as FullRequestRow | undefined;
  }

  list(status: string, limit: number): FullRequestRow[] {
    if (status === 'all') return this.db.prepare('SELECT * FROM requests ORDER BY created_at DESC LIMIT ?').all(limit) as FullRequestRow[];
    return this.db.prepare('SELECT * FROM requests WHERE status = ? ORDER BY created_at LIMIT ?').all(status, limit) as FullRequestRow[];
  }

  /** Pending requests of these jobs, oldest first. */
  pendingFor(jobIds: string[]): FullRequestRow[] {
    if (jobIds.length === 0) return [];
    return this.db.prepare(`SELECT * FROM requests WHERE status = 'pending' AND job_id IN (${jobIds.map(() => '?').join(',')}) ORDER BY created_at`).all(...jobIds) as FullRequestRow[];
  }

  /** The newest requests of one job (get_agent). */
  ofJob(jobId: string, limit: number): FullRequestRow[] {
    return (this.db.prepare('SELECT * FROM requests WHERE job_id = ? ORDER BY created_at DESC LIMIT ?').all(jobId, limit) as FullRequestRow[]).reverse();
  }

  close(id: string, f: { status: string; decision?: string | null; answer?: string | null; comment?: string | null; by?: string | null }, now: number): boolean {
    return this.db.prepare(`UPDATE requests SET status = ?, decision = ?, answer = ?, comment = ?, answered_by = ?, answered_at = ? WHERE id = ? AND status = 'pending'`)
      .run(f.status, f.decision ?? null, f.answer ?? null, f.comment ?? null, f.by ?? null, now, id).changes > 0;
  }

  markLeadSeen(ids: string[], now: number): void {
    const st = this.db.prepare('UPDATE requests SET lead_seen_at = ? WHERE id = ? AND lead_seen_at IS NULL');
    for (const id of ids) st.run(now, id);
  }

  pendingOf(jobId: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS c FROM requests WHERE job_id = ? AND status = 'pending'`).get(jobId) as { c: number }).c;
  }

  recentIds(max = 5): string[] {
    return (this.db.prepare('SELECT id FROM requests ORDER BY created_at DESC LIMIT ?').all(max) as { id: string }[]).map((r) => r.id);
  }

  /** Close every pending request of a job (its process ended). */
  cancelOf(jobId: string, now: number, keepToolName?: string): string[] {
    const ids = (this.db.prepare(`SELECT id FROM requests WHERE job_id = ? AND status = 'pending' AND (tool_name IS NULL OR tool_name != ?)`).all(jobId, keepToolName ?? '') as { id: string }[]).map((r) => r.id);
    for (const id of ids) this.close(id, { status: 'cancelled', comment: 'the agent is no longer running', by: 'hub' }, now);
    return ids;
  }

  // ---- late answers ----------------------------------------------------------------------

  addLate(l: Omit<LateAnswerRow, 'id'>): number {
    return Number(this.db.prepare(`INSERT INTO request_late_answers (request_id, job_id, answered_by, decision, answer, comment, at, lead_seen_at)
      VALUES (@request_id, @job_id, @answered_by, @decision, @answer, @comment, @at, @lead_seen_at)`).run(l).lastInsertRowid);
  }

  lateOf(requestId: string): LateAnswerRow[] {
    return this.db.prepare('SELECT * FROM request_late_answers WHERE request_id = ? ORDER BY id').all(requestId) as LateAnswerRow[];
  }

  /** Requests with late answers, the most recent late answer first. */
  withLate(limit: number): string[] {
    return (this.db.prepare('SELECT request_id FROM request_late_answers GROUP BY request_id ORDER BY MAX(id) DESC LIMIT ?').all(limit) as { request_id: string }[]).map((r) => r.request_id);
  }

  /** Late answers on these jobs' requests that no lead has been shown yet. */
  unseenLate(jobIds: string[]): LateAnswerRow[] {
    if (jobIds.length === 0) return [];
    return this.db.prepare(`SELECT * FROM request_late_answers WHERE lead_seen_at IS NULL AND job_id IN (${jobIds.map(() => '?').join(',')}) ORDER BY id`).all(...jobIds) as LateAnswerRow[];
  }

  markLateSeen(ids: number[], now: number): void {
    const st = this.db.prepare('UPDATE request_late_answers SET lead_seen_at = ? WHERE id = ?');
    for (const id of ids) st.run(now, id);
  }
}
