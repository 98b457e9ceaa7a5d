// Turns job rows into the `get_agent` summary of the tool contract, with long fields capped
// so a tool result stays under 20,000 characters.
import { hostname } from 'node:os';
import type { AttemptRow, JobRow } from '../store/jobs.js';
import { isoTime } from '../clock.js';
import type { UsageRow } from '../money/usageStore.js';
import { choiceView } from '../models/choice.js';
import type { AgentSummary, AttemptSummary, HubUsageSummary } from '../contract/agentSummary.js';

export const FIELD_CAP = 4000;

export type { AgentSummary, AttemptSummary, HubUsageSummary };

export function cap(s: string | null | undefined, max = FIELD_CAP): string | null {
  if (s === null || s === undefined) return null;
  return s.length <= max ? s : `${s.slice(0, max - 40)}… (${s.length - max + 40} more characters)`;
}

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

const usd = (v: number): number => Math.round(v * 1e6) / 1e6;

/** get_agent's accounting extras: the hub's own model runs for the job and the total with them. */
export function hubUsage(j: JobRow, rows: UsageRow[]): Pick<AgentSummary, 'hub_usage' | 'total_cost_usd'> {
  const unknown = !!j.cost_unknown || rows.some((r) => r.cost_unknown);
  return {
    hub_usage: rows.map((r) => ({ kind: r.kind, attempt: r.attempt, model: r.model, cost_usd: r.cost_unknown ? null : usd(r.cost_usd), input_tokens: r.input_tokens, output_tokens: r.output_tokens })),
    total_cost_usd: unknown ? null : usd(j.cost_usd + rows.reduce((s, r) => s + r.cost_usd, 0)),
  };
}

const withChoice = (json: string | null | undefined): Pick<AgentSummary, 'model_choice'> => {
  const c = choiceView(json);
  return c ? { model_choice: c } : {};
};

/** Hub id → its host (hubs.host), for the jobs a hub runs or ran (src/store/sql/workers.ts `hubHosts`). */
export type HubHosts = ReadonlyMap<string, string>;

const NO_HUBS: HubHosts = new Map();

/**
 * Where a job runs or ran (issue 30): the worker that claimed it (jobs.worker), else the host of
 * the hub that runs or ran it (hubs.host by jobs.hub_id), else this machine (SQLite: one hub, and
 * a job from before the hubs table).
 */
export function hostOf(j: Pick<JobRow, 'worker' | 'hub_id'>, hubHosts: HubHosts): string {
  return j.worker || (j.hub_id ? hubHosts.get(j.hub_id) : undefined) || hostname();
}

/** `hubHosts`: the hosts of the hubs of these jobs; without it, a job a hub ran shows this machine as its host. */
export function summarize(j: JobRow, attempts: AttemptRow[], fieldCap = FIELD_CAP, hubHosts: HubHosts = NO_HUBS): AgentSummary {
  return {
    job_id: j.id,
    title: j.title,
    status: j.status,
    host: hostOf(j, hubHosts),
    provider: j.provider,
    model: j.model,
    ...withChoice(j.model_choice_json),
    cwd: j.work_dir ?? j.cwd,
    branch: j.branch,
    worktree: j.worktree ? j.work_dir : null,
    parent_id: j.parent_id,
    created_at: isoTime(j.created_at),
    started_at: iso(j.started_at),
    ended_at: iso(j.ended_at),
    turns: j.turns,
    cost_usd: j.cost_unknown ? null : usd(j.cost_usd),
    input_tokens: j.input_tokens ?? 0,
    output_tokens: j.output_tokens ?? 0,
    cache_read_tokens: j.cache_read_tokens ?? 0,
    cache_creation_tokens: j.cache_creation_tokens ?? 0,
    stderr_path: attempts.at(-1)?.stderr ?? null,
    status_message: cap(j.status_message, 500),
    progress: j.progress,
    result: cap(j.result, fieldCap),
    error: cap(j.error, fieldCap),
    failure_class: j.failure_class,
    session_id: j.session_id,
    pr_url: j.pr_url,
    lock_violations: j.lock_violations_json ? (JSON.parse(j.lock_violations_json) as string[]) : null,
    diff_stat: cap(j.diff_stat, 1500),
    git_note: j.git_note,
    labels: JSON.parse(j.labels_json) as string[],
    project: j.project ?? null,
    role: j.role ?? 'implementer',
    depends_on: JSON.parse(j.depends_on_json) as string[],
    priority: j.priority,
    attempts: attempts.map((a) => ({
      n: a.n,
      kind: a.kind,
      status: a.status,
      started_at: isoTime(a.started_at),
      ended_at: iso(a.ended_at),
      turns: a.turns,
      cost_usd: usd(a.cost_usd),
      input_tokens: a.input_tokens ?? 0,
      output_tokens: a.output_tokens ?? 0,
      failure_class: a.failure_class,
      error: cap(a.error, 500),
      diagnosis: cap(a.diagnosis, 1500),
    })),
  };
}
