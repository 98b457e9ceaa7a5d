// What a notification says: the payload every sink gets, built from database rows. Pure: the
// caller reads the rows (src/floor/notify/listen.ts); nothing here touches the hub.
//
// `command` is the exact CLI that acts on the notice, to be run in `project_dir` (the CLI finds
// the hub of the directory it runs in). Ids are [a-z0-9-] only, so the command needs no quoting.
import type { NotifyEvent } from '../../config/notify.js';

export interface NotifyPayload {
  event: NotifyEvent;
  /** The job concerned; for workflow events the workflow's current (or blocking) job, if any. */
  job_id: string | null;
  /** The job's title (the workflow's for workflow events). */
  title: string;
  /** Why, in one line: the error, the request, the warning's detail, the result's first line. */
  reason: string;
  /** The exact `overseer …` command that acts on it, run in `project_dir`. */
  command: string;
  /** When the hub saw it (ISO 8601). */
  at: string;
  /** The project's directory name, and its full path. */
  project: string;
  project_dir: string;
  /** The hub's HTTP endpoint on 127.0.0.1, once it listens. */
  hub_url?: string;
  workflow_id?: string;
  request_id?: string;
  /** The health warning's kind (stalled, budget_high, turns_high, time_high, long_running). */
  warning?: string;
  /** `limited`: the provider whose limit holds the crew (claude, codex), and until when (ISO 8601; absent while it probes). */
  provider?: string;
  until?: string;
  /** Notifications this sink dropped (rate limit, repeats) since it last delivered one. */
  suppressed?: number;
}

/** The part of every payload that does not depend on the event. */
export interface PayloadBase { at: string; project: string; project_dir: string; hub_url?: string }

/** The job fields a payload needs (a subset of JobRow). */
export interface JobFacts {
  id: string;
  title: string;
  status: string;
  result: string | null;
  error: string | null;
  failure_class: string | null;
  workflow_id: string | null;
}

export interface RequestFacts { id: string; kind: string; summary: string; options_json: string | null; tool_name: string | null }
export interface WorkflowFacts { id: string; title: string; status: string; current_job: string | null; blocked_json: string | null; pr_url: string | null; branch: string | null; git_note: string | null }

const REASON_MAX = 500;

/** Whitespace collapsed to one line, at most `max` characters. */
export function oneLine(s: string, max = REASON_MAX): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

const firstLine = (s: string): string => s.split('\n').find((l) => l.trim() !== '') ?? '';

/** succeeded / failed of a job that ended, or undefined when the person need not hear of it. */
export function jobEnded(job: JobFacts, base: PayloadBase): NotifyPayload | undefined {
  // A workflow's phases are the workflow's business: it retries them and reports blocked/done.
  if (job.workflow_id) return undefined;
  if (job.status === 'succeeded') {
    return { ...base, event: 'succeeded', job_id: job.id, title: job.title, reason: oneLine(firstLine(job.result ?? '')) || 'finished', command: `overseer logs ${job.id}` };
  }
  // dependency_failed cascades from a failure that was notified itself; cancelled and
  // interrupted jobs are a person's (or a stopping hub's) doing, not news.
  if (job.status !== 'failed' || job.failure_class === 'dependency_failed') return undefined;
  const why = [job.failure_class, job.error].filter(Boolean).join(': ');
  const said = job.failure_class === 'reported_failure' && job.result ? ` — ${firstLine(job.result)}` : '';
  return { ...base, event: 'failed', job_id: job.id, title: job.title, reason: oneLine(`${why || 'failed'}${said}`), command: `overseer logs ${job.id}` };
}

/** The command that answers a request from a terminal. */
export function respondCommand(r: Pick<RequestFacts, 'id' | 'kind'>): string {
  return r.kind === 'question' ? `overseer respond ${r.id} --answer "…"` : `overseer respond ${r.id} approve`;
}

