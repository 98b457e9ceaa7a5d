// What the crew cost, summed every way the dashboard's Usage panel and `overseer usage` show it:
// by model, provider, label, workflow, template, project, day and kind of run — every agent attempt (the `attempts` rows, whose sums
// are each job's cost) and every run the hub made itself (`usage`: the retry diagnosis and the
// KB triage). Read-only; one pass over the rows (src/store/sql/usage.ts usageRuns, on either database), grouped here. A run whose model has no known
// price counts its tokens but no dollars: a bucket of only such runs has cost_usd null
// ("unpriced", never $0), and any bucket with one is marked cost_unknown (its cost a lower bound).
import type { Q } from '../store/sql/tx.js';
import { usageRuns, type UsageRun } from '../store/sql/usage.js';
import { USAGE_DIMENSIONS, type UsageDimension } from '../contract/usageDimensions.js';
import type { UsageInput } from '../contract/usage.js';
import { parseSince } from '../search/query.js';

export type RunKind = 'agent' | 'diagnosis' | 'triage' | 'classification';

export interface UsageBucket {
  key: string;
  /** A readable name when the key is an id (a workflow's title). */
  label?: string;
  /** by_model: the provider whose CLI ran the model (Codex and Claude side by side). */
  provider?: string;
  /** null when none of its runs could be priced (an unknown model): unpriced, not $0. */
  cost_usd: number | null;
  /** Some of it could not be priced (an unknown model): cost_usd is a lower bound. */
  cost_unknown: boolean;
  /** How many of its runs had no price. */
  unpriced_runs: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  /** Model runs (attempts, diagnoses, triages). */
  runs: number;
  /** Distinct jobs they served. */
  jobs: number;
}

export interface UsageReport {
  since: string | null;
  /** Only this project's runs (null: every run). */
  project: string | null;
  totals: UsageBucket;
  by_model: UsageBucket[];
  by_provider: UsageBucket[];
  /** A job with several labels counts under each (these do not add up to the total). */
  by_label: UsageBucket[];
  by_workflow: UsageBucket[];
  /** By the template the job was spawned with ("(no template)" for none). */
  by_template: UsageBucket[];
  /** By the job's project ("(no project)" for none; the hub's runs for no job too). */
  by_project: UsageBucket[];
  /** Days in the page's time zone (`tzOffsetMin` as Date#getTimezoneOffset gives it), oldest first. */
  by_day: UsageBucket[];
  by_kind: UsageBucket[];
}

type Run = UsageRun;

const empty = (key: string, label?: string): UsageBucket => ({
  key, ...(label ? { label } : {}), cost_usd: 0, cost_unknown: false, unpriced_runs: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_creation_tokens: 0, runs: 0, jobs: 0,
});

/** Cost and tokens since `sinceMs` (all time when undefined), of one project or all, grouped. */
export async function usageReport(q: Q, o: { sinceMs?: number; tzOffsetMin?: number; project?: string } = {}): Promise<UsageReport> {
  const runs = await usageRuns(q, o.sinceMs ?? 0, o.project ?? null);
  const groups = new Map<string, Map<string, { b: UsageBucket; jobs: Set<string> }>>();
  const add = (dim: string, key: string, r: Run, label?: string, provider?: string): void => {
    let g = groups.get(dim);
    if (!g) groups.set(dim, (g = new Map()));
    let e = g.get(key);
    if (!e) g.set(key, (e = { b: { ...empty(key, label), ...(provider ? { provider } : {}) }, jobs: new Set() }));
    const b = e.b;
    b.cost_usd = (b.cost_usd ?? 0) + r.cost_usd;
    b.cost_unknown ||= !!r.cost_unknown;
    if (r.cost_unknown) b.unpriced_runs++;
    b.input_tokens += r.input_tokens;
    b.output_tokens += r.output_tokens;
    b.cache_read_tokens += r.cache_read_tokens;
    b.cache_creation_tokens += r.cache_creation_tokens;
    b.runs++;
    if (r.job_id) e.jobs.add(r.job_id);
  };
  const shift = -(o.tzOffsetMin ?? 0) * 60_000;
  for (const r of runs) {
    add('total', 'total', r);
    add('model', r.model ?? `${r.provider ?? 'claude'} (default model)`, r, undefined, r.provider ?? 'claude');
    add('provider', r.provider ?? 'claude', r);
    const labels = r.labels_json ? (JSON.parse(r.labels_json) as string[]) : [];
    for (const l of labels.length ? labels : ['(no label)']) add('label', l, r);
    add('workflow', r.workflow_id ?? '(no workflow)', r, r.workflow_title ?? undefined);
    add('template', r.template ?? '(no template)', r);
    add('project', r.project ?? '(no project)', r);
    add('day', new Date(r.at + shift).toISOString().slice(0, 10), r);
    add('kind', r.kind, r);
  }
  const list = (dim: string, order: 'cost' | 'key' = 'cost'): UsageBucket[] => [...(groups.get(dim)?.values() ?? [])]
    .map((e) => ({ ...e.b, cost_usd: e.b.unpriced_runs === e.b.runs ? null : round(e.b.cost_usd ?? 0), jobs: e.jobs.size }))
    .sort(order === 'key' ? (a, b) => (a.key < b.key ? -1 : 1) : (a, b) => (b.cost_usd ?? -1) - (a.cost_usd ?? -1) || (a.key < b.key ? -1 : 1));
  return {
    since: o.sinceMs ? new Date(o.sinceMs).toISOString() : null,
    project: o.project ?? null,
    totals: list('total')[0] ?? empty('total'),
    by_model: list('model'),
    by_provider: list('provider'),
    by_label: list('label'),
    by_workflow: list('workflow'),
    by_template: list('template'),
    by_project: list('project'),
    by_day: list('day', 'key'),
    by_kind: list('kind'),
  };
}

const round = (v: number): number => Math.round(v * 1e6) / 1e6;

// The dimensions are the usage tool's contract (src/contract/usage.ts).
export { USAGE_DIMENSIONS, type UsageDimension };

/** The report, or with `by` one dimension of it: what the usage tool and `overseer usage --json` print. */
export function usageAnswer(r: UsageReport, by: UsageDimension | undefined): UsageReport | { since: UsageReport['since']; project: UsageReport['project']; by: UsageDimension; totals: UsageReport['totals']; buckets: UsageBucket[] } {
  return by ? { since: r.since, project: r.project, by, totals: r.totals, buckets: bucketsBy(r, by) } : r;
}

/** The usage tool: the report since `i.since` ("24h" or an ISO time, from `now`), of `i.project`, by `i.by`. */
export async function usageOf(q: Q, i: UsageInput, now: number): Promise<ReturnType<typeof usageAnswer>> {
  return usageAnswer(await usageReport(q, { sinceMs: i.since === undefined ? undefined : parseSince(i.since, now), project: i.project }), i.by);
}

/** The buckets of one dimension. */
export function bucketsBy(r: UsageReport, by: UsageDimension): UsageBucket[] {
  return r[`by_${by}`];
}
