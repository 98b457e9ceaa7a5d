// Zod input schemas of the agent tools (tool contract, docs/tools.md "Agents"). One schema per
// tool, used for registration and for the types the services take (what they return for a job is
// agentSummary.ts; a broadcast's answer is BroadcastResult below). Messages name the field,
// the bad value and the fix.
import { z } from 'zod';
import { BROADCAST_STATUSES } from './projectNames.js';

/** The checks a spawn may name; anything else is refused at spawn time (run by src/services/checks.ts). */
export function isValidCheck(c: string): boolean {
  return c === 'diff_not_empty' || c === 'no_error_in_output' || (c.startsWith('command:') && c.slice(8).trim().length > 0);
}

/** The shortest repeat interval: an agent run takes longer than this anyway, and a loop of spawns is a mistake. */
export const MIN_EVERY_S = 60;
/** The longest repeat interval (a year); a rarer job is better written as a cron expression or an `at`. */
export const MAX_EVERY_S = 366 * 24 * 3600;
/** The most occurrences one series may have. */
export const MAX_RUNS = 10_000;

const PROJECT_RE = /^[A-Za-z0-9._/-]{1,100}$/;
const project = () => z.string().regex(PROJECT_RE, 'project must be 1..100 letters, digits, "-", "_", "." or "/", e.g. "web" or "acme/api"');

export const MAX_PROMPT_CHARS = 500_000;
const jobId = z.string().min(1, 'job_id is empty: pass an id returned by spawn_agent or list_agents').max(100);

