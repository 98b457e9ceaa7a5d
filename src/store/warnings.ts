// Health warnings of jobs (src/floor/health.ts decides them, src/floor/monitor.ts raises and
// clears them on the asynchronous layer, src/store/sql/warnings.ts). One open row per (job, kind):
// raising an open warning again is a no-op. The reads below are JobService's, in its synchronous
// agent views and wait_for_agents' check and ack (mixed period: until step 6 of
// docs/store-plan.md moves them).
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
