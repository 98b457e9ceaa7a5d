// The house budget, as pure decisions (docs/budgets.md). Which budgets a job counts against —
// the hub's own (`budgetUsd`), one per label it carries (`labelBudgets`), the subtree budget
// of every ancestor spawned with `budget_usd`, and the budget of the script run it works for
// (run_script's `budget_usd`, docs/scripts.md) — what a new job is expected to cost (the median of
// finished jobs like it, else a per-model fallback), whether its reservation fits, and the words
// that say why not. No I/O: src/store/sql/budgets.ts reads the numbers, src/money/budgets.ts
// applies the decisions.

/** The statuses of a job that may still spend (a reservation counts only while its job has one and is unreleased). */
export const LIVE_STATUSES = ['queued', 'waiting', 'running', 'frozen', 'needs_input'] as const;

/** The script runs named by `run:<id>` labels. */
export function runIdsOf(labels: readonly string[]): string[] {
  return labels.filter((l) => l.startsWith('run:')).map((l) => l.slice(4));
}

/** Which kind of budget, and what it covers. */
export type BudgetKind = 'house' | 'label' | 'subtree' | 'run';

/** A budget that applies to a job. `key`: the label, the job id of the subtree's root, or the script run's id (its agents carry the label `run:<id>`). */
export interface BudgetRef {
  kind: BudgetKind;
  key: string;
  limitUsd: number;
  /** The subtree root's or the run's title (for messages). */
  title?: string;
}

/** What a budget's scope holds now. */
export interface BudgetUse {
  /** The jobs' own spending (live for running jobs: the supervisor writes it as it grows). */
  jobsUsd: number;
  /** The hub's own model runs for those jobs (retry diagnosis, KB triage). */
  hubUsd: number;
  /** Reserved and not yet spent by live jobs (per job: its reservation minus what it spent since). */
  reservedUsd: number;
  /** How many live jobs hold those reservations. */
  reservedJobs: number;
}

export interface BudgetState extends BudgetRef, BudgetUse {}

/** An ancestor of a job, nearest first. */
export interface Ancestor {
  id: string;
  title: string;
  budget_usd: number | null;
}

/** Slack for float sums (fractions of a micro-dollar are not a budget decision). */
const EPS = 1e-9;

/**
 * The budgets a job counts against: the subtree budgets of `ancestors` (nearest first; for a
 * running job, the job itself first: its budget_usd covers it and all it spawns), then the
 * budgets of the script runs it works for (`runs`), then one per label with a configured budget,
 * then the house budget.
 */
export function applicableBudgets(o: {
  houseUsd?: number;
  labelBudgets: Readonly<Record<string, number>>;
  labels: readonly string[];
  ancestors: readonly Ancestor[];
  runs?: readonly { id: string; limitUsd: number; title?: string }[];
}): BudgetRef[] {
  const out: BudgetRef[] = [];
  for (const a of o.ancestors) if (a.budget_usd !== null) out.push({ kind: 'subtree', key: a.id, limitUsd: a.budget_usd, title: a.title });
  for (const r of o.runs ?? []) out.push({ kind: 'run', key: r.id, limitUsd: r.limitUsd, ...(r.title ? { title: r.title } : {}) });
  for (const l of [...new Set(o.labels)]) {
    const v = Object.hasOwn(o.labelBudgets, l) ? o.labelBudgets[l] : undefined;
    if (v !== undefined) out.push({ kind: 'label', key: l, limitUsd: v });
  }
  if (o.houseUsd !== undefined) out.push({ kind: 'house', key: 'house', limitUsd: o.houseUsd });
  return out;
}

export const spentOf = (u: BudgetUse): number => u.jobsUsd + u.hubUsd;

/** Would reserving `askUsd` more take this budget past its limit? */
export function wouldExceed(s: BudgetState, askUsd: number): boolean {
  return spentOf(s) + s.reservedUsd + askUsd > s.limitUsd + EPS;
}

/** Has what was spent in this budget's scope gone past its limit (reservations do not count)? */
export function isCrossed(s: BudgetRef & Pick<BudgetUse, 'jobsUsd' | 'hubUsd'>): boolean {
  return s.jobsUsd + s.hubUsd > s.limitUsd + EPS;
}

