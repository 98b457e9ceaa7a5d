// The house budget at work (docs/budgets.md). At spawn (and resume) `check` finds the budgets
// the job counts against — the hub's, its labels', every budgeted ancestor's subtree — and
// estimates its cost; the caller holds the reservation with `hold` in the same transaction as
// the job's row, so two spawns racing for the last dollars cannot both pass (better-sqlite3 is
// synchronous, and the transaction is BEGIN IMMEDIATE against other processes). While jobs
// run, every `progress` event (their live cost was just written) is checked against the same
// budgets: the job whose spending crossed one is stopped with failure_class `budget` through the
// runner. A job that settles releases its reservation and books what it spent.
import type { HubContext } from '../services/context.js';
import { BudgetExceededError, InvalidInputError } from '../errors.js';
import { tx } from '../store/db.js';
import {
  applicableBudgets, budgetFacts, budgetName, crossedMessage, estimateCost, isCrossed, refusalMessage, refusals,
  TYPICAL_JOB_TOKENS, type BudgetRef, type BudgetState, type Estimate,
} from './budget.js';
import { BudgetStore, LIVE_STATUSES, runIdsOf } from './budgetStore.js';

/** What a job to be created (or resumed) is, as far as budgets go. */
export interface BudgetSpec {
  parentId: string | null;
  provider: string;
  model: string | null;
  template: string | null;
  labels: readonly string[];
  /** The job's own budget_usd (the most it and its sub-agents may spend): caps its estimate. */
  budgetUsd: number | null;
  /** A resumed job's cost so far: what it spends after counts against the new reservation. */
  baseCostUsd?: number;
}

/** A reservation decided by `check`, to be held once the job's row exists. */
export interface Reservation extends Estimate {
  baseCostUsd: number;
  budgets: BudgetState[];
}

/** What the budgets need of the job engine (the live children, src/services/children.ts). */
export interface BudgetActions {
  /** Stop a running job with failure_class `budget` and this error; false if it has no process to stop. */
  stop(jobId: string, error: string): boolean;
}

/** What Budgets is built with besides the context (src/compose.ts builds it). */
export interface BudgetDeps {
  actions: BudgetActions;
  /** The models a job with model "auto" may end up on, per provider (src/models/choice.ts autoModels); undefined without tiers. */
  autoModels: (provider: string) => (string | null)[] | undefined;
  /** A script run's own budget (run_script's budget_usd), if it has one (src/scripts/view.ts scriptRunBudget). */
  runBudget: (runId: string) => { limitUsd: number; title: string } | undefined;
}

const SETTLED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
const RUNNING = new Set(['running', 'needs_input']);

export class Budgets {
  readonly store: BudgetStore;
  /** Jobs already told to stop for a budget (their attempt has not ended yet). */
  private readonly stopping = new Set<string>();
  /** The budgets each running job counts against (its ancestors and labels do not change). */
  private readonly refsOf = new Map<string, BudgetRef[]>();
  private readonly detach: (() => void)[] = [];

  constructor(private readonly ctx: HubContext, private readonly d: BudgetDeps) {
    this.store = new BudgetStore(ctx.db);
  }

  /** The budgets a new job with this parent and these labels counts against. */
  applicable(parentId: string | null, labels: readonly string[]): BudgetRef[] {
    const c = this.ctx.config;
    return applicableBudgets({ houseUsd: c.budgetUsd, labelBudgets: c.labelBudgets, labels, ancestors: this.store.ancestors(parentId, true), runs: this.runs([...runIdsOf(labels), ...this.store.runsOf(parentId)]) });
  }

  /** The budgets of these script runs, those that have one. */
  private runs(ids: readonly string[]): { id: string; limitUsd: number; title: string }[] {
    return [...new Set(ids)].flatMap((id) => { const b = this.d.runBudget(id); return b ? [{ id, ...b }] : []; });
  }

  /** The models a job's reservation must cover: "auto" stands for every model it may be given. */
  private modelsOf(s: Pick<BudgetSpec, 'provider' | 'model'>): (string | null)[] {
    return (s.model === 'auto' ? this.d.autoModels(s.provider) : undefined) ?? [s.model];
  }

  /** The estimate of a job like this one; for model "auto" the dearest of the models it may be given. */
  estimate(s: Pick<BudgetSpec, 'provider' | 'model' | 'template' | 'budgetUsd' | 'baseCostUsd'>): Estimate {
    const models = this.modelsOf(s);
    if (models.length > 1 || models[0] !== s.model) {
      const each = models.map((model) => this.estimate({ ...s, model }));
      const top = each.reduce((a, b) => (b.usd > a.usd ? b : a));
      return { usd: top.usd, basis: `model "auto", the dearest model it may be given: ${top.basis}` };
    }
    const launcher = this.ctx.launchers[s.provider as 'claude' | 'codex'];
    const cap = s.budgetUsd === null ? null : s.budgetUsd - (s.baseCostUsd ?? 0);
    return estimateCost({
      provider: s.provider, model: s.model, template: s.template,
      sameModelAndTemplate: s.template === null ? [] : this.store.finishedCosts(s.provider, s.model, s.template),
      sameModel: this.store.finishedCosts(s.provider, s.model),
      typicalUsd: launcher?.priceCall?.(s.model ?? undefined, TYPICAL_JOB_TOKENS) ?? null,
      capUsd: cap,
    });
  }

