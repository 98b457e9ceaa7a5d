// `overseer usage` as text: one table per dimension, a row per bucket and one for all, with
// tokens, cost, runs and jobs. Cost: "unpriced" when none of a bucket's runs had a price (never
// $0), "≥ $x" when some had none (a lower bound).
import type { UsageBucket, UsageDimension, UsageReport } from './usageReport.js';

/** A plain fixed-width table, numbers right-aligned (columns from `right` on). */
function grid(rows: string[][], right: number): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i >= right ? c.padStart(widths[i]!) : i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
}

export function costText(b: Pick<UsageBucket, 'cost_usd' | 'cost_unknown'>): string {
  if (b.cost_usd === null) return 'unpriced';
  return `${b.cost_unknown ? '≥ ' : ''}$${b.cost_usd.toFixed(4)}`;
}

const n = (v: number): string => v.toLocaleString('en-US');

const TITLES: Record<UsageDimension, string> = {
  model: 'MODEL', provider: 'PROVIDER', label: 'LABEL', workflow: 'WORKFLOW', template: 'TEMPLATE', project: 'PROJECT', day: 'DAY (UTC)', kind: 'KIND',
};

/** The table of one dimension's buckets, with a last row for all of them (not for labels: a job counts under each). */
export function usageTable(by: UsageDimension, buckets: readonly UsageBucket[], totals?: UsageBucket): string {
  const lead = by === 'model' ? [TITLES[by], 'PROVIDER'] : [TITLES[by]];
  const row = (b: UsageBucket, name: string[]): string[] => [...name, n(b.input_tokens), n(b.output_tokens), n(b.cache_read_tokens), n(b.cache_creation_tokens), costText(b), String(b.runs), String(b.jobs)];
  const rows = [
    [...lead, 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'COST', 'RUNS', 'JOBS'],
    ...buckets.map((b) => row(b, by === 'model' ? [b.key, b.provider ?? '-'] : [b.label ? `${b.key} (${b.label.slice(0, 40)})` : b.key])),
    ...(totals && by !== 'label' && buckets.length > 1 ? [row(totals, by === 'model' ? ['all', ''] : ['all'])] : []),
  ];
  return grid(rows, lead.length);
}

/** What `overseer usage` prints: the scope, the dimension's table(s), and a note when costs are lower bounds. */
export function usageText(r: Pick<UsageReport, 'since' | 'project' | 'totals'>, tables: { by: UsageDimension; buckets: readonly UsageBucket[] }[]): string {
  const scope = `${r.project !== null ? `project ${r.project}` : 'all projects'}, ${r.since ? `since ${r.since}` : 'all time'}`;
  const t = r.totals;
  if (t.runs === 0) return `Usage (${scope}): no model runs.\n`;
  const head = `Usage (${scope}): ${costText(t)} over ${t.runs} run(s) of ${t.jobs} job(s)`;
  const body = tables.map((x) => usageTable(x.by, x.buckets, t)).join('\n\n');
  const note = t.cost_unknown
    ? `\n\n${t.unpriced_runs} run(s) used a model without a known price: their tokens are counted, their cost is not, so the costs marked ≥ are lower bounds. Add a price (OVERSEER_CODEX_PRICES for Codex models) to count them.`
    : '';
  return `${head}\n\n${body}${note}\n`;
}
