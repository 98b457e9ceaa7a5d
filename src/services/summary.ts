// Turns job rows into the `get_agent` summary of the tool contract, with long fields capped
// so a tool result stays under 20,000 characters.
import type { AttemptRow, JobRow } from '../store/jobs.js';
import { isoTime } from '../clock.js';
import type { UsageRow } from '../money/usageStore.js';
import { choiceView } from '../models/choice.js';

export const FIELD_CAP = 4000;

export interface AttemptSummary {
  n: number;
  kind: string;
  status: string;
  started_at: string;
  ended_at: string | null;
  turns: number;
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  failure_class: string | null;
  error: string | null;
  diagnosis: string | null;
}

/** A model run the hub made for this job besides its attempts (retry diagnosis, KB triage). */
export interface HubUsageSummary {
  kind: string;
  attempt: number | null;
  model: string | null;
  /** null when it could not be known. */
  cost_usd: number | null;
  input_tokens: number;
  output_tokens: number;
}

export interface AgentSummary {
  job_id: string;
  title: string;
  status: string;
  provider: string;
  /** "auto" until the job's model is chosen (src/models), then the model it runs on. */
  model: string | null;
  /** How model "auto" was decided: tier, reason, classifier model, duration, cost, fallback; only for such jobs once decided. */
  model_choice?: Record<string, unknown>;
  cwd: string;
  branch: string | null;
  worktree: string | null;
  parent_id: string | null;
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
  turns: number;
  /** null when some of the spending could not be priced (unknown model): see the tokens. */
  cost_usd: number | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  /** The hub's own model runs for this job (diagnosis, triage); only in get_agent. */
  hub_usage?: HubUsageSummary[];
  /** cost_usd plus hub_usage (null when any part is unknown); only in get_agent. */
  total_cost_usd?: number | null;
  /** The last attempt's child stderr file (last 1 MiB), when kept. */
  stderr_path?: string | null;
  status_message: string | null;
  progress: number | null;
  result: string | null;
  error: string | null;
  failure_class: string | null;
  session_id: string | null;
  pr_url: string | null;
  /** Files the agent changed without holding their lock (checked at the end of Codex turns). */
  lock_violations: string[] | null;
  diff_stat: string | null;
  git_note: string | null;
  labels: string[];
  /** The job's project (src/projects); null: none. */
  project: string | null;
  depends_on: string[];
  priority: number;
  attempts: AttemptSummary[];
  /** Open health warnings (stalled, turns_high, budget_high, time_high, long_running, commands_failed); only when there are some. */
  warnings?: { kind: string; detail: string; raised_at: string }[];
  /** Worktree bootstrap (worktree jobs): copied files, setup commands and their time (src/git/bootstrap.ts). */
  setup?: import('../git/bootstrap.js').SetupView;
  /** Its branch was merged (overseer merge / merge_branch, docs/merge.md): into which branch, how, the new tip, when. */
  merged?: { into: string; mode: string; commit: string; at: string };
  /** Files its branch and another live branch both change (the conflict guard, docs/worktrees.md). */
  overlaps?: { with: string; title: string; files: string[]; locks_conflict: boolean }[];
  /** When the child last printed anything, and what it last did (running jobs). */
  last_event_at?: string | null;
  last_activity?: string | null;
}

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

export function summarize(j: JobRow, attempts: AttemptRow[], fieldCap = FIELD_CAP): AgentSummary {
  return {
    job_id: j.id,
    title: j.title,
    status: j.status,
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