export const SpawnInput = z.object({
  prompt: z.string()
    .max(MAX_PROMPT_CHARS, `prompt is longer than ${MAX_PROMPT_CHARS} characters: put large material in a file in the work tree and point the agent at it`)
    .refine((s) => s.trim().length > 0, 'prompt is empty: say what the agent should do')
    .describe('The task for the agent, as its first user message: say what to do, where, and what counts as done.'),
  title: z.string().trim().min(1).max(200).optional().describe('Short name shown in list_agents and status (default: the first line of the prompt).'),
  provider: z.enum(['claude', 'codex']).optional().describe('Which CLI runs the agent: "claude" or "codex" (default "claude", or the template\'s).'),
  model: z.string().min(1).max(200).optional().describe('Model name passed to the CLI, e.g. "sonnet", or "auto": a short run on a small model picks a small/medium/large tier from the task just before the agent starts (get_agent shows model_choice with the tier and reason) (default: the configured defaultModel, else the CLI\'s own default, or the template\'s).'),
  cwd: z.string().min(1).max(4096).optional().describe('Directory the agent works in (default: the project; for an agent, your own work tree). A relative path resolves against the project, or for an agent against your own work tree, and a sub-agent must stay inside it.'),
  worktree: z.boolean().optional().describe('true = run in a new git worktree on its own branch, so its edits do not touch cwd; its work is committed to that branch (default false, or the template\'s).'),
  branch: z.string().regex(/^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._\/-]+(?<!\.lock)(?<![\/.])$/, 'branch must be a valid git branch name such as "feature/login-form"').max(200).optional()
    .describe('Name of the new branch for worktree: true, e.g. "feature/login-form"; must not exist yet (default: overseer/<title>-<id>). Only with worktree: true.'),
  base: z.string().min(1).max(200).optional()
    .describe('Only with worktree: true. What the new branch starts from: a job id (that job\'s branch; the job becomes a dependency, so this one starts after it succeeds) or an existing branch name (default: the branch of its one worktree dependency, several merged together, else HEAD; docs/worktrees.md).'),
  bootstrap: z.boolean().optional()
    .describe('Only with worktree: true. false = skip the worktree bootstrap (copying the configured untracked files such as .env and running the setup commands, or the install its lockfile implies; docs/worktrees.md). Default true.'),
  depends_on: z.array(jobId).max(100, 'depends_on takes at most 100 job ids').default([])
    .describe('Job ids from spawn_agent: start only after all of these jobs succeed; if one fails or is cancelled, this job fails without running (default: none).'),
  priority: z.number().int('priority must be a whole number').min(-10, 'priority must be between -10 and 10').max(10, 'priority must be between -10 and 10').default(0)
    .describe('Queue order when more agents are asked for than may run at once: -10..10, higher starts first, equal ones in spawn order (default 0).'),
  max_turns: z.number().int().min(1, 'max_turns must be at least 1').max(10_000, 'max_turns must be at most 10000').optional()
    .describe('Most model turns the agent may take before it is stopped as failed, 1..10000 (default: no limit, or the template\'s).'),
  budget_usd: z.number().positive('budget_usd must be more than 0').max(10_000, 'budget_usd must be at most 10000').optional()
    .describe('Most the agent may spend, in US dollars (e.g. 0.5); it is stopped as failed when it goes over (default: no limit, or the template\'s).'),
  timeout_s: z.number().int().min(1, 'timeout_s must be at least 1').max(7 * 24 * 3600, 'timeout_s must be at most 604800 (a week)').optional()
    .describe('Wall-clock limit per attempt, in seconds (1..604800); the agent is stopped as failed after it (default: OVERSEER_DEFAULT_TIMEOUT_S, 3600).'),
  context: z.record(z.string().max(100), z.string().max(200_000).describe('The text added under its name.')).optional()
    .describe('Named pieces of text added to the prompt under ## Context, e.g. {"api": "<the schema>"} (default: none).'),
  template: z.string().min(1).max(200).optional()
    .describe('Name of a project template (.overseer/templates/<name>.md) whose settings fill in the parameters you leave out and whose body is added as ## Guidelines.'),
  checks: z.array(z.string().refine(isValidCheck, (c) => ({ message: `unknown check ${JSON.stringify(c)}: use "diff_not_empty", "no_error_in_output" or "command:<shell command>"` }))).max(20).optional()
    .describe('Checks that decide success after the agent finishes: "diff_not_empty", "no_error_in_output" or "command:<shell command>" (must exit 0); a failed check fails the job (default: none, or the template\'s).'),
  retry: z.enum(['none', 'same', 'analyze']).optional()
    .describe('On failure: "none" = do not retry, "same" = run the same task again, "analyze" = diagnose the failure first and retry with that analysis; at most OVERSEER_MAX_ATTEMPTS attempts in all (default "none").'),
  labels: z.array(z.string().min(1).max(100)).max(50).default([])
    .describe('Tags to find the job by later with list_agents label, and its placement when worker hosts are registered (overseer hosts): a worker runs the job only if it has every label without a ":" (e.g. "gpu"); a label with a ":" (e.g. "team:api") is only a tag. With no worker registered, every label is only a tag (default: none).'),
  host: z.string().min(1).max(200).regex(/^[A-Za-z0-9._-]+$/, 'host must be a worker name as overseer hosts lists it (letters, digits, ".", "_", "-")').optional()
    .describe('Run the agent on this worker host only (a name from overseer hosts); refused at spawn when no such worker is registered (default: any worker with room, or the hub\'s machine when none is registered).'),
  // Schedules (docs/schedules.md, src/runs/schedules.ts); the lead's only. Cross-field rules are checked by the service.
  at: z.string().min(1).max(64).optional()
    .describe('Run at this time, not before: an ISO 8601 time with a zone, e.g. "2030-01-31T09:00:00Z"; the job is `waiting` until then. With every_s or cron it is the first run. Lead only (default: now).'),
  every_s: z.number().int('every_s must be a whole number of seconds').min(MIN_EVERY_S, `every_s must be at least ${MIN_EVERY_S} (seconds)`).max(MAX_EVERY_S, `every_s must be at most ${MAX_EVERY_S} (a year); use cron for rarer runs`).optional()
    .describe(`Repeat every N seconds (at least ${MIN_EVERY_S}): after each successful run the next one is queued as a new job of the same schedule; a failed or cancelled run stops the series. Not with cron. Lead only.`),
  cron: z.string().min(1).max(200).optional()
    .describe('Repeat on a 5-field cron expression (minute hour day-of-month month day-of-week, in the hub\'s local time), e.g. "0 9 * * 1-5" = 09:00 on weekdays; after each successful run the next one is queued. Not with every_s. Lead only.'),
  max_runs: z.number().int('max_runs must be a whole number').min(1, 'max_runs must be at least 1').max(MAX_RUNS, `max_runs must be at most ${MAX_RUNS}`).optional()
    .describe('With every_s or cron: how many runs in all, the first included (default: no cap).'),
  until: z.string().min(1).max(64).optional()
    .describe('With every_s or cron: no run starts after this ISO 8601 time with a zone, e.g. "2030-02-01T00:00:00Z" (default: no end).'),
  project: project().optional()
    .describe('The project the agent belongs to, e.g. "web" (letters, digits, -_./; default: none). Filters list_agents, status and usage by it. A sub-agent always belongs to its parent\'s project. Refused for an archived project.'),
  role: z.string().min(1).max(64).optional()
    .describe('What the agent may do, enforced by the hub: "implementer" (default: reads and writes as the policy allows), "reviewer" (reads and runs commands that change nothing; every write refused and its work tree mounted read-only), "planner" (Claude Code\'s plan mode, Codex\'s read-only sandbox; writes nothing), or a role defined in .overseer/roles/<name>.md (allowed/denied tools, the paths writes may touch, model, provider; its body is added to the first prompt). An agent may give its sub-agents only its own role or a narrower one.'),
}).strict();
export type SpawnInput = z.infer<typeof SpawnInput>;

