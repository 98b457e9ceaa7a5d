// Which jobs a person has taken over (overseer attach), since when. Its own object so that
// JobService (which refuses a headless resume meanwhile) and TakeoverService (which attaches and
// detaches, through JobService) are both built with it: no cycle between the two.
import type { Q } from '../store/sql/tx.js';
import { markedJobs } from '../store/sql/takeover.js';
import type { TakenOver } from '../services/jobs.js';
import { isActive, isPending, type JobStatus } from '../domain/job.js';

/** The status line of a job a person has taken over: also the mark a new hub finds it by. */
export const TAKEN_OVER = 'taken over by a person (overseer attach)';

export class Attachments extends Map<string, number> implements TakenOver {
  /** The mark outlives the hub: a job attach marked and no detach cleared is still the person's (read at the hub's start). */
  async load(q: Q, now: () => number): Promise<void> {
    for (const j of await markedJobs(q, TAKEN_OVER)) {
      if (isActive(j.status as JobStatus) || isPending(j.status as JobStatus)) continue;
      if (!this.has(j.id)) this.set(j.id, j.attached_at === null ? now() : Number(j.attached_at));
    }
  }

  isAttached(jobId: string): boolean {
    return this.has(jobId);
  }
}