/** The budgets a reservation of `askUsd` would exceed, in the order given (nearest first). */
export function refusals(states: readonly BudgetState[], askUsd: number): BudgetState[] {
  return states.filter((s) => wouldExceed(s, askUsd));
}

// ---- the estimate ------------------------------------------------------------------------

/** Finished jobs a median is taken over (the most recent ones). */
export const ESTIMATE_SAMPLE = 50;

/**
 * A typical agent job's tokens, priced with the model's own price when nothing like it has
 * finished yet: ~250k input and 25k output tokens (a few dozen tool turns).
 */
export const TYPICAL_JOB_TOKENS = { input: 250_000, output: 25_000, cachedInput: 0, cacheCreation: 0 } as const;

/** The fallback for a model without a known price (or the CLI's default model, unnamed). */
export const UNPRICED_MODEL_USD = 2;

export interface Estimate {
  usd: number;
  /** How it was made, for messages and get_agent. */
  basis: string;
}

/** The median of some numbers (the mean of the middle two for an even count); undefined for none. */
export function median(xs: readonly number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const usd4 = (v: number): string => `$${v.toFixed(4)}`;

/**
 * What a new job of this provider, model and template is expected to cost: the median actual
 * cost of finished jobs of the same model and template, else of the same model (any template),
 * else the model's price of a typical job (`typicalUsd`, null when the model has no known
 * price: UNPRICED_MODEL_USD). Never more than the job's own budget_usd (`capUsd`): it is
 * stopped there.
 */
export function estimateCost(o: {
  provider: string;
  model: string | null;
  template: string | null;
  sameModelAndTemplate: readonly number[];
  sameModel: readonly number[];
  typicalUsd: number | null;
  capUsd?: number | null;
}): Estimate {
  const what = `${o.provider} ${o.model ?? '(default model)'}`;
  let e: Estimate;
  const m1 = o.template === null ? undefined : median(o.sameModelAndTemplate);
  const m2 = median(o.sameModel);
  if (m1 !== undefined) e = { usd: m1, basis: `median of ${o.sameModelAndTemplate.length} finished ${what} job(s) of template ${o.template}` };
  else if (m2 !== undefined) e = { usd: m2, basis: `median of ${o.sameModel.length} finished ${what} job(s)` };
  else if (o.typicalUsd !== null) e = { usd: o.typicalUsd, basis: `no finished ${what} job yet: a typical job (${TYPICAL_JOB_TOKENS.input / 1000}k input, ${TYPICAL_JOB_TOKENS.output / 1000}k output tokens) at its price` };
  else e = { usd: UNPRICED_MODEL_USD, basis: `no finished ${what} job yet and no price known for it: the fallback ${usd4(UNPRICED_MODEL_USD)}` };
  if (o.capUsd !== null && o.capUsd !== undefined && o.capUsd < e.usd) e = { usd: Math.max(0, o.capUsd), basis: `its budget_usd (${e.basis}: ${usd4(e.usd)})` };
  return { usd: Math.max(0, e.usd), basis: e.basis };
}

// ---- words -------------------------------------------------------------------------------

/** The budget named as a person reads it. */
export function budgetName(b: BudgetRef): string {
  if (b.kind === 'house') return 'the house budget (budgetUsd / OVERSEER_BUDGET_USD)';
  if (b.kind === 'label') return `the budget of label ${JSON.stringify(b.key)} (labelBudgets / OVERSEER_LABEL_BUDGETS)`;
  if (b.kind === 'run') return `the budget of script run ${b.key}${b.title ? ` ${JSON.stringify(b.title)}` : ''} (run_script's budget_usd, covering its agents and what they spawn)`;
  return `the subtree budget of job ${b.key}${b.title ? ` ${JSON.stringify(b.title)}` : ''} (its budget_usd, covering it and everything it spawns)`;
}

/** A budget's numbers, for results and events. */
export function budgetFacts(s: BudgetState): Record<string, unknown> {
  return {
    kind: s.kind, key: s.key, ...(s.title ? { title: s.title } : {}), limit_usd: s.limitUsd,
    spent_usd: round(spentOf(s)), hub_usd: round(s.hubUsd), reserved_usd: round(s.reservedUsd), reserved_jobs: s.reservedJobs,
  };
}

const round = (v: number): number => Math.round(v * 1e6) / 1e6;

/** What to do about a refusal, by who is asking and which budget refused. */
function remedy(b: BudgetRef, caller: 'lead' | 'agent'): string {
  const wait = 'wait for running jobs to end (each releases what it reserved)';
  if (b.kind === 'run') {
    // The lead's side is the script itself (its agent() calls spawn as the lead's); an agent is one of the run's agents spawning a sub-agent.
    return caller === 'agent'
      ? `Do the work yourself, ${wait}, pass a smaller budget_usd so the new agent reserves less, or finish and report that the run's budget is spent.`
      : 'The script can catch this (e.code === "budget_exceeded"): wait for the run\'s running agents to end (each releases what it reserved), pass agent() a smaller budget_usd so it reserves less, or run the script again with a larger budget_usd.';
  }
  if (b.kind === 'subtree') {
    return caller === 'agent'
      ? `Do the work yourself, ${wait}, pass a smaller budget_usd so the new agent reserves less, or finish and report that the budget is spent.`
      : `${wait[0]!.toUpperCase()}${wait.slice(1)}, cancel some of that subtree (cancel_agent), or pass a smaller budget_usd so the new agent reserves less.`;
  }
  const key = b.kind === 'house' ? 'budgetUsd in .overseer/config.json or OVERSEER_BUDGET_USD' : `labelBudgets.${b.key} in .overseer/config.json or OVERSEER_LABEL_BUDGETS`;
  return caller === 'agent'
    ? `Do the work yourself, ${wait}, pass a smaller budget_usd so the new agent reserves less, or ask the lead (ask_lead) to raise the budget.`
    : `Raise it (${key}, then restart the hub: overseer stop; the next call starts it again), ${wait}, cancel some (cancel_agent), or pass a smaller budget_usd so the new agent reserves less.`;
}

/** The message of a refused spawn: which budget, its limit, what is spent, reserved and asked, what to do. */
export function refusalMessage(over: readonly BudgetState[], ask: Estimate, caller: 'lead' | 'agent', verb = 'spawning this agent'): string {
  const b = over[0]!;
  const total = spentOf(b) + b.reservedUsd + ask.usd;
  const lines = [
    `${verb[0]!.toUpperCase()}${verb.slice(1)} would exceed ${budgetName(b)}: limit ${usd4(b.limitUsd)}; spent ${usd4(spentOf(b))}`
      + `${b.hubUsd > 0 ? ` (of which ${usd4(b.hubUsd)} by the hub's diagnosis/triage runs)` : ''}`
      + `, reserved ${usd4(b.reservedUsd)} by ${b.reservedJobs} queued or running job(s), asked ${usd4(ask.usd)} (${ask.basis})`
      + ` — ${usd4(total)} in all, ${usd4(total - b.limitUsd)} over. Nothing was started.`,
  ];
  if (over.length > 1) lines.push(`It would also exceed ${over.slice(1).map(budgetName).join('; ')}.`);
  lines.push(remedy(b, caller));
  return lines.join(' ');
}

/** A live job named for "what is left running". */
export interface LiveJob {
  id: string;
  title: string;
  status: string;
}

/** The error of a job stopped because its spending crossed a budget, saying what is left running under it. */
export function crossedMessage(b: BudgetRef & Pick<BudgetUse, 'jobsUsd' | 'hubUsd'>, jobId: string, left: readonly LiveJob[], max = 10): string {
  const spent = b.jobsUsd + b.hubUsd;
  const names = left.slice(0, max).map((j) => `${j.id} ${JSON.stringify(j.title.slice(0, 60))} (${j.status})`);
  const more = left.length > max ? ` and ${left.length - max} more` : '';
  const todo = b.kind === 'subtree'
    ? 'Each of them is stopped too at its next model call while the budget stays spent: let them end or cancel them (cancel_agent), and give further work a budget of its own.'
    : 'Each of them is stopped too at its next model call while the budget stays spent: let them end or cancel them (cancel_agent), or raise the budget in the configuration and restart the hub.';
  return `stopped by the hub: ${budgetName(b)} is spent — ${usd4(spent)} of ${usd4(b.limitUsd)} — and this job's spending (${jobId}) crossed it. `
    + (left.length ? `Still running under that budget: ${names.join(', ')}${more}. ${todo}` : 'Nothing else is running under that budget.');
}
