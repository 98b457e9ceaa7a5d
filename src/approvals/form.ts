// The person's form (MCP form elicitation) for a request: readable text naming the agent by title
// and id, the plan as prose, and one question — accept = approve, decline = reject, an optional
// comment; for questions the answer field (an enum when the agent gave options). Pure.
import type { FullRequestRow } from '../store/sql/requests.js';
import { optionsOf, type Answer } from './rules.js';

export interface FormSpec {
  requestId: string;
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, Record<string, unknown>>; required: string[] };
  /** The longest the form stays open (ms), past the request's expiry. */
  timeoutMs: number;
}

export interface FormResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

const list = (v: unknown): string =>
  Array.isArray(v) ? v.map((x) => `\n  - ${String(x)}`).join('') : ` ${String(v)}`;

/** A plan {rationale, resources, risks, rollback} as readable lines. */
export function planText(planJson: string | null): string {
  if (!planJson) return '';
  const p = JSON.parse(planJson) as Record<string, unknown>;
  const rows: [string, unknown][] = [['Why', p.rationale], ['Resources', p.resources], ['Risks', p.risks], ['Rollback', p.rollback]];
  return rows.filter(([, v]) => v !== undefined && v !== null && v !== '').map(([k, v]) => `${k}:${list(v)}`).join('\n');
}

/** A permission prompt's tool input as `key: value` lines (long values cut). */
function inputText(json: string | null): string {
  if (!json) return '';
  const input = JSON.parse(json) as Record<string, unknown>;
  return Object.entries(input).map(([k, v]) => {
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return `  ${k}: ${s.length > 2000 ? `${s.slice(0, 2000)}…` : s}`;
  }).join('\n');
}

export function buildForm(r: FullRequestRow, agentTitle: string | undefined, now: number): FormSpec {
  const script = r.tool_name === 'overseer:script';
  const agent = script ? `Script run ${r.job_id}` : agentTitle ? `Agent "${agentTitle}" (${r.job_id})` : `Agent ${r.job_id}`;
  const only = r.who === 'person' ? `\n\nThe ${script ? 'script' : 'agent'} asked for you: only you can answer this.` : '';
  // Past the request's own expiry: closing the request is what withdraws the form.
  const timeoutMs = r.expires_at ? Math.max(0, r.expires_at - now) + 60_000 : 24 * 3600_000;
  if (r.kind === 'question') {
    const options = optionsOf(r);
    return {
      requestId: r.id, timeoutMs,
      message: `${agent} asks:\n\n${r.summary}${only}`,
      requestedSchema: {
        type: 'object',
        properties: { answer: options ? { type: 'string', title: 'Answer', enum: options } : { type: 'string', title: 'Answer' } },
        required: ['answer'],
      },
    };
  }
  const body = r.kind === 'permission'
    ? `${agent} asks permission to use ${r.tool_name ?? 'a tool'}:\n\n${r.summary}${r.tool_input_json ? `\n\n${inputText(r.tool_input_json)}` : ''}`
    : `${agent} asks for your approval:\n\n${r.summary}${r.plan_json ? `\n\n${planText(r.plan_json)}` : ''}`;
  return {
    requestId: r.id, timeoutMs,
    message: `${body}${only}\n\nAccept to approve, decline to reject. You may add a comment for the agent.`,
    requestedSchema: { type: 'object', properties: { comment: { type: 'string', title: 'Comment (optional)' } }, required: [] },
  };
}

/** The person's answer in a form result, or undefined when they dismissed it (cancel). */
export function readForm(kind: string, res: FormResult): Answer | undefined {
  const c = res.content ?? {};
  const comment = typeof c.comment === 'string' && c.comment.trim() !== '' ? c.comment : undefined;
  if (kind === 'question') return res.action === 'accept' && typeof c.answer === 'string' ? { answer: c.answer } : undefined;
  if (res.action === 'accept') return { decision: 'approved', comment };
  if (res.action === 'decline') return { decision: 'rejected', comment: comment ?? 'declined by the person' };
  return undefined;
}
