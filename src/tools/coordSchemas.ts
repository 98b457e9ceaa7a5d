// Zod input schemas of the message, request and permission tools (design.md "Coordination").
import { z } from 'zod';

export const SendMessageInput = z.object({
  to: z.string().min(1, 'to is empty: a job id, "lead", or "*" for your siblings').max(100),
  text: z.string().min(1, 'text is empty').max(100_000, 'text must be at most 100000 characters'),
}).strict();
export type SendMessageInput = z.infer<typeof SendMessageInput>;

export const ReadMessagesInput = z.object({
  unread_only: z.boolean().default(true),
  limit: z.number().int().min(1).max(200).default(50),
}).strict();
export type ReadMessagesInput = z.infer<typeof ReadMessagesInput>;

const Plan = z.object({
  rationale: z.string().max(20_000).optional(),
  resources: z.union([z.string().max(20_000), z.array(z.string().max(2000)).max(200)]).optional(),
  risks: z.union([z.string().max(20_000), z.array(z.string().max(2000)).max(200)]).optional(),
  rollback: z.string().max(20_000).optional(),
}).strict();

/** Who may answer a request (request_approval, ask_lead). */
const Who = z.enum(['person', 'lead', 'any'], { message: 'who must be "person" (only the person may answer), "lead" (only the lead) or "any" (the default: the person is asked, the lead may answer)' })
  .default('any')
  .describe('Who may answer: "person" = only the person (the lead is told to ask them, and may not answer itself), "lead" = only the lead (the person is not asked), "any" (default) = the person is asked in a form and the lead may answer too.');

export const RequestApprovalInput = z.object({
  summary: z.string().min(1, 'summary is empty: say what you want approved').max(4000),
  plan: Plan.optional(),
  timeout_s: z.number().min(1).max(24 * 3600).default(1800),
  who: Who,
}).strict();
export type RequestApprovalInput = z.infer<typeof RequestApprovalInput>;

export const AskLeadInput = z.object({
  question: z.string().min(1, 'question is empty').max(4000),
  options: z.array(z.string().min(1).max(500)).min(2, 'options needs at least 2 choices (or omit it for a free answer)').max(20).optional(),
  timeout_s: z.number().min(1).max(24 * 3600).default(1800),
  who: Who,
}).strict();
export type AskLeadInput = z.infer<typeof AskLeadInput>;

export const ListRequestsInput = z.object({
  status: z.enum(['pending', 'answered', 'timed_out', 'cancelled', 'all']).default('pending'),
  limit: z.number().int().min(1).max(200).default(50),
}).strict();
export type ListRequestsInput = z.infer<typeof ListRequestsInput>;

export const RespondInput = z.object({
  request_id: z.string().min(1, 'request_id is empty: take it from list_requests or from attention in wait_for_agents').max(100),
  decision: z.enum(['approved', 'rejected']).optional(),
  answer: z.string().max(20_000).optional(),
  comment: z.string().max(20_000).optional(),
}).strict();
export type RespondInput = z.infer<typeof RespondInput>;

export const CheckPermissionInput = z.object({
  tool_name: z.string().min(1).max(200),
  input: z.record(z.unknown()),
  tool_use_id: z.string().max(200).optional(),
}).passthrough();
export type CheckPermissionInput = z.infer<typeof CheckPermissionInput>;