export const WaitInput = z.object({
  job_ids: z.array(jobId).min(1, 'job_ids is empty: name at least one job to wait for').max(500)
    .describe('Job ids from spawn_agent (or list_agents) to wait for; an agent may wait only on its own descendants.'),
  mode: z.enum(['all', 'any']).default('all')
    .describe('"all" = return when every job has ended, "any" = return when the first one ends (default "all").'),
  timeout_s: z.number().min(0, 'timeout_s must be 0 or more').max(24 * 3600, 'timeout_s must be at most 86400').default(600)
    .describe('Longest to wait, in seconds (0 = just look); the result says timed_out and the jobs keep running (default 600).'),
}).strict();
export type WaitInput = z.infer<typeof WaitInput>;

/** How many of the most recent events get_agent returns when asked (each entry capped). */
export const GET_AGENT_EVENTS = 50;

export const GetAgentInput = z.object({
  job_id: jobId.describe('Id of the job to describe, as returned by spawn_agent or list_agents.'),
  events: z.boolean().optional().describe(`true = also return events[]: the ${GET_AGENT_EVENTS} most recent things the hub recorded for the job (permission decisions and the rule that decided, lock denials and violations, retries, messages, reconciles). Default false.`),
}).strict();

export const ListAgentsInput = z.object({
  status: z.enum(['queued', 'waiting', 'running', 'frozen', 'needs_input', 'succeeded', 'failed', 'cancelled', 'interrupted']).optional()
    .describe('Only jobs in this status (default: any status).'),
  label: z.string().min(1).max(100).optional().describe('Only jobs spawned with this label in labels (default: any).'),
  parent_id: z.string().min(1).max(100).optional().describe('Only the direct children of this job id, or "lead" for the jobs the lead spawned (default: any parent).'),
  project: project().optional().describe('Only jobs of this project (default: any; jobs of archived projects are left out unless their project is named here).'),
  limit: z.number().int().min(1).max(200, 'limit must be at most 200: page with cursor').default(50)
    .describe('Most jobs in one page, 1..200 (default 50); more are reached with cursor.'),
  cursor: z.string().max(100).optional().describe('The next_cursor of the previous page, to get the next one (default: the first page).'),
}).strict();
export type ListAgentsInput = z.infer<typeof ListAgentsInput>;

export const ReadOutputInput = z.object({
  job_id: jobId.describe('Id of the job whose transcript to read, from spawn_agent or list_agents.'),
  tail: z.number().int().min(1).max(1000, 'tail must be at most 1000 events').default(50)
    .describe('How many of the last transcript events to return, 1..1000 (default 50); events, not lines.'),
  format: z.enum(['text', 'json']).default('text')
    .describe('"text" = readable transcript, "json" = the raw event objects (default "text").'),
  attempt: z.number().int().min(1).optional().describe('Which attempt of a retried job to read, counting from 1 (default: the latest).'),
}).strict();
export type ReadOutputInput = z.infer<typeof ReadOutputInput>;

