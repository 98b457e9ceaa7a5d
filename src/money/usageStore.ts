// Usage of the hub's own model calls that are not agent attempts — the retry diagnosis
// (`retry: analyze`) and the knowledge-base triage agent — each a row linked to the job it
// served (null when it served none), so nothing the hub spends is invisible. The row's types;
// written and read through the layer (src/store/sql/usage.ts addUsage, usageRuns).
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
