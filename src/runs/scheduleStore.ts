// Rows of the `schedules` table (migration 18) and the schedule columns of jobs (not_before,
// schedule_id, occurrence). Synchronous better-sqlite3 statements; the service groups writes
// that must land together with `tx`. Also used read-only by the CLI (no hub running).
import type Database from 'better-sqlite3';
import type { JobRow } from '../store/jobs.js';
import type { ScheduleStatus } from '../contract/schedules.js';

export type { ScheduleStatus };

export interface ScheduleRow {
  id: string;
  seq: number;
  title: string;
  created_by: string;
  kind: 'once' | 'every' | 'cron';
  every_s: number | null;
  cron: string | null;
  first_at: number;
  until_at: number | null;
  max_runs: number | null;
  spec_json: string;
  status: ScheduleStatus;
  stop_reason: string | null;
  runs: number;
  current_job: string | null;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

/** A schedule with its latest occurrence's state (null when that job is gone). */
export interface ScheduleWithCurrent extends ScheduleRow {
  current_status: string | null;
  current_not_before: number | null;
}

export type NewSchedule = Omit<ScheduleRow, 'seq' | 'status' | 'stop_reason' | 'runs' | 'current_job' | 'created_at' | 'updated_at' | 'ended_at'>;

const WITH_CURRENT = `SELECT s.*, j.status AS current_status, j.not_before AS current_not_before
  FROM schedules s LEFT JOIN jobs j ON j.id = s.current_job`;

export class ScheduleStore {
  constructor(private readonly db: Database.Database) {}

  insert(s: NewSchedule, now: number): void {
    const seq = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS s FROM schedules').get() as { s: number }).s;
    this.db.prepare(`INSERT INTO schedules (id, seq, title, created_by, kind, every_s, cron, first_at, until_at, max_runs, spec_json, status, runs, created_at, updated_at)
      VALUES (@id, @seq, @title, @created_by, @kind, @every_s, @cron, @first_at, @until_at, @max_runs, @spec_json, 'active', 0, @now, @now)`).run({ ...s, seq, now });
  }

  get(id: string): ScheduleWithCurrent | undefined {
    return this.db.prepare(`${WITH_CURRENT} WHERE s.id = ?`).get(id) as ScheduleWithCurrent | undefined;
  }

  /** Newest first; `status` filters. */
  list(f: { status?: ScheduleStatus; limit: number }): ScheduleWithCurrent[] {
    return f.status
      ? this.db.prepare(`${WITH_CURRENT} WHERE s.status = ? ORDER BY s.seq DESC LIMIT ?`).all(f.status, f.limit) as ScheduleWithCurrent[]
      : this.db.prepare(`${WITH_CURRENT} ORDER BY s.status <> 'active', s.seq DESC LIMIT ?`).all(f.limit) as ScheduleWithCurrent[];
  }

  active(): ScheduleWithCurrent[] {
    return this.db.prepare(`${WITH_CURRENT} WHERE s.status = 'active' ORDER BY s.seq`).all() as ScheduleWithCurrent[];
  }

  /** Record the series' newest occurrence (and the count of occurrences). */
  setCurrent(id: string, jobId: string, runs: number, now: number): void {
    this.db.prepare('UPDATE schedules SET current_job = ?, runs = ?, updated_at = ? WHERE id = ?').run(jobId, runs, now, id);
  }

  /** End the series: done (cap, until, a one-shot ran), stopped (an occurrence failed) or cancelled. */
  end(id: string, status: Exclude<ScheduleStatus, 'active'>, reason: string, now: number): void {
    this.db.prepare("UPDATE schedules SET status = ?, stop_reason = ?, ended_at = ?, updated_at = ? WHERE id = ? AND status = 'active'").run(status, reason, now, now, id);
  }

  /** Tag a freshly inserted job as occurrence `n` of a schedule. */
  tagJob(jobId: string, scheduleId: string, n: number): void {
    this.db.prepare('UPDATE jobs SET schedule_id = ?, occurrence = ? WHERE id = ?').run(scheduleId, n, jobId);
  }

  /** Waiting jobs whose time has come (their dependencies may still hold them). */
  dueWaiting(now: number): JobRow[] {
    return this.db.prepare("SELECT * FROM jobs WHERE status = 'waiting' AND not_before IS NOT NULL AND not_before <= ? ORDER BY not_before, seq").all(now) as JobRow[];
  }

  /** The earliest time a waiting job becomes due after `now`, if any. */
  nextDue(now: number): number | undefined {
    const r = this.db.prepare("SELECT MIN(not_before) AS t FROM jobs WHERE status = 'waiting' AND not_before > ?").get(now) as { t: number | null };
    return r.t ?? undefined;
  }

  /** The occurrences of a schedule, oldest first. */
  occurrences(id: string, limit = 50): Pick<JobRow, 'id' | 'status' | 'occurrence' | 'not_before' | 'started_at' | 'ended_at' | 'failure_class'>[] {
    return this.db.prepare('SELECT id, status, occurrence, not_before, started_at, ended_at, failure_class FROM jobs WHERE schedule_id = ? ORDER BY occurrence DESC LIMIT ?').all(id, limit).reverse() as never;
  }

  /** Ids close to an unknown one, for "did you mean" errors. */
  nearbyIds(max = 5): string[] {
    return (this.db.prepare('SELECT id FROM schedules ORDER BY seq DESC LIMIT ?').all(max) as { id: string }[]).map((r) => r.id);
  }
}
