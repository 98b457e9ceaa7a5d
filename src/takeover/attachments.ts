// Which jobs a person has taken over (overseer attach), since when. Its own object so that
// JobService (which refuses a headless resume meanwhile) and TakeoverService (which attaches and
// detaches, through JobService) are both built with it: no cycle between the two.
import type { Db } from '../store/db.js';
import type { TakenOver } from '../services/jobs.js';
import { isActive, isPending, type JobStatus } from '../domain/job.js';

/** The status line of a job a person has taken over: also the mark a new hub finds it by. */
export const TAKEN_OVER = 'taken over by a person (overseer attach)';

export class Attachments extends Map<string, number> implements TakenOver {
  /** The mark outlives the hub: a job attach marked and no detach cleared is still the person's. */
  static load(db: Db, now: () => number): Attachments {
    const a = new Attachments();
    for (const j of db.prepare('SELECT id, status FROM jobs WHERE status_message = ?').all(TAKEN_OVER) as { id: string; status: JobStatus }[]) {
      if (isActive(j.status) || isPending(j.status)) continue;
      const at = (db.prepare(`SELECT MAX(at) FROM events WHERE job_id = ? AND kind = 'attached'`).pluck().get(j.id) as number | null) ?? now();
      a.set(j.id, at);
    }
    return a;
  }

  isAttached(jobId: string): boolean {
    return this.has(jobId);
  }
}
