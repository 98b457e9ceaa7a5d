// Model auto-choice (docs/models.md). A job spawned with `model: "auto"` (or under the
// configured default "auto") keeps that value until just before its first attempt; then the
// Runner asks `choose`, which runs the classifier on the small model, maps its tier to the
// provider's model, and writes — in one transaction — the job's model, its `model_choice`
// record (tier, reason, classifier model, duration, cost, fallback and why), a `model_chosen`
// event, the classifier's usage row (kind `classification`, linked to the job, so usage
// reports and budgets count it) and, when a budget reservation is held, lowers it from the
// estimate of the dearest candidate model (made at spawn) to the chosen model's. A retry or
// resume finds a concrete model on the row and never classifies again.
import { isoTime } from '../clock.js';
import { InvalidInputError } from '../errors.js';
import type { HubContext } from '../services/context.js';
import type { Config } from '../config.js';
import type { JobRow } from '../store/jobs.js';
import type { RunUsage } from '../money/usageStore.js';
import { transact, type Q } from '../store/sql/tx.js';
import { addEvent, updateJob } from '../store/sql/jobs.js';
import { addUsage } from '../store/sql/usage.js';
import { holdReservation, reservationOf } from '../store/sql/budgets.js';
import type { Budgets } from '../money/budgets.js';
import { CLASSIFIER_TASK_CHARS, runClassifier, type ClassifyRun } from './classifier.js';
import { AUTO_MODEL, candidateModels, fallbackModel, requestedModel, tiersFor, type Tier } from './tiers.js';

/** What was chosen for a job and why, as stored in jobs.model_choice_json. */
export interface ModelChoice {
  /** The tier the classifier chose; null when it fell back. */
  tier: Tier | null;
  /** The model the job runs on; null: the CLI's own default. */
  model: string | null;
  /** The classifier's reason, or why the classification failed. */
  reason: string;
  fallback: boolean;
  classifier_model: string;
  duration_ms: number;
  /** What the classification cost; null when unknown (e.g. a timeout), 0 when no run happened. */
  cost_usd: number | null;
  /** Epoch ms. */
  decided_at: number;
}

/** The choice as get_agent / list_agents show it. */
export function choiceView(json: string | null | undefined): Record<string, unknown> | undefined {
  if (!json) return undefined;
  try {
    const c = JSON.parse(json) as ModelChoice;
    return { ...c, decided_at: isoTime(c.decided_at) };
  } catch {
    return undefined;
  }
}

/** One line for status / logs: "auto → medium (sonnet): reason" or "auto → fallback (…): why". */
export function choiceLine(json: string | null | undefined): string | undefined {
  if (!json) return undefined;
  try {
    const c = JSON.parse(json) as ModelChoice;
    const model = c.model ?? 'the CLI default';
    return c.fallback ? `auto → fallback ${model}: ${c.reason}` : `auto → ${c.tier} ${model}: ${c.reason}`;
  } catch {
    return undefined;
  }
}

/** Every model an auto job of `provider` may run on (for the budget estimate); undefined without tiers. */
export function autoModels(config: Pick<Config, 'modelTiers' | 'defaultModel'>, provider: string): (string | null)[] | undefined {
  const tiers = tiersFor(provider, config.modelTiers);
  return tiers ? candidateModels(provider, tiers, config.defaultModel) : undefined;
}

export class ModelChooser {
  /** `budgets`: a held reservation is lowered to the chosen model's estimate. */
  constructor(private readonly ctx: HubContext, private readonly budgets: Budgets) {}

  private tiers(provider: string) {
    return tiersFor(provider, this.ctx.config.modelTiers);
  }

  /**
   * The model a spawn of `provider` asks for (its own, else the configured default), checked:
   * "auto" for a provider without tiers is an InvalidInputError (nothing is created yet).
   */
  requested(provider: string, model: string | undefined): string | undefined {
    const tiers = this.tiers(provider);
    const m = requestedModel(provider, model, this.ctx.config.defaultModel, tiers !== undefined);
    if (m === AUTO_MODEL && !tiers) {
      throw new InvalidInputError(`model "auto" needs model tiers for provider ${JSON.stringify(provider)}, and it has none (modelTiers.${provider} is null in the configuration). Name a model, or configure its tiers: modelTiers / OVERSEER_MODEL_TIERS, e.g. {"${provider}": {"small": "…", "medium": "…", "large": "…"}} (docs/models.md).`);
    }
    return m;
  }

