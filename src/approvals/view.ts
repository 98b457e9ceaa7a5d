// What callers see of requests: the list_requests / respond view, wait_for_agents' attention
// items (who is awaited, how to answer) and late answers. Pure.
import { isoTime } from '../clock.js';
import type { FullRequestRow, LateAnswerRow } from '../store/sql/requests.js';
import { closedHow, howToAnswer, optionsOf } from './rules.js';
import type { LateAnswerView, RequestView } from '../contract/coord.js';

export type { LateAnswerView, RequestView };

export function lateView(l: LateAnswerRow, r: FullRequestRow): LateAnswerView {
  return {
    answered_by: l.answered_by, decision: l.decision, answer: l.answer, comment: l.comment, at: isoTime(l.at),
    note: `late answer ignored: it arrived after the request closed at ${r.answered_at ? isoTime(r.answered_at) : '?'} (${closedHow(r)})`,
  };
}

export function requestView(r: FullRequestRow, agentTitle?: string | null, late: LateAnswerRow[] = []): RequestView {
  const pending = r.status === 'pending';
  const v: RequestView = {
    request_id: r.id, job_id: r.job_id, agent_title: agentTitle ?? null, kind: r.kind, status: r.status, who: r.who,
    awaiting: pending ? r.who : null, how_to_answer: pending ? howToAnswer(r) : null, summary: r.summary,
    plan: r.plan_json ? JSON.parse(r.plan_json) : null, options: optionsOf(r) ?? null,
    tool_name: r.tool_name, tool_input: r.tool_input_json ? JSON.parse(r.tool_input_json) : null,
    decision: r.decision, answer: r.answer, comment: r.comment, answered_by: r.answered_by,
    created_at: isoTime(r.created_at), answered_at: r.answered_at ? isoTime(r.answered_at) : null, expires_at: r.expires_at ? isoTime(r.expires_at) : null,
  };
  if (late.length) v.late_answers = late.map((l) => lateView(l, r));
  return v;
}

/** A pending request as an item of wait_for_agents' `attention`. */
export function attentionItem(r: FullRequestRow, agentTitle: string | undefined): Record<string, unknown> {
  return {
    request_id: r.id, job_id: r.job_id, agent_title: agentTitle ?? null, kind: r.kind, summary: r.summary, who: r.who,
    awaiting: r.who, how_to_answer: howToAnswer(r), created_at: isoTime(r.created_at), expires_at: r.expires_at ? isoTime(r.expires_at) : null,
  };
}

/** A late answer as an item of `attention` (shown to the lead once). */
export function lateAttentionItem(l: LateAnswerRow, r: FullRequestRow): Record<string, unknown> {
  return {
    kind: 'late_answer', request_id: l.request_id, job_id: l.job_id, request_summary: r.summary, request_status: r.status,
    ...lateView(l, r), how_to_answer: `Nothing to answer: tell the person their answer came too late and was ignored${r.status === 'answered' ? '' : '; the agent may ask again'}.`,
  };
}
