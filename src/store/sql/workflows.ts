// Workflow rows on the layer (docs/store-plan.md step 7): one row per implement/review workflow
// (its counters in state_json), its plan text and the hub's record of which milestone an
// implement phase completed (workflow_milestones; the plan note is only a rendering of them).
// What the store decides is one conditional statement each, exact on both databases without a
// transaction (docs/decisions.md "Workflows on the layer"):
//   - a phase is started once: `claimPhase` moves current_job only from the job the caller saw;
//   - a check-off is applied once: `checkOffMilestone` sets an open milestone of that text done;
//   - a status moves only from the states it may: `moveWorkflow` names them in its WHERE.
import { sql } from 'kysely';
import type { MilestoneRecord } from '../../domain/milestones.js';
import { batch, type Q } from './tx.js';
import type { WorkflowRow } from '../workflows.js';

export type { WorkflowRow };

export type NewWorkflow = Omit<WorkflowRow, 'seq' | 'updated_at'>;
/** What a change may set (updated_at is the store's). */
export type WorkflowFields = Partial<Omit<WorkflowRow, 'id' | 'seq' | 'created_at' | 'updated_at'>>;

export interface WorkflowJob { id: string; phase: string | null; cycle: number | null; status: string; failure_class: string | null; model: string | null; provider: string }

/** A UNIQUE constraint refused the row: PostgreSQL's SQLSTATE, better-sqlite3's code. */
const isUniqueViolation = (err: unknown): boolean => ['23505', 'SQLITE_CONSTRAINT_UNIQUE'].includes((err as { code?: string }).code ?? '');

/** A new workflow, numbered after the last: two starts at once (two connections, or two calls of one hub
 * interleaved between the read and the insert) may take one number; `seq` is UNIQUE, the loser numbers again. */
export async function insertWorkflow(q: Q, w: NewWorkflow & { hub_id?: string | null }): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const next = await q.selectFrom('workflows').select(sql<number>`COALESCE(MAX(seq), 0) + 1`.as('s')).executeTakeFirstOrThrow();
    try {
      await q.insertInto('workflows').values({ ...w, project: w.project ?? null, seq: Number(next.s), updated_at: w.created_at }).execute();
      return;
    } catch (err) {
      if (!isUniqueViolation(err) || attempt >= 5) throw err;
    }
  }
}

export async function getWorkflow(q: Q, id: string): Promise<WorkflowRow | undefined> {
  return q.selectFrom('workflows').selectAll().where('id', '=', id).executeTakeFirst() as Promise<WorkflowRow | undefined>;
}

/** Set fields of a workflow whatever its state (counters, the run it is driven by): the row after, or undefined (no such workflow). */
export async function updateWorkflow(q: Q, id: string, fields: WorkflowFields, now: number): Promise<WorkflowRow | undefined> {
  return q.updateTable('workflows').set({ ...nulls(fields), updated_at: now }).where('id', '=', id).returningAll().executeTakeFirst() as Promise<WorkflowRow | undefined>;
}

/** Move a workflow's status, only from one of `from`: the row after, or undefined (it was in
 * none of them: another change got there first, and this one changes nothing). */
export async function moveWorkflow(q: Q, id: string, from: readonly string[], fields: WorkflowFields & { status: string }, now: number): Promise<WorkflowRow | undefined> {
  if (!from.length) return undefined;
  return q.updateTable('workflows').set({ ...nulls(fields), updated_at: now }).where('id', '=', id).where('status', 'in', [...from])
    .returningAll().executeTakeFirst() as Promise<WorkflowRow | undefined>;
}

/** A phase starts: current_job moves to the new job only from `expected`, the job the caller
 * saw as current, and only while the workflow runs — of two starts of one step at once, one
 * gets the row and the other undefined (its job's transaction is rolled back: one job). */
export async function claimPhase(q: Q, id: string, expected: string | null, fields: WorkflowFields & { current_job: string }, now: number): Promise<WorkflowRow | undefined> {
  let u = q.updateTable('workflows').set({ ...nulls(fields), updated_at: now }).where('id', '=', id).where('status', '=', 'running');
  u = expected === null ? u.where('current_job', 'is', null) : u.where('current_job', '=', expected);
  return u.returningAll().executeTakeFirst() as Promise<WorkflowRow | undefined>;
}

