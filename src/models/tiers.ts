// Model tiers for `model: "auto"` (docs/models.md): per provider, which model a `small`,
// `medium` or `large` task runs on, and which model a job falls back to when its
// classification fails. The configuration (`modelTiers`, OVERSEER_MODEL_TIERS) is merged over
// the defaults per provider; a provider set to null has no tiers (auto is refused for it).
// Pure: no I/O. The configuration's schema is src/config/modelTiers.ts.
import { AUTO_MODEL, TIERS, type ModelTiersConfig, type Tier, type TierMap } from '../config/modelTiers.js';

export { AUTO_MODEL, TIERS, type ModelTiersConfig, type Tier, type TierMap };

/**
 * The built-in tiers. Claude: the current haiku / sonnet / opus by full id (so each has a known
 * price and budgets estimate it). Codex: the priced GPT-5 family; `large` is gpt-5 as well —
 * no larger Codex model has a known price here; configure your flagship (and its price in
 * OVERSEER_CODEX_PRICES) under modelTiers.codex.large.
 */
export const DEFAULT_TIERS: Readonly<Record<'claude' | 'codex', TierMap>> = {
  claude: { small: 'claude-haiku-4-5', medium: 'claude-sonnet-4-5', large: 'claude-opus-4-5' },
  codex: { small: 'gpt-5-mini', medium: 'gpt-5', large: 'gpt-5' },
};

/** The tiers of `provider` (configuration over the defaults), or undefined when it has none. */
export function tiersFor(provider: string, configured: ModelTiersConfig = {}): TierMap | undefined {
  if (Object.hasOwn(configured, provider)) return configured[provider as 'claude' | 'codex'] ?? undefined;
  return Object.hasOwn(DEFAULT_TIERS, provider) ? DEFAULT_TIERS[provider as 'claude' | 'codex'] : undefined;
}

/** The model of a tier. */
export function modelOfTier(tiers: TierMap, tier: Tier): string {
  return tiers[tier];
}

/**
 * The model a job of `provider` runs on when its classification fails: the tiers' `fallback`,
 * else the configured default model when it names one (Claude only: Codex's default is
 * codexModel), else null (the CLI's own default).
 */
export function fallbackModel(provider: string, tiers: TierMap | undefined, defaultModel: string | undefined): string | null {
  if (tiers?.fallback) return tiers.fallback;
  if (provider === 'claude' && defaultModel && defaultModel !== AUTO_MODEL) return defaultModel;
  return null;
}

/** Every model an auto job of `provider` may end up on (the tiers and the fallback; null = the CLI's default). */
export function candidateModels(provider: string, tiers: TierMap | undefined, defaultModel: string | undefined): (string | null)[] {
  const out = new Set<string | null>();
  if (tiers) for (const t of TIERS) out.add(tiers[t]);
  out.add(fallbackModel(provider, tiers, defaultModel));
  return [...out];
}

/**
 * The model a spawn asks for: its own `model`, else the configured default (a model name applies
 * to Claude spawns, "auto" to every provider that has tiers). Undefined: the CLI's default.
 */
export function requestedModel(provider: string, model: string | undefined, defaultModel: string | undefined, hasTiers: boolean): string | undefined {
  if (model !== undefined) return model;
  if (defaultModel === undefined) return undefined;
  if (defaultModel === AUTO_MODEL) return hasTiers ? AUTO_MODEL : undefined;
  return provider === 'claude' ? defaultModel : undefined;
}
