// Zod input schemas of the workflow tools (design.md "Workflows").
import { z } from 'zod';
import { isValidCheck } from '../services/checks.js';

const Role = z.object({
  provider: z.enum(['claude', 'codex']).default('claude'),
  model: z.string().min(1).max(200).optional(),
}).strict();
export type RoleSpec = z.infer<typeof Role>;

const wfId = z.string().min(1, 'workflow_id is empty: pass an id from start_workflow or list_workflows').max(100);

export const StartWorkflowInput = z.object({
  task: z.string().max(200_000, 'task is longer than 200000 characters: put the material in a file and point at it')
    .refine((t) => t.trim().length > 0, 'task is empty: say what the workflow should build'),
  title: z.string().trim().min(1).max(200).optional(),
  cwd: z.string().min(1).max(4096).optional(),
  implementer: Role.optional(),
  reviewer: Role.optional(),
  max_cycles: z.number().int('max_cycles must be a whole number').min(1, 'max_cycles must be between 1 and 50').max(50, 'max_cycles must be between 1 and 50').default(10),
  worktree: z.boolean().default(true),
  approve_plan: z.boolean().default(false),
  checks: z.array(z.string().refine(isValidCheck, (c) => ({ message: `unknown check ${JSON.stringify(c)}: use "diff_not_empty", "no_error_in_output" or "command:<shell command>"` }))).max(20).default([]),
  template: z.string().min(1).max(200).optional(),
  phase_limits: z.object({
    max_turns: z.number().int().min(1).max(10_000).optional(),
    budget_usd: z.number().positive().max(10_000).optional(),
    timeout_s: z.number().int().min(1).max(7 * 24 * 3600).optional(),
  }).strict().optional(),
}).strict();
export type StartWorkflowInput = z.infer<typeof StartWorkflowInput>;

export const GetWorkflowInput = z.object({ workflow_id: wfId }).strict();
export const ListWorkflowsInput = z.object({
  status: z.enum(['running', 'waiting_approval', 'blocked', 'succeeded', 'cancelled']).optional(),
  limit: z.number().int().min(1).max(100).default(20),
}).strict();
export type ListWorkflowsInput = z.infer<typeof ListWorkflowsInput>;
export const CancelWorkflowInput = z.object({ workflow_id: wfId }).strict();
export const ResumeWorkflowInput = z.object({
  workflow_id: wfId,
  phase: z.enum(['assess', 'review', 'implement']).optional(),
  cycle: z.number().int().min(0).max(50).optional(),
  force: z.boolean().default(false),
}).strict();
export type ResumeWorkflowInput = z.infer<typeof ResumeWorkflowInput>;
