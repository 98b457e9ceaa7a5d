// Writes an attempt's live spending to its attempt row and the job's totals (the sums over its
// attempts), in one transaction, so get_agent / list_agents / status read what a running job
// has spent so far and a job that ends without a result keeps what its calls cost. Only the hub
// that runs the job writes its spending; the sums are computed by the database in the same batch.
import type { TokenUsage } from '../launch/types.js';
import { attemptUpdate, jobTotalsUpdate } from '../store/sql/jobs.js';
import { batch, type Q } from '../store/sql/tx.js';

export interface AttemptSpend {
  turns: number;
  costUsd: number;
  costUnknown: boolean;
  tokens: Required<TokenUsage>;
}

export async function recordAttemptSpend(q: Q, jobId: string, n: number, p: AttemptSpend, now: number): Promise<void> {
  await batch(q, [
    attemptUpdate(q, jobId, n, {
      turns: p.turns, cost_usd: p.costUsd, cost_unknown: p.costUnknown ? 1 : 0,
      input_tokens: p.tokens.input, output_tokens: p.tokens.output, cache_read_tokens: p.tokens.cachedInput, cache_creation_tokens: p.tokens.cacheCreation,
    }),
    jobTotalsUpdate(q, jobId, now),
  ]);
}
