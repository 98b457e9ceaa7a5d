// Zod input schemas of the workflow tools (docs/tools.md "Workflows", docs/workflows.md), and the
// workflow they return (WorkflowView).
import { z } from 'zod';
import type { BlockedReason, WorkflowStatus } from '../domain/workflow.js';
import { isValidCheck } from './agents.js';

// A fresh schema per use: two parameters sharing one zod instance are published as a JSON
// "$ref" to the first, which carries no description of its own.
const role = (modelDefault: string) => z.object({
  provider: z.enum(['claude', 'codex']).default('claude').describe('Which CLI runs this role: "claude" or "codex" (default "claude").'),
  model: z.string().min(1).max(200).optional().describe(`Model name passed to the CLI, e.g. "sonnet" (default: ${modelDefault}).`),
}).strict();
export type RoleSpec = z.infer<ReturnType<typeof role>>;

const wfId = z.string().min(1, 'workflow_id is empty: pass an id from start_workflow or list_workflows').max(100);

export const StartWorkflowInput = z.object({
  task: z.string().max(200_000, 'task is longer than 200000 characters: put the material in a file and point at it')
    .refine((t) => t.trim().length > 0, 'task is empty: say what the workflow should build')
    .describe('What the workflow should build, with the requirements; the implementer turns it into a plan of milestones.'),
  title: z.string().trim().min(1).max(200).optional()
    .describe('Short name shown in list_workflows and used in the branch name (default: the first line of task).'),
  cwd: z.string().min(1).max(4096).optional()
    .describe('Directory of the git repository to work on; a relative path resolves against the project (default: the project).'),
  implementer: role('the CLI\'s own, or the template\'s').optional()
    .describe('Who plans (assess) and implements: {provider, model} (default: claude with its default model, or the template\'s).'),
  reviewer: role('the CLI\'s own').optional()
    .describe('Who reviews the plan and each change: {provider, model} (default: claude with its default model).'),
  max_cycles: z.number().int('max_cycles must be a whole number').min(1, 'max_cycles must be between 1 and 50').max(50, 'max_cycles must be between 1 and 50').default(10)
    .describe('Most review-then-implement cycles (one milestone each) before the workflow stops, 1..50 (default 10).'),
  worktree: z.boolean().default(true)
    .describe('true = work in a new git worktree on its own branch overseer/wf-<title>-<id>; false = work in cwd itself (default true).'),
  approve_plan: z.boolean().default(false)
    .describe('true = the lead must approve the plan (a request in list_requests) before implementation starts (default false).'),
  checks: z.array(z.string().refine(isValidCheck, (c) => ({ message: `unknown check ${JSON.stringify(c)}: use "diff_not_empty", "no_error_in_output" or "command:<shell command>"` }))).max(20).default([])
    .describe('Checks the hub runs in the work tree before each review of new changes, results shown to the reviewer: "diff_not_empty", "no_error_in_output" or "command:<shell command>" (default: none, or the template\'s).'),
  template: z.string().min(1).max(200).optional()
    .describe('Name of a project template (.overseer/templates/<name>.md): its implementer model and checks are the defaults and its body is added to every phase\'s prompt as ## Guidelines.'),
  phase_limits: z.object({
    max_turns: z.number().int().min(1).max(10_000).optional().describe('Most model turns per phase agent, 1..10000 (default: no limit).'),
    budget_usd: z.number().positive().max(10_000).optional().describe('Most one phase agent may spend, in US dollars (default: no limit).'),
    timeout_s: z.number().int().min(1).max(7 * 24 * 3600).optional().describe('Wall-clock limit per phase agent, in seconds (default: OVERSEER_DEFAULT_TIMEOUT_S, 3600).'),
  }).strict().optional().describe('Limits for each phase\'s agent (assess, review, implement), not for the whole workflow.'),
  project: z.string().regex(/^[A-Za-z0-9._/-]{1,100}$/, 'project must be 1..100 letters, digits, "-", "_", "." or "/", e.g. "web"').optional()
    .describe('The project every phase agent belongs to (default: none); refused for an archived project.'),
}).strict();
export type StartWorkflowInput = z.infer<typeof StartWorkflowInput>;

export const GetWorkflowInput = z.object({ workflow_id: wfId.describe('Id of the workflow ("w-…"), from start_workflow or list_workflows.') }).strict();
export const ListWorkflowsInput = z.object({
  status: z.enum(['running', 'waiting_approval', 'blocked', 'succeeded', 'cancelled']).optional()
    .describe('Only workflows in this status (default: any status).'),
  limit: z.number().int().min(1).max(100).default(20).describe('Most workflows to return, newest first, 1..100 (default 20).'),
}).strict();
export type ListWorkflowsInput = z.infer<typeof ListWorkflowsInput>;
export const CancelWorkflowInput = z.object({ workflow_id: wfId.describe('Id of the workflow to stop, from start_workflow or list_workflows.') }).strict();
export const ResumeWorkflowInput = z.object({
  workflow_id: wfId.describe('Id of the blocked or cancelled workflow, from start_workflow or list_workflows.'),
  phase: z.enum(['assess', 'review', 'implement']).optional()
    .describe('Phase to restart from: "assess", "review" or "implement" (default: the phase it stopped in); review and implement need a plan.'),
  cycle: z.number().int().min(0).max(50).optional()
    .describe('Cycle to restart at: 0 is assess, review and implement need 1 or more, at most max_cycles (default: the current cycle).'),
  force: z.boolean().default(false)
    .describe('true = restart even a workflow still running or waiting for approval, cancelling its current phase (default false).'),
}).strict();
export type ResumeWorkflowInput = z.infer<typeof ResumeWorkflowInput>;

export interface WorkflowView {
  workflow_id: string;
  title: string;
  status: WorkflowStatus;
  cycle: number;
  phase: string;
  milestones_done: number;
  milestones_total: number;
  blocked_reason: BlockedReason | null;
  jobs: { job_id: string; phase: string | null; cycle: number | null; status: string; failure_class: string | null; provider: string; model: string | null }[];
  branch: string | null;
  worktree: string | null;
  pr_url: string | null;
  git_note: string | null;
  approval_request_id: string | null;
  max_cycles: number;
  created_at: string;
  ended_at: string | null;
  plan: string | null;
  /** The script run that drives it (get_run): its phases are the run's calls. */
  run_id?: string | null;
}
