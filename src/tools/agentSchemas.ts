// Zod input schemas of the agent tools (tool contract, design.md "Agents"). One schema per
// tool, used for registration and for the types the services take. Messages name the field,
// the bad value and the fix.
import { z } from 'zod';
import { isValidCheck } from '../services/checks.js';

export const MAX_PROMPT_CHARS = 500_000;
const jobId = z.string().min(1, 'job_id is empty: pass an id returned by spawn_agent or list_agents').max(100);

export const SpawnInput = z.object({
  prompt: z.string()
    .max(MAX_PROMPT_CHARS, `prompt is longer than ${MAX_PROMPT_CHARS} characters: put large material in a file in the work tree and point the agent at it`)
    .refine((s) => s.trim().length > 0, 'prompt is empty: say what the agent should do'),
  title: z.string().trim().min(1).max(200).optional(),
  provider: z.enum(['claude', 'codex']).optional().describe('default claude (or the template\'s)'),
  model: z.string().min(1).max(200).optional(),
  cwd: z.string().min(1).max(4096).optional().describe('work directory (default: the project); relative paths resolve against the project (or, for an agent, its own work dir)'),
  worktree: z.boolean().optional().describe('run in a new git worktree on its own branch (default false, or the template\'s)'),
  branch: z.string().regex(/^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._\/-]+(?<!\.lock)(?<![\/.])$/, 'branch must be a valid git branch name such as "feature/login-form"').max(200).optional(),
  depends_on: z.array(jobId).max(100, 'depends_on takes at most 100 job ids').default([]),
  priority: z.number().int('priority must be a whole number').min(-10, 'priority must be between -10 and 10').max(10, 'priority must be between -10 and 10').default(0),
  max_turns: z.number().int().min(1, 'max_turns must be at least 1').max(10_000, 'max_turns must be at most 10000').optional(),
  budget_usd: z.number().positive('budget_usd must be more than 0').max(10_000, 'budget_usd must be at most 10000').optional(),
  timeout_s: z.number().int().min(1, 'timeout_s must be at least 1').max(7 * 24 * 3600, 'timeout_s must be at most 604800 (a week)').optional(),
  context: z.record(z.string().max(100), z.string().max(200_000)).optional().describe('named strings added to the prompt under ## Context'),
  template: z.string().min(1).max(200).optional(),
  checks: z.array(z.string().refine(isValidCheck, (c) => ({ message: `unknown check ${JSON.stringify(c)}: use "diff_not_empty", "no_error_in_output" or "command:<shell command>"` }))).max(20).optional(),
  retry: z.enum(['none', 'same', 'analyze']).optional(),
  labels: z.array(z.string().min(1).max(100)).max(50).default([]),
}).strict();
export type SpawnInput = z.infer<typeof SpawnInput>;

export const WaitInput = z.object({
  job_ids: z.array(jobId).min(1, 'job_ids is empty: name at least one job to wait for').max(500),
  mode: z.enum(['all', 'any']).default('all'),
  timeout_s: z.number().min(0, 'timeout_s must be 0 or more').max(24 * 3600, 'timeout_s must be at most 86400').default(600),
}).strict();
export type WaitInput = z.infer<typeof WaitInput>;

/** How many of the most recent events get_agent returns when asked (each entry capped). */
export const GET_AGENT_EVENTS = 50;

export const GetAgentInput = z.object({
  job_id: jobId,
  events: z.boolean().optional().describe(`also return events[]: the ${GET_AGENT_EVENTS} most recent things the hub recorded for the job (permission decisions and the rule that decided, lock denials and violations, retries, messages, reconciles)`),
}).strict();

export const ListAgentsInput = z.object({
  status: z.enum(['queued', 'waiting', 'running', 'frozen', 'needs_input', 'succeeded', 'failed', 'cancelled', 'interrupted']).optional(),
  label: z.string().min(1).max(100).optional(),
  parent_id: z.string().min(1).max(100).optional().describe('job id, or "lead" for top-level jobs'),
  limit: z.number().int().min(1).max(200, 'limit must be at most 200: page with cursor').default(50),
  cursor: z.string().max(100).optional().describe('next_cursor from the previous page'),
}).strict();
export type ListAgentsInput = z.infer<typeof ListAgentsInput>;

export const ReadOutputInput = z.object({
  job_id: jobId,
  tail: z.number().int().min(1).max(1000, 'tail must be at most 1000 events').default(50),
  format: z.enum(['text', 'json']).default('text'),
  attempt: z.number().int().min(1).optional().describe('attempt number (default: the latest)'),
}).strict();
export type ReadOutputInput = z.infer<typeof ReadOutputInput>;

export const CancelInput = z.object({
  job_id: jobId,
  reason: z.string().max(2000).optional(),
  cascade: z.boolean().default(true),
}).strict();
export type CancelInput = z.infer<typeof CancelInput>;

export const PauseInput = z.object({ job_id: jobId, mode: z.enum(['freeze', 'stop']).default('freeze') }).strict();
export type PauseInput = z.infer<typeof PauseInput>;

export const ResumeInput = z.object({ job_id: jobId, message: z.string().min(1).max(MAX_PROMPT_CHARS).optional() }).strict();
export type ResumeInput = z.infer<typeof ResumeInput>;

export const MessageAgentInput = z.object({ job_id: jobId, text: z.string().min(1, 'text is empty').max(100_000, 'text must be at most 100000 characters') }).strict();
export type MessageAgentInput = z.infer<typeof MessageAgentInput>;

export const ReportStatusInput = z.object({
  message: z.string().min(1, 'message is empty').max(2000, 'message must be at most 2000 characters'),
  progress: z.number().min(0, 'progress is a fraction between 0 and 1').max(1, 'progress is a fraction between 0 and 1').optional(),
}).strict();
export type ReportStatusInput = z.infer<typeof ReportStatusInput>;

export const FinishInput = z.object({
  result: z.string().min(1, 'result is empty: say what you did').max(100_000),
  outcome: z.enum(['success', 'failure']).default('success'),
}).strict();
export type FinishInput = z.infer<typeof FinishInput>;
