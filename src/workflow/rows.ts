// The workflow engine's rows on the layer (src/store/sql/workflows.ts) with the bus event every
// committed change of status, phase or cycle puts out (the floor, notifications and the script's
// wf.approval wait listen to it).
import type { HubContext } from '../services/context.js';
import type { MilestoneRecord } from '../domain/milestones.js';
import type { Q } from '../store/sql/tx.js';
import {
  checkOffMilestone, claimPhase, deleteWorkflow, getWorkflow, insertWorkflow, listWorkflows, milestonesOf, moveWorkflow, recentWorkflowIds,
  reopenMilestone, scriptRunOf, setPlan, updateWorkflow, workflowJobs, workflowsByStatus,
  type NewWorkflow, type WorkflowFields, type WorkflowJob, type WorkflowRow,
} from '../store/sql/workflows.js';

export type { WorkflowRow };

export class WorkflowRows {
  constructor(private readonly ctx: HubContext) {}

  private get q(): Q {
    return this.ctx.sql.db;
  }

  get(id: string): Promise<WorkflowRow | undefined> {
    return getWorkflow(this.q, id);
  }

  /** `hub_id`: the hub that drives it (its script run's, docs/store-plan.md §3.4). */
  insert(w: NewWorkflow & { hub_id: string }): Promise<void> {
    return insertWorkflow(this.q, w);
  }

  delete(id: string): Promise<void> {
    return deleteWorkflow(this.q, id);
  }

  /** Set fields whatever the workflow's state (counters, its run, its phase). */
  async update(id: string, fields: WorkflowFields): Promise<WorkflowRow | undefined> {
    const w = await updateWorkflow(this.q, id, fields, this.ctx.clock.now());
    if (w && ('status' in fields || 'phase' in fields || 'cycle' in fields)) this.changed(w);
    return w;
  }

  /** Move the status only from one of `from` (src/workflow/state.ts MAY_MOVE): the row after, or undefined when it was in none. */
  async move(id: string, from: readonly string[], fields: WorkflowFields & { status: string }): Promise<WorkflowRow | undefined> {
    const w = await moveWorkflow(this.q, id, from, fields, this.ctx.clock.now());
    if (w) this.changed(w);
    return w;
  }

  /** In the phase job's transaction (`trx`): current_job moves from `expected` to the new job; undefined when another start got there first.
   * The caller puts the change on the bus (changed) once the transaction committed. */
  claimPhase(trx: Q, id: string, expected: string | null, fields: WorkflowFields & { current_job: string }, now: number): Promise<WorkflowRow | undefined> {
    return claimPhase(trx, id, expected, fields, now);
  }

  changed(w: WorkflowRow): void {
    this.ctx.bus.emit('workflow', { workflowId: w.id, status: w.status, phase: w.phase, cycle: w.cycle });
  }

  list(status: string | undefined, limit = 100): Promise<WorkflowRow[]> {
    return listWorkflows(this.q, status, limit);
  }

  byStatus(...statuses: string[]): Promise<WorkflowRow[]> {
    return workflowsByStatus(this.q, statuses);
  }

  recentIds(max = 5): Promise<string[]> {
    return recentWorkflowIds(this.q, max);
  }

  jobsOf(id: string): Promise<WorkflowJob[]> {
    return workflowJobs(this.q, id);
  }

  milestones(id: string): Promise<MilestoneRecord[]> {
    return milestonesOf(this.q, id);
  }

  setPlan(id: string, plan: string, record: readonly MilestoneRecord[]): Promise<void> {
    return setPlan(this.q, id, plan, record, this.ctx.clock.now());
  }

  checkOff(id: string, idx: number, text: string, by: { cycle: number; job: string }): Promise<boolean> {
    return checkOffMilestone(this.q, id, idx, text, by, this.ctx.clock.now());
  }

  reopen(id: string, idx: number, text: string): Promise<boolean> {
    return reopenMilestone(this.q, id, idx, text);
  }

  runOf(runId: string): Promise<{ rules_json: string; note: string | null } | undefined> {
    return scriptRunOf(this.q, runId);
  }
}