  /**
   * Decide a reservation for a job about to be created or resumed; call inside the transaction
   * that writes the job. No budget applies: undefined (nothing is reserved). Over a budget:
   * BudgetExceededError naming it, with what is spent, reserved and asked, and what to do.
   */
  check(s: BudgetSpec, caller: 'lead' | 'agent', verb?: string): Reservation | undefined {
    const refs = this.applicable(s.parentId, s.labels);
    if (refs.length === 0) return undefined;
    const launcher = this.ctx.launchers[s.provider as 'claude' | 'codex'];
    for (const model of this.modelsOf(s)) {
      if (launcher?.canPrice && !launcher.canPrice(model ?? undefined)) {
        throw new InvalidInputError(`${budgetName(refs[0]!)} cannot count what ${s.provider} model ${JSON.stringify(model ?? 'default')}${s.model === 'auto' ? ' (one model "auto" may choose)' : ''} spends: it has no known price. Name a priced model, or add a price for it (OVERSEER_CODEX_PRICES, e.g. {"${model ?? 'my-model'}":{"input":1.25,"output":10}}).`);
      }
    }
    const ask = this.estimate(s);
    const states: BudgetState[] = refs.map((r) => ({ ...r, ...this.store.use(r) }));
    const over = refusals(states, ask.usd);
    if (over.length) {
      throw new BudgetExceededError(refusalMessage(over, ask, caller, verb), {
        budget: budgetFacts(over[0]!), asked_usd: round(ask.usd), estimate_basis: ask.basis, also_exceeded: over.slice(1).map(budgetFacts),
      });
    }
    return { ...ask, baseCostUsd: s.baseCostUsd ?? 0, budgets: states };
  }

  /** Hold a decided reservation for the job (its row exists now; same transaction as `check`). */
  hold(jobId: string, r: Reservation, now: number): void {
    this.store.hold(jobId, r.usd, r.baseCostUsd, r.basis, now);
  }

  /** Listen: settled jobs release their reservation, progress is checked against the budgets. */
  attach(): void {
    this.sweep();
    this.detach.push(this.ctx.bus.on('job', ({ jobId, status }) => {
      if (SETTLED.has(status)) this.settled(jobId);
      // Queued again (a retry after another failure): its next attempt is checked afresh.
      else if (status === 'queued') this.stopping.delete(jobId);
    }));
    this.detach.push(this.ctx.bus.on('progress', ({ jobId }) => this.progressed(jobId)));
  }

  close(): void {
    for (const d of this.detach.splice(0)) d();
  }

  /** Release what jobs that settled while no hub listened still hold (reconcile at start). */
  sweep(): void {
    const now = this.ctx.clock.now();
    const ids = this.store.strays();
    if (ids.length) tx(this.ctx.db, () => { for (const id of ids) this.store.release(id, now); });
  }

  private settled(jobId: string): void {
    this.stopping.delete(jobId);
    this.refsOf.delete(jobId);
    try {
      tx(this.ctx.db, () => this.store.release(jobId, this.ctx.clock.now()));
    } catch (err) {
      // Not lost: a reservation of a settled job counts for nothing, and the next start sweeps it.
      this.ctx.log.warn({ err, jobId }, 'releasing a budget reservation failed');
    }
  }

  /** A running job's spending moved: stop it if that took one of its budgets past the limit. */
  private progressed(jobId: string): void {
    if (this.stopping.has(jobId)) return;
    try {
      const j = this.ctx.store.get(jobId);
      if (!j || !RUNNING.has(j.status)) return;
      let refs = this.refsOf.get(jobId);
      if (!refs) {
        const c = this.ctx.config;
        refs = applicableBudgets({ houseUsd: c.budgetUsd, labelBudgets: c.labelBudgets, labels: JSON.parse(j.labels_json) as string[], ancestors: this.store.ancestors(jobId, true), runs: this.runs(this.store.runsOf(jobId)) });
        this.refsOf.set(jobId, refs);
      }
      for (const r of refs) {
        const spent = this.store.spent(r);
        if (!isCrossed({ ...r, ...spent })) continue;
        const left = this.store.live(r).filter((x) => x.id !== jobId);
        const error = crossedMessage({ ...r, ...spent }, jobId, left);
        if (!this.d.actions.stop(jobId, error)) return;
        this.stopping.add(jobId);
        const now = this.ctx.clock.now();
        this.ctx.store.addEvent(jobId, now, 'budget_stop', { budget: r.kind, key: r.key, limit_usd: r.limitUsd, spent_usd: round(spent.jobsUsd + spent.hubUsd), left_running: left.map((x) => x.id) });
        this.ctx.log.warn({ jobId, budget: r.kind, key: r.key, limit: r.limitUsd, spent: spent.jobsUsd + spent.hubUsd, left: left.length }, 'budget crossed: stopping the job');
        return;
      }
    } catch (err) {
      this.ctx.log.warn({ err, jobId }, 'budget check of a running job failed');
    }
  }

  /** A job's reservation for get_agent / list_agents: what it reserved, and while held what is left of it. */
  view(j: { id: string; status: string; cost_usd: number }): Record<string, unknown> | undefined {
    const r = this.store.get(j.id);
    if (!r) return undefined;
    const held = r.released_at === null && (LIVE_STATUSES as readonly string[]).includes(j.status);
    const cost = j.cost_usd;
    return held
      ? { reserved_usd: round(r.amount_usd), left_usd: round(Math.max(0, r.amount_usd - (cost - r.base_cost_usd))), basis: r.basis }
      : { reserved_usd: round(r.amount_usd), released: true, booked_usd: round(r.booked_usd ?? Math.max(0, cost - r.base_cost_usd)), basis: r.basis };
  }
}

const round = (v: number): number => Math.round(v * 1e6) / 1e6;
