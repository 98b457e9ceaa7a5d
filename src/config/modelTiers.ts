// The `modelTiers` configuration (config key `modelTiers`, env OVERSEER_MODEL_TIERS as JSON):
// per provider, which model a `small`, `medium` or `large` task of `model: "auto"` runs on, and
// the fallback model (docs/models.md). Validated once at config load by src/config.ts; what the
// tiers mean (defaults, fallback, the requested model) is src/models/tiers.ts.
import { z } from 'zod';

/** The model value that asks for a choice. */
export const AUTO_MODEL = 'auto';

export const TIERS = ['small', 'medium', 'large'] as const;
export type Tier = (typeof TIERS)[number];

export interface TierMap {
  small: string;
  medium: string;
  large: string;
  /** The model when classification fails; undefined: the configured default model, else the CLI's own default. */
  fallback?: string;
}

const modelName = z.string().min(1, 'a model name is not empty').max(200).refine((m) => m !== AUTO_MODEL, 'a tier names a real model, not "auto"');

const TierMapSchema = z.object({
  small: modelName,
  medium: modelName,
  large: modelName,
  fallback: modelName.optional(),
}).strict();

export const ModelTiersSchema = z.record(
  z.enum(['claude', 'codex'], { errorMap: () => ({ message: 'a provider is "claude" or "codex"' }) }),
  TierMapSchema.nullable(),
  { invalid_type_error: 'must be a JSON object of provider → {"small","medium","large"[, "fallback"]} (or null: no auto for it), e.g. {"claude": {"small": "claude-haiku-4-5", "medium": "claude-sonnet-4-5", "large": "claude-opus-4-5"}}' },
);
export type ModelTiersConfig = z.infer<typeof ModelTiersSchema>;
