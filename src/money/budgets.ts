// The house budget at work (docs/budgets.md). At spawn (and resume) `check` finds the budgets
// the job counts against — the hub's, its labels', every budgeted ancestor's subtree — and
// estimates its cost; the caller holds the reservation with `hold` in the same transaction as
// the job's row, so two spawns racing for the last dollars cannot both pass: `check` first takes
// the spawn lock (PostgreSQL: advisory class 2; SQLite: the transaction is BEGIN IMMEDIATE), on
// the asynchronous layer (src/store/sql/budgets.ts). While jobs run, every `progress` event
// (their live cost was just written) is checked against the same budgets: the job whose spending
// crossed one is stopped with failure_class `budget` through the runner. A job that settles
// releases its reservation and books what it spent, before its end is reported (the `job`
// listener returns its promise: Bus.emitSettled).
import type { HubContext } from '../services/context.js';
import { BudgetExceededError, InvalidInputError } from '../errors.js';
import type { Q } from '../store/sql/tx.js';
import { transact } from '../store/sql/tx.js';
import {
  ancestorsOf, finishedCostsOf, holdReservation, liveIn, lockSpawns, releaseReservation, reservationOf, reservationsOf, runLabelsUp, spentIn, strayReservations, useOf,
} from '../store/sql/budgets.js';
import { addEvent, getJob } from '../store/sql/jobs.js';
import type { BudgetReservationsTable } from '../store/sql/schema.js';
import {
  applicableBudgets, budgetFacts, budgetName, crossedMessage, estimateCost, isCrossed, refusalMessage, refusals,
  ESTIMATE_SAMPLE, LIVE_STATUSES, runIdsOf, TYPICAL_JOB_TOKENS, type BudgetRef, type BudgetState, type Estimate,
} from './budget.js';

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
  /** A script run's own budget (run_script's budget_usd), if it has one (src/scripts/view.ts scriptRunBudget), read through `q`. */
  runBudget: (q: Q, runId: string) => Promise<{ limitUsd: number; title: string } | undefined>;
}

const SETTLED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);
const RUNNING = new Set(['running', 'needs_input']);

export class Budgets {
  /** Jobs already told to stop for a budget (their attempt has not ended yet). */
  private readonly stopping = new Set<string>();
  /** The budgets each running job counts against (its ancestors and labels do not change). */
  private readonly refsOf = new Map<string, BudgetRef[]>();
  private readonly detach: (() => void)[] = [];

  constructor(private readonly ctx: HubContext, private readonly d: BudgetDeps) {}

  /** The budgets a new job with this parent and these labels counts against. */
  async applicable(q: Q, parentId: string | null, labels: readonly string[]): Promise<BudgetRef[]> {
    const c = this.ctx.config;
    const up = (await runLabelsUp(q, parentId)).flatMap((l) => runIdsOf(JSON.parse(l) as string[]));
    return applicableBudgets({ houseUsd: c.budgetUsd, labelBudgets: c.labelBudgets, labels, ancestors: await ancestorsOf(q, parentId, true), runs: await this.runs(q, [...runIdsOf(labels), ...up]) });
  }

  /** The budgets of these script runs, those that have one. */
  private async runs(q: Q, ids: readonly string[]): Promise<{ id: string; limitUsd: number; title: string }[]> {
    const out: { id: string; limitUsd: number; title: string }[] = [];
    for (const id of new Set(ids)) {
      const b = await this.d.runBudget(q, id);
      if (b) out.push({ id, ...b });
    }
    return out;
  }

  /** The models a job's reservation must cover: "auto" stands for every model it may be given. */
  private modelsOf(s: Pick<BudgetSpec, 'provider' | 'model'>): (string | null)[] {
    return (s.model === 'auto' ? this.d.autoModels(s.provider) : undefined) ?? [s.model];
  }

  /** The estimate, read through the layer (inside the spawn's transaction). */
  async estimateIn(q: Q, s: Pick<BudgetSpec, 'provider' | 'model' | 'template' | 'budgetUsd' | 'baseCostUsd'>): Promise<Estimate> {
    const byModel = new Map<string | null, { sameModelAndTemplate: number[]; sameModel: number[] }>();
    for (const m of this.modelsOf(s)) {
      byModel.set(m, { sameModelAndTemplate: s.template === null ? [] : await finishedCostsOf(q, ESTIMATE_SAMPLE, s.provider, m, s.template), sameModel: await finishedCostsOf(q, ESTIMATE_SAMPLE, s.provider, m) });
    }
    return this.estimateFrom(s, (m) => byModel.get(m)!);
  }

