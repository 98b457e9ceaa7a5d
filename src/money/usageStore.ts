// Usage of the hub's own model calls that are not agent attempts — the retry diagnosis
// (`retry: analyze`) and the knowledge-base triage agent — each a row linked to the job it
// served (null when it served none), so nothing the hub spends is invisible.
import type { Db } from '../store/db.js';
import type { TokenUsage } from '../launch/types.js';

export type UsageKind = 'diagnosis' | 'triage' | 'classification';

export interface UsageRow {
  id: number;
  job_id: string | null;
  attempt: number | null;
  kind: UsageKind;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_creation_tokens: number;
  cost_usd: number;
  cost_unknown: number;
  created_at: number;
}

/** What one model run cost: `costUsd` null when it could not be known. */
export interface RunUsage {
  model?: string;
  costUsd: number | null;
  tokens: TokenUsage;
}

export class UsageStore {
  constructor(private readonly db: Db) {}

  /** mixed period: until step 8 — the KB triage's usage (src/compose.ts); the engine writes through src/store/sql/usage.ts addUsage. */
  add(r: { jobId: string | null; attempt?: number; kind: UsageKind; usage: RunUsage; now: number }): void {
    const t = r.usage.tokens;
    this.db.prepare(`INSERT INTO usage (job_id, attempt, kind, model, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd, cost_unknown, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(r.jobId, r.attempt ?? null, r.kind, r.usage.model ?? null, t.input, t.output, t.cachedInput ?? 0, t.cacheCreation ?? 0,
      r.usage.costUsd ?? 0, r.usage.costUsd === null ? 1 : 0, r.now);
  }
}
