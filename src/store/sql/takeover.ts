// Jobs a person has taken over (`overseer attach`) over the Kysely layer: the mark is the job's
// status line, which outlives the hub; since when is the last `attached` event.
import type { Q } from './tx.js';

/** Jobs whose status line is `mark`, with the time of their last `attached` event (null: none). */
export async function markedJobs(q: Q, mark: string): Promise<{ id: string; status: string; attached_at: number | null }[]> {
  return q.selectFrom('jobs').select(['id', 'status'])
    .select((eb) => eb.selectFrom('events').select((e) => e.fn.max('at').as('m')).whereRef('events.job_id', '=', 'jobs.id').where('events.kind', '=', 'attached').as('attached_at'))
    .where('status_message', '=', mark).orderBy('seq').execute() as never;
}
