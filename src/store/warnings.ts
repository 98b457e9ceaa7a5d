// Health warnings of jobs (src/floor/health.ts decides them, src/floor/monitor.ts raises and
// clears them here). One open row per (job, kind): raising an open warning again is a no-op.
import type { Db } from './db.js';

export const WARNING_KINDS = ['stalled', 'turns_high', 'budget_high', 'time_high', 'long_running', 'commands_failed'] as const;
export type WarningKind = (typeof WARNING_KINDS)[number];

export interface WarningRow {
  id: number;
  job_id: string;
  kind: WarningKind;
  detail: string;
  raised_at: number;
  cleared_at: number | null;
  lead_seen_at: number | null;
  reaction: string | null;
}

export class WarningStore {
  constructor(private readonly db: Db) {}

  /** Open warnings, of one job or of all jobs, oldest first. */
  open(jobId?: string): WarningRow[] {
    return (jobId
      ? this.db.prepare('SELECT * FROM job_warnings WHERE cleared_at IS NULL AND job_id = ? ORDER BY id').all(jobId)
      : this.db.prepare('SELECT * FROM job_warnings WHERE cleared_at IS NULL ORDER BY id').all()) as WarningRow[];
  }

  /** Raise `kind` on a job unless it is open already; returns the new row, or undefined. */
  raise(jobId: string, kind: WarningKind, detail: string, now: number): WarningRow | undefined {
    const open = this.db.prepare('SELECT id FROM job_warnings WHERE job_id = ? AND kind = ? AND cleared_at IS NULL').get(jobId, kind);
    if (open) return undefined;
    const r = this.db.prepare('INSERT INTO job_warnings (job_id, kind, detail, raised_at) VALUES (?, ?, ?, ?)').run(jobId, kind, detail, now);
    return this.db.prepare('SELECT * FROM job_warnings WHERE id = ?').get(r.lastInsertRowid) as WarningRow;
  }

  /** Clear an open warning; true when one was open. */
  clear(jobId: string, kind: WarningKind, now: number): boolean {
    return this.db.prepare('UPDATE job_warnings SET cleared_at = ? WHERE job_id = ? AND kind = ? AND cleared_at IS NULL').run(now, jobId, kind).changes > 0;
  }

  /** Clear every open warning of a job (it ended). */
  clearJob(jobId: string, now: number): number {
    return this.db.prepare('UPDATE job_warnings SET cleared_at = ? WHERE job_id = ? AND cleared_at IS NULL').run(now, jobId).changes;
  }

  setReaction(id: number, reaction: string): void {
    this.db.prepare('UPDATE job_warnings SET reaction = ? WHERE id = ?').run(reaction, id);
  }

  /** Open warnings of these jobs the lead has not been shown yet. */
  unseenByLead(jobIds: readonly string[]): WarningRow[] {
    if (!jobIds.length) return [];
    return this.db.prepare(`SELECT * FROM job_warnings WHERE cleared_at IS NULL AND lead_seen_at IS NULL AND job_id IN (${jobIds.map(() => '?').join(',')}) ORDER BY id`).all(...jobIds) as WarningRow[];
  }

  markSeen(ids: readonly number[], now: number): void {
    const st = this.db.prepare('UPDATE job_warnings SET lead_seen_at = ? WHERE id = ?');
    for (const id of ids) st.run(now, id);
  }
}
