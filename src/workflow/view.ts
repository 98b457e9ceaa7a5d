// What get_workflow / list_workflows show of a workflow. Milestone counts and the plan come
// from the hub's record of check-offs, not from boxes in the plan note.
import type { BlockedReason, WorkflowStatus } from '../domain/workflow.js';
import type { WorkflowRow, WorkflowRows } from './rows.js';
import { isoTime } from '../clock.js';
import type { MilestoneLedger } from './ledger.js';
import { wfKeys } from './state.js';
import type { WorkflowView } from '../contract/workflows.js';

export type { WorkflowView };

export async function workflowView(w: WorkflowRow, ledger: MilestoneLedger, store: WorkflowRows): Promise<WorkflowView> {
  const plan = (await ledger.rendered(w.id)) ?? null;
  const { done, total } = await ledger.progress(w.id);
  const jobs = await store.jobsOf(w.id);
  return {
    workflow_id: w.id, title: w.title, status: w.status as WorkflowStatus, cycle: w.cycle, phase: w.phase,
    milestones_done: done, milestones_total: total,
    blocked_reason: w.blocked_json ? (JSON.parse(w.blocked_json) as BlockedReason) : null,
    jobs: jobs.map((j) => ({ job_id: j.id, phase: j.phase, cycle: j.cycle, status: j.status, failure_class: j.failure_class, provider: j.provider, model: j.model })),
    branch: w.branch, worktree: w.worktree_path, pr_url: w.pr_url, git_note: w.git_note,
    approval_request_id: w.approval_request, max_cycles: w.max_cycles,
    created_at: isoTime(w.created_at), ended_at: w.ended_at ? isoTime(w.ended_at) : null,
    plan: plan && plan.length > 8000 ? `${plan.slice(0, 8000)}… (read the note ${wfKeys(w.id).plan} for all of it)` : plan,
  };
}
