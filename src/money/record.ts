// Writes an attempt's live spending to its attempt row and the job's totals (the sum over its
// attempts), in one transaction, so get_agent / list_agents / status read what a running job
// has spent so far and a job that ends without a result keeps what its calls cost. Only the hub
// that runs the job writes its spending, so the sum needs no lock beyond the transaction.
import type { AttemptRow } from '../store/jobs.js';
import type { TokenUsage } from '../launch/types.js';
import { attemptsOf, updateAttempt, updateJob } from '../store/sql/jobs.js';
import { transact, type Q } from '../store/sql/tx.js';

export interface AttemptSpend {
  turns: number;
  costUsd: number;
  costUnknown: boolean;
  tokens: Required<TokenUsage>;
}

export async function recordAttemptSpend(q: Q, jobId: string, n: number, p: AttemptSpend, now: number): Promise<void> {
  await transact(q, async (trx) => {
    await updateAttempt(trx, jobId, n, {
      turns: p.turns, cost_usd: p.costUsd, cost_unknown: p.costUnknown ? 1 : 0,
      input_tokens: p.tokens.input, output_tokens: p.tokens.output, cache_read_tokens: p.tokens.cachedInput, cache_creation_tokens: p.tokens.cacheCreation,
    });
    const all = await attemptsOf(trx, jobId);
    const sum = (f: (a: AttemptRow) => number | undefined): number => all.reduce((s, a) => s + (f(a) ?? 0), 0);
    await updateJob(trx, jobId, {
      turns: sum((a) => a.turns),
      cost_usd: sum((a) => a.cost_usd),
      input_tokens: sum((a) => a.input_tokens),
      output_tokens: sum((a) => a.output_tokens),
      cache_read_tokens: sum((a) => a.cache_read_tokens),
      cache_creation_tokens: sum((a) => a.cache_creation_tokens),
      cost_unknown: all.some((a) => a.cost_unknown) ? 1 : 0,
    }, now);
  });
}
