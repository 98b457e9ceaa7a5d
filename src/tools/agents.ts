// The agent tools of the contract (docs/tools.md "Agents") plus report_status and finish.
// Thin adapters: each calls one JobService method; schemas live in src/contract/agents.ts.
import type { JobService } from '../services/jobs.js';
import { defineTool, type ToolDef } from './registry.js';
import {
  CancelInput, FinishInput, GET_AGENT_EVENTS, GetAgentInput, ListAgentsInput, MessageAgentInput, PauseInput,
  ReadOutputInput, ReportStatusInput, ResumeInput, SpawnInput, WaitInput,
} from '../contract/agents.js';

const BOTH = ['lead', 'agent'] as const;

export function agentTools(jobs: JobService): ToolDef[] {
  return [
    defineTool({
      name: 'spawn_agent', roles: BOTH, title: 'Spawn an agent',
      description: 'Start a child coding agent (a claude process) on a task. Returns at once with its job_id; use wait_for_agents to wait. Options: worktree (own git worktree and branch), depends_on (start after these jobs succeed), priority, limits (max_turns, budget_usd, timeout_s), checks that decide success, retry policy. The lead may schedule it: at (a later start), every_s or cron (repeat after each success) with max_runs and until; see list_schedules and cancel_schedule.',
      input: SpawnInput, annotations: { destructiveHint: false, openWorldHint: true },
      handler: (i, c) => jobs.spawn(i, c),
    }),
    defineTool({
      name: 'wait_for_agents', roles: BOTH, title: 'Wait for agents',
      description: 'Block until the given jobs end (mode all) or one of them ends (mode any), or until timeout_s. Returns early with `attention` when an awaited agent needs an answer (list_requests / respond).',
      input: WaitInput, annotations: { readOnlyHint: true },
      handler: (i, c, x) => jobs.wait(i, c, { signal: x.signal, onProgress: (ms, done, total) => x.progress(done, total, `${done}/${total} done after ${Math.round(ms / 1000)}s`) }),
    }),
    defineTool({
      name: 'get_agent', roles: BOTH, title: 'Get an agent',
      description: 'Summary of one job: status, turns, cost, last status message, result or error with failure_class, branch, attempts. With events: true, also the hub\'s recent events for it (permission decisions and their rule, lock denials, retries, messages).',
      input: GetAgentInput, annotations: { readOnlyHint: true },
      handler: (i, c) => jobs.get(i.job_id, c, { events: i.events ? GET_AGENT_EVENTS : 0 }),
    }),
    defineTool({
      name: 'list_agents', roles: BOTH, title: 'List agents',
      description: 'Summaries of jobs, oldest first, filtered by status, label, project or parent_id ("lead" = top level). Jobs of archived projects only when their project is named. Pages with limit and next_cursor.',
      input: ListAgentsInput, annotations: { readOnlyHint: true },
      handler: (i, c) => jobs.list(i, c),
    }),
    defineTool({
      name: 'read_agent_output', roles: BOTH, title: 'Read agent output',
      description: 'The last `tail` events of a job\'s transcript, as readable text or JSON.',
      input: ReadOutputInput, annotations: { readOnlyHint: true },
      handler: (i, c) => jobs.output(i, c),
    }),
    defineTool({
      name: 'cancel_agent', roles: BOTH, title: 'Cancel an agent',
      description: 'Stop a job (and, with cascade, every agent it spawned). Returns its final summary. Work in a worktree is committed to its branch.',
      input: CancelInput, annotations: { destructiveHint: true, idempotentHint: true },
      handler: (i, c) => jobs.cancel(i, c),
    }),
    defineTool({
      name: 'pause_agent', roles: ['lead'], title: 'Pause an agent',
      description: 'mode freeze: suspend the process in place (SIGSTOP; resume_agent continues it). mode stop: end the process but keep its session (status interrupted; resume_agent continues the conversation).',
      input: PauseInput, annotations: { destructiveHint: false },
      handler: (i, c) => jobs.pause(i, c),
    }),
    defineTool({
      name: 'resume_agent', roles: ['lead'], title: 'Resume an agent',
      description: 'Frozen → continue the process. Stopped, interrupted or ended → continue the same session with `message` as the next user turn.',
      input: ResumeInput,
      handler: (i, c) => jobs.resume(i, c),
    }),
    defineTool({
      name: 'message_agent', roles: BOTH, title: 'Message an agent',
      description: 'Send text to an agent (job_id): delivered into its conversation at once when it is running, otherwise queued for its next turn; one running on another hub (many hubs on one database) answers delivered: false, queued: true, and that hub pushes it into the conversation a moment later. Or broadcast (to: "*", optionally project and status, default status running) to every matching agent; returns the ids it went to.',
      input: MessageAgentInput,
      handler: (i, c) => (i.to === '*' ? jobs.broadcast({ project: i.project, status: i.status, text: i.text }, c) : jobs.message(i.job_id!, i.text, c)),
    }),
    defineTool({
      name: 'report_status', roles: ['agent'], title: 'Report status',
      description: 'Tell the lead what you are doing now (one line) and optionally progress 0..1.',
      input: ReportStatusInput, annotations: { idempotentHint: true }, alwaysLoad: true,
      handler: (i, c) => jobs.reportStatus(c, i.message, i.progress),
    }),
    defineTool({
      name: 'finish', roles: ['agent'], title: 'Finish',
      description: 'Report your final result (what you did, where) and outcome (success|failure). Call once at the end, then end your turn.',
      input: FinishInput, annotations: { idempotentHint: true }, alwaysLoad: true,
      handler: (i, c) => jobs.finish(c, i.result, i.outcome),
    }),
  ];
}
