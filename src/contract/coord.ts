// Zod input schemas of the message, request and permission tools (docs/tools.md, docs/coordination.md),
// and what they return (MessageView, RequestView, ApprovalResult, AskLeadResult).
import { z } from 'zod';

export const SendMessageInput = z.object({
  to: z.string().min(1, 'to is empty: a job id, "lead", or "*" for your siblings').max(100)
    .describe('Recipient: a job id (from spawn_agent or list_agents), "lead", or "*" for all your siblings (the other children of your parent).'),
  text: z.string().min(1, 'text is empty').max(100_000, 'text must be at most 100000 characters')
    .describe('The message; a running agent gets it as a user message in its conversation.'),
}).strict();
export type SendMessageInput = z.infer<typeof SendMessageInput>;

export const ReadMessagesInput = z.object({
  unread_only: z.boolean().default(true)
    .describe('true = only messages not read yet, false = also ones already read (default true); returned messages are marked read.'),
  limit: z.number().int().min(1).max(200).default(50)
    .describe('Most messages to return, newest first, 1..200 (default 50).'),
}).strict();
export type ReadMessagesInput = z.infer<typeof ReadMessagesInput>;

const Plan = z.object({
  rationale: z.string().max(20_000).optional().describe('Why you want to do it and why this way.'),
  resources: z.union([z.string().max(20_000), z.array(z.string().max(2000)).max(200)]).optional()
    .describe('What it touches or uses (files, services, commands, money): one text or a list of items.'),
  risks: z.union([z.string().max(20_000), z.array(z.string().max(2000)).max(200)]).optional()
    .describe('What could go wrong: one text or a list of items.'),
  rollback: z.string().max(20_000).optional().describe('How to undo it if it goes wrong.'),
}).strict();

/** Who may answer a request (request_approval, ask_lead). */
const Who = z.enum(['person', 'lead', 'any'], { message: 'who must be "person" (only the person may answer), "lead" (only the lead) or "any" (the default: the person is asked, the lead may answer)' })
  .default('any')
  .describe('Who may answer: "person" = only the person (the lead is told to ask them, and may not answer itself), "lead" = only the lead (the person is not asked), "any" (default) = the person is asked in a form and the lead may answer too.');

export const RequestApprovalInput = z.object({
  summary: z.string().min(1, 'summary is empty: say what you want approved').max(4000)
    .describe('What you want approved, in one or two sentences, e.g. "push branch fix/login to origin".'),
  plan: Plan.optional().describe('Details for whoever decides: rationale, resources, risks, rollback (all optional).'),
  timeout_s: z.number().min(1).max(24 * 3600).default(1800)
    .describe('Longest to wait for a decision, in seconds (1..86400, default 1800); then the decision is timed_out: treat that as not approved.'),
  who: Who,
}).strict();
export type RequestApprovalInput = z.infer<typeof RequestApprovalInput>;

export const AskLeadInput = z.object({
  question: z.string().min(1, 'question is empty').max(4000)
    .describe('The question, with what the answerer needs to know to answer it.'),
  options: z.array(z.string().min(1).max(500)).min(2, 'options needs at least 2 choices (or omit it for a free answer)').max(20).optional()
    .describe('2..20 choices; the answer is then exactly one of them (default: a free-text answer).'),
  timeout_s: z.number().min(1).max(24 * 3600).default(1800)
    .describe('Longest to wait for an answer, in seconds (1..86400, default 1800); then timed_out is true and answer is null.'),
  who: Who,
}).strict();
export type AskLeadInput = z.infer<typeof AskLeadInput>;

/** What request_approval returns: the decision (or timed_out), the comment, who decided. */
export interface ApprovalResult {
  request_id: string;
  decision: string | null;
  comment: string | null;
  answered_by: string | null;
}

/** What ask_lead returns: the answer (null when none came), the comment, who answered. */
export interface AskLeadResult {
  request_id: string;
  answer: string | null;
  comment: string | null;
  timed_out: boolean;
  answered_by: string | null;
}

export const ListRequestsInput = z.object({
  status: z.enum(['pending', 'answered', 'timed_out', 'cancelled', 'all']).default('pending')
    .describe('Which requests: "pending", "answered", "timed_out", "cancelled" or "all" (default "pending").'),
  limit: z.number().int().min(1).max(200).default(50)
    .describe('Most requests to return, 1..200 (default 50).'),
}).strict();
export type ListRequestsInput = z.infer<typeof ListRequestsInput>;

export const RespondInput = z.object({
  request_id: z.string().min(1, 'request_id is empty: take it from list_requests or from attention in wait_for_agents').max(100)
    .describe('Id of the pending request, from list_requests or from attention in wait_for_agents.'),
  decision: z.enum(['approved', 'rejected']).optional()
    .describe('"approved" or "rejected": required for approvals and permission prompts, not used for questions.'),
  answer: z.string().max(20_000).optional()
    .describe('The answer to a question (required for questions); when it offered options, exactly one of them.'),
  comment: z.string().max(20_000).optional()
    .describe('Optional note passed back to the agent with the decision or answer, e.g. a condition or a reason.'),
}).strict();
export type RespondInput = z.infer<typeof RespondInput>;

export const CheckPermissionInput = z.object({
  tool_name: z.string().min(1).max(200).describe('Name of the tool Claude Code asks permission for, e.g. "Bash" or "Edit".'),
  input: z.record(z.unknown()).describe('The input that tool would be called with, as Claude Code sent it.'),
  tool_use_id: z.string().max(200).optional().describe('Claude Code\'s id of that tool call, when it sends one.'),
}).passthrough();
export type CheckPermissionInput = z.infer<typeof CheckPermissionInput>;

export interface MessageView {
  message_id: number;
  from: string;
  to: string;
  text: string;
  created_at: string;
  read: boolean;
}

/** Who may answer: only the person, only the lead, or either (the person is asked first). */
export type Who = 'person' | 'lead' | 'any';

export interface LateAnswerView {
  answered_by: string;
  decision: string | null;
  answer: string | null;
  comment: string | null;
  at: string;
  note: string;
}

export interface RequestView {
  request_id: string;
  job_id: string;
  agent_title: string | null;
  kind: string;
  status: string;
  who: Who;
  /** Who must answer now (pending requests only). */
  awaiting: Who | null;
  how_to_answer: string | null;
  summary: string;
  plan: unknown;
  options: string[] | null;
  tool_name: string | null;
  tool_input: unknown;
  decision: string | null;
  answer: string | null;
  comment: string | null;
  answered_by: string | null;
  created_at: string;
  answered_at: string | null;
  expires_at: string | null;
  late_answers?: LateAnswerView[];
}