  /** Every model an auto job of `provider` may run on (for the budget estimate); undefined without tiers. */
  candidates(provider: string): (string | null)[] | undefined {
    return autoModels(this.ctx.config, provider);
  }

  /** Choose the model of an auto job before its first attempt (`attempt`). Never throws. */
  async choose(job: JobRow, attempt: number, signal?: AbortSignal): Promise<void> {
    const { ctx } = this;
    const started = ctx.clock.now();
    const classifierModel = ctx.config.classifierModel;
    const tiers = this.tiers(job.provider);
    let run: ClassifyRun;
    try {
      run = tiers
        ? await runClassifier({
          bin: ctx.launchers.claude?.resolveBin(),
          prompt: ctx.prompts.render('model-classify', { title: job.title, task: job.prompt.slice(0, CLASSIFIER_TASK_CHARS) }),
          model: classifierModel,
          timeoutMs: ctx.config.classifierTimeoutS * 1000,
          env: ctx.childEnv,
          cwd: job.cwd,
          signal,
        })
        : { answer: { ok: false, why: `provider ${job.provider} has no model tiers (modelTiers.${job.provider})` } };
    } catch (err) {
      run = { answer: { ok: false, why: `the classification failed: ${(err as Error).message}` } };
    }
    const a = run.answer;
    const model = a.ok ? tiers![a.tier] : fallbackModel(job.provider, tiers, ctx.config.defaultModel);
    const now = ctx.clock.now();
    const choice: ModelChoice = {
      tier: a.ok ? a.tier : null,
      model,
      reason: a.ok ? a.reason : a.why,
      fallback: !a.ok,
      classifier_model: classifierModel,
      duration_ms: Math.max(0, now - started),
      cost_usd: run.usage ? run.usage.costUsd : 0,
      decided_at: now,
    };
    try {
      await this.record(job, attempt, choice, run.usage, now);
    } catch (err) {
      // The job must not run as "auto": at worst it runs on the fallback, unrecorded.
      ctx.log.error({ err, jobId: job.id }, 'recording the model choice failed');
      await updateJob(ctx.sql.db, job.id, { model }, now);
    }
    if (choice.fallback) ctx.log.warn({ jobId: job.id, why: choice.reason, model }, 'model auto-choice fell back');
    ctx.bus.emit('progress', { jobId: job.id });
  }

  private async record(job: JobRow, attempt: number, c: ModelChoice, usage: RunUsage | undefined, now: number): Promise<void> {
    const { ctx } = this;
    await transact(ctx.sql.db, async (trx) => {
      await updateJob(trx, job.id, { model: c.model, model_choice_json: JSON.stringify(c) }, now);
      if (usage) await addUsage(trx, { jobId: job.id, attempt, kind: 'classification', usage: { ...usage, model: usage.model ?? c.classifier_model }, now });
      const lowered = await this.lowerReservation(trx, job, c.model, now);
      await addEvent(trx, job.id, now, 'model_chosen', {
        model: c.model, tier: c.tier, reason: c.reason, fallback: c.fallback, classifier_model: c.classifier_model,
        duration_ms: c.duration_ms, cost_usd: c.cost_usd, ...(lowered ? { reserved_usd: lowered } : {}),
      });
    });
  }

  /**
   * The reservation made at spawn was the estimate of the dearest model auto could choose;
   * now the model is known, lower it to that model's estimate (never raise it: no budget can be
   * crossed by this). Returns the new amount when it changed.
   */
  private async lowerReservation(trx: Q, job: JobRow, model: string | null, now: number): Promise<number | undefined> {
    const b = this.budgets;
    const r = await reservationOf(trx, job.id);
    if (!r || r.released_at !== null) return undefined;
    const e = await b.estimateIn(trx, { provider: job.provider, model, template: job.template, budgetUsd: job.budget_usd, baseCostUsd: r.base_cost_usd });
    if (e.usd >= r.amount_usd) return undefined;
    await holdReservation(trx, job.id, e.usd, r.base_cost_usd, `model "auto" chose ${model ?? 'the CLI default'}: ${e.basis}`, now);
    return Math.round(e.usd * 1e6) / 1e6;
  }
}
