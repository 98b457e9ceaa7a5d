// Steering another hub's job (docs/store-plan.md §3.5): only the job's owner has its child, so a
// hub that is asked to cancel, stop, freeze or thaw a job it does not run leaves a row in
// job_commands and sends `command` when that commits; the owner runs the same code path as a local
// call and marks the row done. The owner also reads its pending commands at start and after its
// listener reconnects (a notification sent while it did not listen is lost). Marking done is a
// compare-and-set, so a command run twice by its owner (a notification and a re-read racing) is
// recorded once: run commands one at a time per hub; cancel/stop/freeze/thaw of a job already in
// that state are no-ops anyway.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { HubsTable, JobCommandKind, JobCommandsTable, Schema } from './schema.js';
import type { LayerEvents, Notifier } from './notify.js';

export type JobCommandRow = Selectable<JobCommandsTable>;

export const JOB_COMMAND_KINDS: readonly JobCommandKind[] = ['cancel', 'stop', 'freeze', 'thaw'];

export interface JobCommand {
  jobId: string;
  kind: JobCommandKind;
  reason?: string | null | undefined;
  /** Who asked: lead, or a job id. */
  by: string;
  /** ms since the epoch */
  now: number;
}

/** Leave a command for the job's owner and tell it when the transaction commits; returns its id. */
export async function postCommand(trx: Transaction<Schema>, notifier: Pick<Notifier<LayerEvents>, 'send'>, c: JobCommand): Promise<number> {
  if (!JOB_COMMAND_KINDS.includes(c.kind)) throw new Error(`job command kind ${JSON.stringify(c.kind)} is not one of ${JOB_COMMAND_KINDS.join(', ')}`);
  const row = await trx.insertInto('job_commands')
    .values({ job_id: c.jobId, kind: c.kind, reason: c.reason ?? null, by: c.by, created_at: c.now, done_at: null, outcome: null })
    .returning('id').executeTakeFirstOrThrow();
  await notifier.send(trx, 'command', { jobId: c.jobId, commandId: row.id });
  return row.id;
}

/** The commands not yet done for the jobs this hub owns, oldest first. */
export function pendingCommands(db: Kysely<Schema>, hubId: string): Promise<JobCommandRow[]> {
  return db.selectFrom('job_commands').selectAll('job_commands')
    .innerJoin('jobs', 'jobs.id', 'job_commands.job_id')
    .where('jobs.hub_id', '=', hubId).where('job_commands.done_at', 'is', null)
    .orderBy('job_commands.id').execute();
}

/** Mark a command done with what came of it; false when it already was (nothing changed). */
export async function finishCommand(db: Kysely<Schema>, id: number, outcome: string, now: number): Promise<boolean> {
  const r = await db.updateTable('job_commands').set({ done_at: now, outcome })
    .where('id', '=', id).where('done_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Close the pending commands of a hub's jobs (it died: whoever reconciles it); returns how many. */
export async function closeCommandsOf(trx: Transaction<Schema>, hubId: string, outcome: string, now: number): Promise<number> {
  const r = await trx.updateTable('job_commands').set({ done_at: now, outcome })
    .where('done_at', 'is', null)
    .where('job_id', 'in', (eb) => eb.selectFrom('jobs').select('jobs.id').where('jobs.hub_id', '=', hubId))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/** One command as it is now (the poster reads it while it waits for the owner). */
export function getCommand(db: Kysely<Schema>, id: number): Promise<JobCommandRow | undefined> {
  return db.selectFrom('job_commands').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The hub a command waits on, as registered (the poster names it when it does not answer). */
export function hubOf(db: Kysely<Schema>, hubId: string): Promise<Selectable<HubsTable> | undefined> {
  return db.selectFrom('hubs').selectAll().where('id', '=', hubId).executeTakeFirst();
}
