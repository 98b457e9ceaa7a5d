// Request rows: approvals, questions and permission prompts waiting for the lead (or person).
import type { Db } from './db.js';
import type { RequestRow } from './jobs.js';

export type FullRequestRow = RequestRow & { tool_name: string | null; tool_input_json: string | null; expires_at: number | null; answered_by: string | null };

export class RequestStore {
  constructor(private readonly db: Db) {}

  insert(r: Omit<FullRequestRow, 'status' | 'decision' | 'answer' | 'comment' | 'answered_at' | 'answered_by'>): void {
    this.db.prepare(`INSERT INTO requests (id, job_id, kind, summary, plan_json, options_json, status, created_at, tool_name, tool_input_json, expires_at)
      VALUES (@id, @job_id, @kind, @summary, @plan_json, @options_json, 'pending', @created_at, @tool_name, @tool_input_json, @expires_at)`).run(r);
  }

  get(id: string): FullRequestRow | undefined {
    return this.db.prepare('SELECT * FROM requests WHERE id = ?').get(id) as FullRequestRow | undefined;
  }

  list(status: string, limit: number): FullRequestRow[] {
    if (status === 'all') return this.db.prepare('SELECT * FROM requests ORDER BY created_at DESC LIMIT ?').all(limit) as FullRequestRow[];
    return this.db.prepare('SELECT * FROM requests WHERE status = ? ORDER BY created_at LIMIT ?').all(status, limit) as FullRequestRow[];
  }

  close(id: string, f: { status: string; decision?: string | null; answer?: string | null; comment?: string | null; by?: string | null }, now: number): boolean {
    return this.db.prepare(`UPDATE requests SET status = ?, decision = ?, answer = ?, comment = ?, answered_by = ?, answered_at = ? WHERE id = ? AND status = 'pending'`)
      .run(f.status, f.decision ?? null, f.answer ?? null, f.comment ?? null, f.by ?? null, now, id).changes > 0;
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
    for (const id of ids) this.close(id, { status: 'cancelled', comment: 'the agent is no longer running' }, now);
    return ids;
  }
}