  private estimateFrom(s: Pick<BudgetSpec, 'provider' | 'model' | 'template' | 'budgetUsd' | 'baseCostUsd'>, costs: (model: string | null) => { sameModelAndTemplate: number[]; sameModel: number[] }): Estimate {
    const models = this.modelsOf(s);
    if (models.length > 1 || models[0] !== s.model) {
      const each = models.map((model) => this.estimateFrom({ ...s, model }, costs));
      const top = each.reduce((a, b) => (b.usd > a.usd ? b : a));
      return { usd: top.usd, basis: `model "auto", the dearest model it may be given: ${top.basis}` };
    }
    const launcher = this.ctx.launchers[s.provider as 'claude' | 'codex'];
    const cap = s.budgetUsd === null ? null : s.budgetUsd - (s.baseCostUsd ?? 0);
    return estimateCost({
      provider: s.provider, model: s.model, template: s.template, ...costs(s.model),
      typicalUsd: launcher?.priceCall?.(s.model ?? undefined, TYPICAL_JOB_TOKENS) ?? null,
      capUsd: cap,
    });
  }

  /**
   * Decide a reservation for a job about to be created or resumed, inside `trx`, the transaction
   * that writes the job: it takes the spawn lock first (PostgreSQL), so a concurrent spawn
   * decides after this one committed. No budget applies: undefined (nothing is reserved). Over a
   * budget: BudgetExceededError naming it, with what is spent, reserved and asked, and what to do.
   */
  async check(trx: Q, s: BudgetSpec, caller: 'lead' | 'agent', verb?: string): Promise<Reservation | undefined> {
    await lockSpawns(trx);
    const refs = await this.applicable(trx, s.parentId, s.labels);
    if (refs.length === 0) return undefined;
    this.checkPriced(s, refs);
    const ask = await this.estimateIn(trx, s);
    const states: BudgetState[] = [];
    for (const r of refs) states.push({ ...r, ...(await useOf(trx, r)) });
    return this.decide(s, ask, states, caller, verb);
  }

  private checkPriced(s: BudgetSpec, refs: BudgetRef[]): void {
    const launcher = this.ctx.launchers[s.provider as 'claude' | 'codex'];
    for (const model of this.modelsOf(s)) {
      if (launcher?.canPrice && !launcher.canPrice(model ?? undefined)) {
        throw new InvalidInputError(`${budgetName(refs[0]!)} cannot count what ${s.provider} model ${JSON.stringify(model ?? 'default')}${s.model === 'auto' ? ' (one model "auto" may choose)' : ''} spends: it has no known price. Name a priced model, or add a price for it (OVERSEER_CODEX_PRICES, e.g. {"${model ?? 'my-model'}":{"input":1.25,"output":10}}).`);
      }
    }
  }

  private decide(s: BudgetSpec, ask: Estimate, states: BudgetState[], caller: 'lead' | 'agent', verb?: string): Reservation {
    const over = refusals(states, ask.usd);
    if (over.length) {
      throw new BudgetExceededError(refusalMessage(over, ask, caller, verb), {
        budget: budgetFacts(over[0]!), asked_usd: round(ask.usd), estimate_basis: ask.basis, also_exceeded: over.slice(1).map(budgetFacts),
      });
    }
    return { ...ask, baseCostUsd: s.baseCostUsd ?? 0, budgets: states };
  }

  /** Hold a decided reservation for the job (its row exists now; same transaction as `check`). */
  async hold(trx: Q, jobId: string, r: Reservation, now: number): Promise<void> {
    await holdReservation(trx, jobId, r.usd, r.baseCostUsd, r.basis, now);
  }

  /** Listen: settled jobs release their reservation, progress is checked against the budgets. */
  async attach(): Promise<void> {
    await this.sweep();
    this.detach.push(this.ctx.bus.on('job', ({ jobId, status }) => {
      if (SETTLED.has(status)) return this.settled(jobId);
      // Queued again (a retry after another failure): its next attempt is checked afresh.
      if (status === 'queued') this.stopping.delete(jobId);
      return undefined;
    }));
    this.detach.push(this.ctx.bus.on('progress', ({ jobId }) => this.progressed(jobId)));
  }

  close(): void {
    for (const d of this.detach.splice(0)) d();
  }

