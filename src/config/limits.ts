// The `limits` configuration (config key `limits`, env OVERSEER_LIMITS as JSON): the provider
// limiter's backoff when the provider said no wait, and the probe's lease (docs/limits.md).
import { z } from 'zod';

export const LimitsSchema = z.object({
  /** First wait after a limit answer that named none (no retry-after, no reset time); doubles per failed probe. */
  backoffBaseMs: z.number().int().min(10).max(3_600_000).default(1000),
  /** Longest such wait, jitter included. */
  backoffCapMs: z.number().int().min(10).max(24 * 3_600_000).default(300_000),
  /** A probe that has neither got a model answer nor a limit answer after this long lets another attempt probe. */
  probeLeaseMs: z.number().int().min(100).max(3_600_000).default(120_000),
}).strict('unknown key: limits takes only backoffBaseMs, backoffCapMs, probeLeaseMs')
  .refine((l) => l.backoffCapMs >= l.backoffBaseMs, 'backoffCapMs must be at least backoffBaseMs');

export type LimitsConfig = z.infer<typeof LimitsSchema>;