export async function listWorkflows(q: Q, status: string | undefined, limit: number): Promise<WorkflowRow[]> {
  let s = q.selectFrom('workflows').selectAll();
  if (status) s = s.where('status', '=', status);
  return s.orderBy('seq', 'desc').limit(limit).execute() as Promise<WorkflowRow[]>;
}

export async function workflowsByStatus(q: Q, statuses: readonly string[]): Promise<WorkflowRow[]> {
  return q.selectFrom('workflows').selectAll().where('status', 'in', [...statuses]).orderBy('seq').execute() as Promise<WorkflowRow[]>;
}

export async function recentWorkflowIds(q: Q, max = 5): Promise<string[]> {
  return (await q.selectFrom('workflows').select('id').orderBy('seq', 'desc').limit(max).execute()).map((r) => r.id);
}

/** A workflow start that failed: nothing of it stays (its milestones go with it). */
export async function deleteWorkflow(q: Q, id: string): Promise<void> {
  await batch(q, [q.deleteFrom('workflow_milestones').where('workflow_id', '=', id), q.deleteFrom('workflows').where('id', '=', id)]);
}

/** The phase jobs of a workflow, oldest first. */
export async function workflowJobs(q: Q, id: string): Promise<WorkflowJob[]> {
  return q.selectFrom('jobs').select(['id', 'phase', 'cycle', 'status', 'failure_class', 'model', 'provider']).where('workflow_id', '=', id).orderBy('seq').execute();
}

export async function milestonesOf(q: Q, id: string): Promise<MilestoneRecord[]> {
  const rows = await q.selectFrom('workflow_milestones').select(['text', 'done_at', 'done_cycle', 'done_job']).where('workflow_id', '=', id).orderBy('idx').execute();
  return rows.map((r) => ({ text: r.text, done: r.done_at !== null, cycle: r.done_cycle, job: r.done_job }));
}

/** Replace the plan text and the whole milestone record, together. */
export async function setPlan(q: Q, id: string, plan: string, record: readonly MilestoneRecord[], now: number): Promise<void> {
  await batch(q, [
    q.updateTable('workflows').set({ plan_text: plan, updated_at: now }).where('id', '=', id),
    q.deleteFrom('workflow_milestones').where('workflow_id', '=', id),
    ...record.map((m, idx) => q.insertInto('workflow_milestones').values({
      workflow_id: id, idx, text: m.text, done_at: m.done ? now : null, done_cycle: m.done ? m.cycle : null, done_job: m.done ? m.job : null,
    })),
  ]);
}

/** Check off milestone `idx`, only while it is open and still has this text (the plan was not
 * replaced meanwhile): true when this call checked it off, false when it was not open. */
export async function checkOffMilestone(q: Q, id: string, idx: number, text: string, by: { cycle: number; job: string }, now: number): Promise<boolean> {
  const r = await q.updateTable('workflow_milestones').set({ done_at: now, done_cycle: by.cycle, done_job: by.job })
    .where('workflow_id', '=', id).where('idx', '=', idx).where('text', '=', text).where('done_at', 'is', null).returning('idx').executeTakeFirst();
  return r !== undefined;
}

/** Open milestone `idx` again, only while it is done and still has this text: true when this call opened it. */
export async function reopenMilestone(q: Q, id: string, idx: number, text: string): Promise<boolean> {
  const r = await q.updateTable('workflow_milestones').set({ done_at: null, done_cycle: null, done_job: null })
    .where('workflow_id', '=', id).where('idx', '=', idx).where('text', '=', text).where('done_at', 'is not', null).returning('idx').executeTakeFirst();
  return r !== undefined;
}

/** The script run a workflow may be driven by: its rules (which bundled script, with which workflow) and its end note. */
export async function scriptRunOf(q: Q, runId: string): Promise<{ rules_json: string; note: string | null } | undefined> {
  return q.selectFrom('runs').select(['rules_json', 'note']).where('id', '=', runId).where('kind', '=', 'script').executeTakeFirst();
}

/** undefined → null, as a column takes it. */
function nulls(fields: WorkflowFields): WorkflowFields {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v === undefined ? null : v])) as WorkflowFields;
}
