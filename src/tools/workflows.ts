// Workflow tools of the contract (docs/tools.md "Workflows", docs/workflows.md): lead only.
import type { WorkflowService } from '../workflow/service.js';
import { defineTool, type ToolDef } from './registry.js';
import { CancelWorkflowInput, GetWorkflowInput, ListWorkflowsInput, ResumeWorkflowInput, StartWorkflowInput } from '../contract/workflows.js';

export function workflowTools(w: WorkflowService): ToolDef[] {
  return [
    defineTool({
      name: 'start_workflow', roles: ['lead'], title: 'Start a workflow',
      description: 'Drive a task to a reviewed branch autonomously: assess (plan with "- [ ]" milestones and a contract) → review → implement, one milestone per cycle, until every milestone is checked or max_cycles runs out. Runs in its own worktree and branch; returns at once.',
      input: StartWorkflowInput, annotations: { openWorldHint: true },
      handler: (i, c) => w.start(i, c),
    }),
    defineTool({
      name: 'get_workflow', roles: ['lead'], title: 'Get a workflow',
      description: 'status, cycle, phase, milestones_done/total, blocked_reason, jobs, branch, pr_url and the plan of a workflow, and run_id: the script run that drives it (get_run lists its phases).',
      input: GetWorkflowInput, annotations: { readOnlyHint: true },
      handler: (i) => w.get(i.workflow_id),
    }),
    defineTool({
      name: 'list_workflows', roles: ['lead'], title: 'List workflows',
      description: 'Workflows, newest first, optionally by status.',
      input: ListWorkflowsInput, annotations: { readOnlyHint: true },
      handler: (i) => w.list(i),
    }),
    defineTool({
      name: 'cancel_workflow', roles: ['lead'], title: 'Cancel a workflow',
      description: 'Stop a workflow: cancels its running phase and removes its worktree (the branch stays).',
      input: CancelWorkflowInput, annotations: { destructiveHint: true, idempotentHint: true },
      handler: (i, c) => w.cancel(i.workflow_id, c),
    }),
    defineTool({
      name: 'resume_workflow', roles: ['lead'], title: 'Resume a workflow',
      description: 'Continue a blocked or cancelled workflow, optionally from a given phase and cycle; force restarts one still marked running.',
      input: ResumeWorkflowInput,
      handler: (i, c) => w.resume(i, c),
    }),
  ];
}