  /** Release what jobs that settled while no hub listened still hold (reconcile at start). */
  async sweep(): Promise<void> {
    const now = this.ctx.clock.now();
    const ids = await strayReservations(this.ctx.sql.db);
    if (ids.length) await transact(this.ctx.sql.db, async (trx) => { for (const id of ids) await releaseReservation(trx, id, now); });
  }

  private async settled(jobId: string): Promise<void> {
    this.stopping.delete(jobId);
    this.refsOf.delete(jobId);
    try {
      await releaseReservation(this.ctx.sql.db, jobId, this.ctx.clock.now());
    } catch (err) {
      // Not lost: a reservation of a settled job counts for nothing, and the next start sweeps it.
      this.ctx.log.warn({ err, jobId }, 'releasing a budget reservation failed');
    }
  }

  /** A running job's spending moved: stop it if that took one of its budgets past the limit. */
  private async progressed(jobId: string): Promise<void> {
    if (this.stopping.has(jobId)) return;
    const q = this.ctx.sql.db;
    try {
      const j = await getJob(q, jobId);
      if (!j || !RUNNING.has(j.status)) return;
      let refs = this.refsOf.get(jobId);
      if (!refs) {
        const c = this.ctx.config;
        const runs = (await runLabelsUp(q, jobId)).flatMap((l) => runIdsOf(JSON.parse(l) as string[]));
        refs = applicableBudgets({ houseUsd: c.budgetUsd, labelBudgets: c.labelBudgets, labels: JSON.parse(j.labels_json) as string[], ancestors: await ancestorsOf(q, jobId, true), runs: await this.runs(q, runs) });
        this.refsOf.set(jobId, refs);
      }
      for (const r of refs) {
        const spent = await spentIn(q, r);
        if (!isCrossed({ ...r, ...spent })) continue;
        const left = (await liveIn(q, r)).filter((x) => x.id !== jobId);
        if (this.stopping.has(jobId)) return; // another check of this job stopped it meanwhile
        const error = crossedMessage({ ...r, ...spent }, jobId, left);
        if (!this.d.actions.stop(jobId, error)) return;
        this.stopping.add(jobId);
        const now = this.ctx.clock.now();
        await addEvent(q, jobId, now, 'budget_stop', { budget: r.kind, key: r.key, limit_usd: r.limitUsd, spent_usd: round(spent.jobsUsd + spent.hubUsd), left_running: left.map((x) => x.id) });
        this.ctx.log.warn({ jobId, budget: r.kind, key: r.key, limit: r.limitUsd, spent: spent.jobsUsd + spent.hubUsd, left: left.length }, 'budget crossed: stopping the job');
        return;
      }
    } catch (err) {
      this.ctx.log.warn({ err, jobId }, 'budget check of a running job failed');
    }
  }


  /** The estimate of a job like this one (the dispatch runs' planning), read through the layer. */
  async estimate(s: Pick<BudgetSpec, 'provider' | 'model' | 'template' | 'budgetUsd' | 'baseCostUsd'>, q: Q = this.ctx.sql.db): Promise<Estimate> {
    return this.estimateIn(q, s);
  }

  /** A job's reservation for get_agent / list_agents: what it reserved, and while held what is left of it (JobService.withHealth). */
  async view(q: Q, j: { id: string; status: string; cost_usd: number }): Promise<Record<string, unknown> | undefined> {
    return reservationView(await reservationOf(q, j.id), j);
  }

  /** The views of a page of jobs (list_agents), their reservations read in one statement. */
  async views(q: Q, jobs: readonly { id: string; status: string; cost_usd: number }[]): Promise<Map<string, Record<string, unknown> | undefined>> {
    const rs = await reservationsOf(q, jobs.map((j) => j.id));
    return new Map(jobs.map((j) => [j.id, reservationView(rs.get(j.id), j)]));
  }
}

function reservationView(r: BudgetReservationsTable | undefined, j: { status: string; cost_usd: number }): Record<string, unknown> | undefined {
  if (!r) return undefined;
  const held = r.released_at === null && (LIVE_STATUSES as readonly string[]).includes(j.status);
  const cost = j.cost_usd;
  return held
    ? { reserved_usd: round(r.amount_usd), left_usd: round(Math.max(0, r.amount_usd - (cost - r.base_cost_usd))), basis: r.basis }
    : { reserved_usd: round(r.amount_usd), released: true, booked_usd: round(r.booked_usd ?? Math.max(0, cost - r.base_cost_usd)), basis: r.basis };
}

const round = (v: number): number => Math.round(v * 1e6) / 1e6;
