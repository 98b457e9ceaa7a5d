// Zod input schemas of the debate tools (docs/debates.md), and the debate they return (DebateView).
import { z } from 'zod';
import { projectName } from './projectNames.js';

// A fresh schema per side: two parameters sharing one zod instance are published as a JSON "$ref".
const side = () => z.object({
  provider: z.enum(['claude', 'codex'], { errorMap: () => ({ message: 'provider must be "claude" or "codex"' }) })
    .describe('Which CLI argues this side: "claude" or "codex".'),
  model: z.string().min(1).max(200).optional().describe('Model name passed to the CLI, e.g. "sonnet" (default: the CLI\'s own).'),
}).strict();

const debateId = z.string().min(1, 'debate_id is empty: pass an id from start_debate or list_debates').max(100);

export const StartDebateInput = z.object({
  task: z.string().max(200_000, 'task is longer than 200000 characters: put the material in a file and point at it')
    .refine((t) => t.trim().length > 0, 'task is empty: say what the two sides should debate')
    .describe('The question or task both sides analyse, with what they need to know.'),
  title: z.string().trim().min(1).max(200).optional().describe('Short name shown in list_debates (default: the first line of task).'),
  cwd: z.string().min(1).max(4096).optional()
    .describe('Directory the sides work in (and the post-action changes); a relative path resolves against the project (default: the project).'),
  sides: z.array(side(), { invalid_type_error: 'sides must be a list of exactly two {provider, model?}' })
    .length(2, 'a debate has exactly two sides: pass sides: [{provider, model?}, {provider, model?}] (the same provider twice is fine)')
    .describe('The two debaters, side A then side B: [{provider, model?}, {provider, model?}].'),
  max_rounds: z.number().int('max_rounds must be a whole number').min(1, 'max_rounds must be between 1 and 10').max(10, 'max_rounds must be between 1 and 10').default(3)
    .describe('Most rounds per loop before the debate ends in disagreement, 1..10 (default 3). Consensus ends it earlier.'),
  post_action: z.string().trim().min(1, 'post_action is empty: say what to do after the debate, or omit it').max(20_000).optional()
    .describe('What one side does once the rounds end, with both final positions, e.g. "implement what you agreed" (default: nothing).'),
  post_action_side: z.union([z.literal(0), z.literal(1)], { errorMap: () => ({ message: 'post_action_side must be 0 (side A) or 1 (side B)' }) }).optional()
    .describe('Which side runs the post-action: 0 = side A, 1 = side B (default 0). Needs post_action.'),
  verify: z.boolean().optional()
    .describe('true = after the post-action the other side reviews it (and its diff in a worktree) and the implementer answers the review. Needs post_action.'),
  loops: z.number().int('loops must be a whole number').min(1, 'loops must be between 1 and 5').max(5, 'loops must be between 1 and 5').default(1)
    .describe('Run the whole debate (rounds, then post-action) this many times, each loop starting from the previous one\'s final positions, 1..5 (default 1).'),
  project: projectName().optional()
    .describe('The project the debate\'s jobs belong to, e.g. "web" (default: none); refused for an archived project.'),
  worktree: z.boolean().default(false)
    .describe('true = the debate works in a new git worktree on its own branch overseer/debate-<title>-<id> (the branch keeps what the post-action changed); default false.'),
}).strict()
  .refine((i) => i.post_action !== undefined || i.post_action_side === undefined, { message: 'post_action_side needs post_action: say what that side should do, or omit post_action_side', path: ['post_action_side'] })
  .refine((i) => i.post_action !== undefined || !i.verify, { message: 'verify needs post_action: the review checks what the post-action did. Add post_action or omit verify', path: ['verify'] });
export type StartDebateInput = z.infer<typeof StartDebateInput>;

export const GetDebateInput = z.object({ debate_id: debateId.describe('Id of the debate ("d-…"), from start_debate or list_debates.') }).strict();
export const ListDebatesInput = z.object({
  status: z.enum(['running', 'consensus', 'disagreement', 'failed', 'cancelled']).optional().describe('Only debates in this status (default: any).'),
  limit: z.number().int().min(1).max(100).default(20).describe('Most debates to return, newest first, 1..100 (default 20).'),
}).strict();
export type ListDebatesInput = z.infer<typeof ListDebatesInput>;
export const CancelDebateInput = z.object({ debate_id: debateId.describe('Id of the debate to stop, from start_debate or list_debates.') }).strict();

export type DebateStatus = 'running' | 'consensus' | 'disagreement' | 'failed' | 'cancelled';

export interface SideSpec { provider: 'claude' | 'codex'; model?: string }

export interface TurnView {
  side: 'A' | 'B';
  job_id: string;
  status: string;
  job_status: string | null;
  verdict: string | null;
  position?: string | null;
  reasoning?: string | null;
  open_points?: string[];
  text?: string | null;
  error?: string | null;
}

export interface DebateView {
  debate_id: string;
  title: string;
  task: string;
  status: DebateStatus;
  error: string | null;
  /** The project its jobs carry (src/projects). */
  project: string | null;
  sides: (SideSpec & { side: 'A' | 'B' })[];
  max_rounds: number;
  loops: number;
  /** the loop and round reached so far */
  loop: number;
  round: number;
  post_action: string | null;
  post_action_side: 'A' | 'B' | null;
  verify: boolean;
  cwd: string;
  branch: string | null;
  cost_usd: number;
  rounds: { loop: number; round: number; turns: TurnView[] }[];
  post: ({ loop: number; kind: string } & TurnView)[];
  notes: { final: string; rounds: string };
  created_at: string;
  ended_at: string | null;
}
