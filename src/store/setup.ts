// What worktree bootstrap does per job (src/git/bootstrap.ts): whether spawn_agent skipped it,
// and the report of its last run. A table of its own, beside the job row.
import type { Db } from './db.js';
import type { BootstrapReport } from '../git/bootstrap.js';

export class SetupStore {
  constructor(private readonly db: Db) {}

  /** Record at spawn that the job's worktree is not bootstrapped. */
  skip(jobId: string, now: number): void {
    this.db.prepare('INSERT INTO job_setup (job_id, skip, updated_at) VALUES (?, 1, ?) ON CONFLICT(job_id) DO UPDATE SET skip = 1, updated_at = excluded.updated_at').run(jobId, now);
  }

  skipped(jobId: string): boolean {
    return (this.db.prepare('SELECT skip FROM job_setup WHERE job_id = ?').get(jobId) as { skip: number } | undefined)?.skip === 1;
  }

  record(jobId: string, report: BootstrapReport, now: number): void {
    this.db.prepare('INSERT INTO job_setup (job_id, report_json, updated_at) VALUES (?, ?, ?) ON CONFLICT(job_id) DO UPDATE SET report_json = excluded.report_json, updated_at = excluded.updated_at')
      .run(jobId, JSON.stringify(report), now);
  }

  report(jobId: string): BootstrapReport | undefined {
    const r = this.db.prepare('SELECT report_json FROM job_setup WHERE job_id = ?').get(jobId) as { report_json: string | null } | undefined;
    return r?.report_json ? JSON.parse(r.report_json) as BootstrapReport : undefined;
  }

  /** Record at spawn what the job's worktree starts from (`job:<id>` or `branch:<name>`). */
  setBase(jobId: string, base: string, now: number): void {
    this.db.prepare('INSERT INTO job_setup (job_id, base, updated_at) VALUES (?, ?, ?) ON CONFLICT(job_id) DO UPDATE SET base = excluded.base, updated_at = excluded.updated_at').run(jobId, base, now);
  }

  base(jobId: string): string | null {
    return (this.db.prepare('SELECT base FROM job_setup WHERE job_id = ?').get(jobId) as { base: string | null } | undefined)?.base ?? null;
  }

  /** What the worktree's branch was made from, once it was. */
  setStack(jobId: string, stack: StackRecord, now: number): void {
    this.db.prepare('INSERT INTO job_setup (job_id, stack_json, updated_at) VALUES (?, ?, ?) ON CONFLICT(job_id) DO UPDATE SET stack_json = excluded.stack_json, updated_at = excluded.updated_at').run(jobId, JSON.stringify(stack), now);
  }

  stack(jobId: string): StackRecord | undefined {
    const r = this.db.prepare('SELECT stack_json FROM job_setup WHERE job_id = ?').get(jobId) as { stack_json: string | null } | undefined;
    return r?.stack_json ? JSON.parse(r.stack_json) as StackRecord : undefined;
  }
}

export interface StackRecord {
  branch: string;
  jobId?: string;
  merged: string[];
}
