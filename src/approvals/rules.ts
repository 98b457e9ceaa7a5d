// Pure rules of answering a request: which answer fits which kind of request, who may give it,
// and how the person answers a request that only they may answer. No I/O.
import type { FullRequestRow, Who } from '../store/sql/requests.js';

export interface Answer {
  decision?: 'approved' | 'rejected';
  answer?: string;
  comment?: string;
}

export const optionsOf = (r: Pick<FullRequestRow, 'options_json'>): string[] | undefined =>
  r.options_json ? (JSON.parse(r.options_json) as string[]) : undefined;

const quoted = (xs: string[]): string => xs.map((o) => JSON.stringify(o)).join(', ');

/** What is wrong with `a` as an answer to `r` (a message saying how to fix it), or undefined. */
export function answerProblem(r: FullRequestRow, a: Answer): string | undefined {
  if (r.kind === 'question') {
    const options = optionsOf(r);
    if (a.answer === undefined) return `request ${r.id} is a question: give answer${options ? ` (one of ${quoted(options)})` : ''}.`;
    if (options && !options.includes(a.answer)) return `answer ${JSON.stringify(a.answer)} is not one of the options ${quoted(options)}.`;
    return undefined;
  }
  if (a.decision === undefined) return `request ${r.id} is ${r.kind === 'permission' ? 'a permission prompt' : 'an approval'}: give decision "approved" or "rejected" (and an optional comment).`;
  return undefined;
}

/** The shell command the person answers `r` with (shown to the lead and in the CLI listing). */
export function cliHint(r: Pick<FullRequestRow, 'id' | 'kind' | 'options_json'>): string {
  if (r.kind !== 'question') return `overseer respond ${r.id} --approve|--reject [--comment "<text>"]`;
  const options = optionsOf(r);
  return `overseer respond ${r.id} --answer ${options ? options.map((o) => JSON.stringify(o)).join('|') : '"<text>"'} [--comment "<text>"]`;
}

/** Told to the lead about a pending request: who answers it, and how. */
export function howToAnswer(r: Pick<FullRequestRow, 'id' | 'kind' | 'options_json' | 'who'>): string {
  if (r.who === 'person') {
    return `Only the person can answer this request (the agent asked for the person): do not answer it yourself, and do not run the command below yourself. Tell the person to answer it in the form their Claude Code shows, or in a terminal: ${cliHint(r)}`;
  }
  if (r.who === 'lead') return 'The agent asked the lead: answer it with respond.';
  return `The person may be answering it in a form; you may answer it with respond. In a terminal the person can run: ${cliHint(r)}`;
}

/** Why the lead may not answer `r`, or undefined when it may. */
export function leadRefusal(r: Pick<FullRequestRow, 'id' | 'kind' | 'options_json' | 'who'>): string | undefined {
  if (r.who !== 'person') return undefined;
  return `Request ${r.id} is for the person (the agent asked with who: "person"), so the lead may not answer it; nothing was changed. Tell the person to answer it in the form their Claude Code shows, or in a terminal with: ${cliHint(r)}`;
}

/** The wording of a closed request's end, for "too late" messages. */
export function closedHow(r: Pick<FullRequestRow, 'status' | 'answered_by' | 'decision' | 'answer'>): string {
  if (r.status === 'timed_out') return 'timed out';
  if (r.status === 'cancelled') return `cancelled${r.answered_by ? ` by ${r.answered_by}` : ''}`;
  const what = r.decision ?? (r.answer !== null ? JSON.stringify(r.answer) : 'answered');
  return `${what} by ${r.answered_by ?? 'someone else'}`;
}

export const WHO: readonly Who[] = ['person', 'lead', 'any'];
