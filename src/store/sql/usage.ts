// The hub's own model calls (retry diagnosis, KB triage, model choice) over the Kysely layer: one
// priced row each, linked to the job it served (src/money/usageStore.ts has the row's meaning and
// the readers that are not moved yet).
import type { Q } from './tx.js';

/** One model run's usage (src/money/usageStore.ts RunUsage): `costUsd` null when it could not be known. */
export interface UsageIn {
  jobId: string | null;
  attempt?: number;
  kind: 'diagnosis' | 'triage' | 'classification';
  usage: { model?: string; costUsd: number | null; tokens: { input: number; output: number; cachedInput?: number; cacheCreation?: number } };
  now: number;
}

export async function addUsage(q: Q, r: UsageIn): Promise<void> {
  const t = r.usage.tokens;
  await q.insertInto('usage').values({
    job_id: r.jobId, attempt: r.attempt ?? null, kind: r.kind, model: r.usage.model ?? null,
    input_tokens: t.input, output_tokens: t.output, cache_read_tokens: t.cachedInput ?? 0, cache_creation_tokens: t.cacheCreation ?? 0,
    cost_usd: r.usage.costUsd ?? 0, cost_unknown: r.usage.costUsd === null ? 1 : 0, created_at: r.now,
  }).execute();
}

/** The hub's own model calls for one job, in order (get_agent's hub usage). */
export async function usageOfJob(q: Q, jobId: string) {
  return q.selectFrom('usage').selectAll().where('job_id', '=', jobId).orderBy('id').execute();
}