/** needs_input for a request that was just opened. */
export function requestOpened(r: RequestFacts, job: Pick<JobFacts, 'id' | 'title' | 'workflow_id'>, base: PayloadBase): NotifyPayload {
  const options = r.options_json ? (JSON.parse(r.options_json) as string[]) : [];
  const what = r.kind === 'permission' ? 'permission' : r.kind === 'question' ? 'question' : 'approval';
  const reason = `${what}: ${r.summary}${options.length ? ` (options: ${options.join(', ')})` : ''}`;
  return {
    ...base, event: 'needs_input', job_id: job.id, title: job.title, reason: oneLine(reason), command: respondCommand(r), request_id: r.id,
    ...(job.workflow_id ? { workflow_id: job.workflow_id } : {}),
  };
}

/**
 * stalled / budget_high, or `warning` for the milder kinds, for a warning just raised. The
 * health monitor's reaction (config health.reactions) is named when it did more than notify; a
 * job it froze is resumed with `overseer resume`.
 */
export function warningRaised(w: { kind: string; detail: string; reaction?: string | null }, job: Pick<JobFacts, 'id' | 'title' | 'workflow_id'>, base: PayloadBase): NotifyPayload {
  const event: NotifyEvent = w.kind === 'stalled' || w.kind === 'budget_high' ? w.kind : 'warning';
  const did = w.reaction === 'freeze' ? ' (frozen)' : w.reaction === 'cancel' ? ' (cancelled)' : w.reaction === 'message' ? ' (the agent was nudged)' : '';
  return {
    ...base, event, job_id: job.id, title: job.title, reason: oneLine(`${w.kind}: ${w.detail}${did}`),
    command: w.reaction === 'freeze' ? `overseer resume ${job.id}` : `overseer logs ${job.id}`, warning: w.kind,
    ...(job.workflow_id ? { workflow_id: job.workflow_id } : {}),
  };
}

/** workflow_blocked / workflow_done for a workflow whose status just became blocked / succeeded. */
export function workflowChanged(w: WorkflowFacts, base: PayloadBase): NotifyPayload | undefined {
  if (w.status === 'blocked') {
    const b = w.blocked_json ? (JSON.parse(w.blocked_json) as { code?: string; message?: string; job_id?: string | null }) : {};
    const jobId = b.job_id ?? w.current_job;
    return {
      ...base, event: 'workflow_blocked', job_id: jobId, title: w.title, workflow_id: w.id,
      reason: oneLine(`${b.code ?? 'blocked'}: ${b.message ?? ''} (the lead continues it with resume_workflow)`),
      command: jobId ? `overseer logs ${jobId}` : 'overseer status',
    };
  }
  if (w.status === 'succeeded') {
    const where = w.pr_url ? `PR ${w.pr_url}` : w.branch ? `branch ${w.branch}${w.git_note ? ` (${w.git_note})` : ''}` : 'done';
    return { ...base, event: 'workflow_done', job_id: w.current_job, title: w.title, workflow_id: w.id, reason: oneLine(where), command: 'overseer status' };
  }
  return undefined;
}

/** Two notices with the same key are "the same thing again" for the repeat window. */
export function repeatKey(p: NotifyPayload): string {
  const subject = p.event.startsWith('workflow_') ? p.workflow_id : p.job_id;
  return [p.event, p.warning ?? '', subject ?? '', p.request_id ?? '', p.provider ?? ''].join('|');
}

/** `limited`: a provider limit began holding the crew (src/limits): once per limit, not per agent. */
export function limitOpened(l: { provider: string; line: string; until: number | null; reason: string | null }, base: PayloadBase): NotifyPayload {
  return {
    ...base, event: 'limited', job_id: null, title: `${l.provider} agents`,
    reason: oneLine(`${l.line}${l.reason ? ` (${l.reason})` : ''}; new ${l.provider} agents start when it has passed, paused ones go on by themselves`),
    command: 'overseer status', provider: l.provider, ...(l.until !== null ? { until: new Date(l.until).toISOString() } : {}),
  };
}
