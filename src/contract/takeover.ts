// Zod input schemas of the takeover tools (overseer attach, docs/attach.md), and what attach returns.
import { z } from 'zod';

const jobId = z.string().min(1, 'job_id is empty: pass an id returned by spawn_agent or list_agents').max(100);

export const AttachInput = z.object({
  job_id: jobId.describe('The job whose session a person takes over: running (it is stopped, its session kept), stopped, interrupted or ended.'),
}).strict();
export type AttachInput = z.infer<typeof AttachInput>;

export const DetachInput = z.object({
  job_id: jobId.describe('The job a person took over with attach_agent.'),
  then: z.enum(['resume', 'finish', 'leave'])
    .describe('"resume" = hand it back: the job continues headless on the same session; "finish" = settle it with `result` and `outcome`; "leave" = leave it stopped (resume_agent later).'),
  message: z.string().min(1).max(100_000).optional().describe('With then "resume": the agent\'s next user turn (default: a person worked on this session and hands it back).'),
  result: z.string().min(1).max(100_000).optional().describe('With then "finish" (required): what was done, as the job\'s result.'),
  outcome: z.enum(['success', 'failure']).optional().describe('With then "finish": success (default) or failure.'),
}).strict().refine((i) => i.then !== 'finish' || (i.result?.trim().length ?? 0) > 0, { message: 'then "finish" needs result: say what was done', path: ['result'] });
export type DetachInput = z.infer<typeof DetachInput>;

export interface AttachResult {
  job_id: string;
  title: string;
  provider: string;
  session_id: string;
  /** The status the job had before (running jobs were stopped: it is `interrupted` now). */
  was: string;
  work_dir: string;
  /** Its role when not an implementer (the command holds it: plan mode, a read-only tree). */
  role?: string;
  /** The interactive command; `env` is only what to add to the person's own environment. */
  command: { bin: string; args: string[]; cwd: string; env: Record<string, string> };
  reattached_worktree: boolean;
}
