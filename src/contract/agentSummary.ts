// What get_agent, list_agents, cancel_agent and the other agent tools return for a job: its
// summary (docs/tools.md "Agents"). src/services/summary.ts builds it from the job's rows; the
// tools return it as is, and the dashboard's API and `overseer status` read the same shape.

/** The bootstrap as get_agent shows it: what ran, how long, without the commands' output unless one failed. */
export interface SetupView {
  status: 'ok' | 'failed' | 'skipped' | 'pending';
  source?: 'config' | 'detected' | 'none';
  note?: string;
  copied?: string[];
  commands?: { command: string; exit_code: number | null; timed_out: boolean; duration_ms: number; output?: string }[];
  duration_ms?: number;
}

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
  /** The machine it runs or ran on: its worker's name, else its hub's host name (docs/workers-plan.md). */
  host: string;
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
  /** What the agent may do (src/roles): implementer, reviewer, planner or a role of .overseer/roles/. */
  role: string;
  depends_on: string[];
  priority: number;
  attempts: AttemptSummary[];
  /** Open health warnings (stalled, turns_high, budget_high, time_high, long_running, commands_failed); only when there are some. */
  warnings?: { kind: string; detail: string; raised_at: string }[];
  /** Worktree bootstrap (worktree jobs): copied files, setup commands and their time (src/git/bootstrap.ts). */
  setup?: SetupView;
  /** Its branch was merged (overseer merge / merge_branch, docs/merge.md): into which branch, how, the new tip, when. */
  merged?: { into: string; mode: string; commit: string; at: string };
  /** Its merge failed (checks or a conflict) and it was or may be sent back to its agent (src/branches/sendBack.ts): rounds taken of the bound, where it stands (failed | out | merging | asked | merged | stopped), why, the request to the person at the bound. */
  send_back?: { round: number; max: number; status: string; reason: string; request_id?: string };
  /** Files its branch and another live branch both change (the conflict guard, docs/worktrees.md). */
  overlaps?: { with: string; title: string; files: string[]; locks_conflict: boolean }[];
  /** When the child last printed anything, and what it last did (running jobs). */
  last_event_at?: string | null;
  last_activity?: string | null;
}