export const CancelInput = z.object({
  job_id: jobId.describe('Id of the job to stop, from spawn_agent or list_agents.'),
  reason: z.string().max(2000).optional().describe('Why it is cancelled; the job\'s error then reads "cancelled: <reason>" (default "cancelled").'),
  cascade: z.boolean().default(true).describe('true = also cancel every agent this job spawned, and theirs (default true).'),
}).strict();
export type CancelInput = z.infer<typeof CancelInput>;

export const PauseInput = z.object({
  job_id: jobId.describe('Id of the running job to pause, from spawn_agent or list_agents.'),
  mode: z.enum(['freeze', 'stop']).default('freeze')
    .describe('"freeze" = suspend the process in place (SIGSTOP), "stop" = end the process but keep its session to continue later (default "freeze").'),
}).strict();
export type PauseInput = z.infer<typeof PauseInput>;

export const ResumeInput = z.object({
  job_id: jobId.describe('Id of the frozen, stopped, interrupted or ended job to continue.'),
  message: z.string().min(1).max(MAX_PROMPT_CHARS).optional()
    .describe('The next user turn when a stopped or ended session is continued, e.g. what to do now; not used for a frozen job.'),
}).strict();
export type ResumeInput = z.infer<typeof ResumeInput>;

/** A message to an agent (message_agent's text; the dashboard's message box too). */
export const MessageText = z.string().min(1, 'text is empty').max(100_000, 'text must be at most 100000 characters');

export const MessageAgentInput = z.object({
  job_id: jobId.optional().describe('Id of the agent to message, from spawn_agent or list_agents; an agent may message only jobs in its own subtree. Or use to: "*" instead.'),
  to: z.literal('*').optional().describe('"*" = a broadcast to every live agent that matches project and status (instead of job_id); an agent reaches only its own sub-agents.'),
  project: project().optional().describe('With to: "*": only agents of this project (default: any project).'),
  status: z.enum(BROADCAST_STATUSES).optional().describe('With to: "*": only agents in this status (default "running").'),
  text: MessageText.describe('What to tell the agent; it arrives as a user message in its conversation.'),
}).strict().superRefine((v, c) => {
  if (v.job_id !== undefined && v.to !== undefined) c.addIssue({ code: z.ZodIssueCode.custom, path: ['to'], message: 'pass either job_id (one agent) or to: "*" (a broadcast), not both' });
  else if (v.job_id === undefined && v.to === undefined) c.addIssue({ code: z.ZodIssueCode.custom, path: ['job_id'], message: 'job_id is missing: name the agent to message, or pass to: "*" to message every running agent (narrowed by project and status)' });
  else if (v.job_id !== undefined && (v.project !== undefined || v.status !== undefined)) {
    c.addIssue({ code: z.ZodIssueCode.custom, path: ['project'], message: 'project and status choose the agents of a broadcast (to: "*"); with job_id they mean nothing: drop them, or use to: "*" instead of job_id' });
  }
});
export type MessageAgentInput = z.infer<typeof MessageAgentInput>;

export const ReportStatusInput = z.object({
  message: z.string().min(1, 'message is empty').max(2000, 'message must be at most 2000 characters')
    .describe('One line saying what you are doing now, e.g. "running the tests".'),
  progress: z.number().min(0, 'progress is a fraction between 0 and 1').max(1, 'progress is a fraction between 0 and 1').optional()
    .describe('How far along you are, as a fraction 0..1 (0.5 = half done), not a percentage.'),
}).strict();
export type ReportStatusInput = z.infer<typeof ReportStatusInput>;

export const FinishInput = z.object({
  result: z.string().min(1, 'result is empty: say what you did').max(100_000)
    .describe('Your final report: what you did, where (files, branch, commits) and anything left open.'),
  outcome: z.enum(['success', 'failure']).default('success')
    .describe('"success" if the task is done, "failure" if you could not do it (default "success").'),
}).strict();
export type FinishInput = z.infer<typeof FinishInput>;

export interface BroadcastResult {
  /** Every agent the message was stored for, in spawn order. */
  recipients: string[];
  /** Those it reached in their running conversation now. */
  delivered: string[];
  /** Those that read it on their next turn (not running now, or not taking input). */
  queued: string[];
  message_ids: number[];
  /** Set when no agent matched. */
  note?: string;
}
