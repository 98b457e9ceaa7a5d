// Usage of a one-shot `claude -p --output-format json` run (the retry diagnosis, the KB triage
// agent) from its JSON result: tokens summed over modelUsage (else usage), money from
// total_cost_usd (a fresh, unpersisted session: not cumulative). A run that printed no result
// (timeout, crash) still spent something unknown: cost null, never $0.
import type { RunUsage } from './usageStore.js';

type ModelUsage = { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheCreationInputTokens?: number; costUSD?: number };

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export function oneShotUsage(stdout: string, model?: string): RunUsage {
  let j: { total_cost_usd?: unknown; modelUsage?: Record<string, ModelUsage>; usage?: Record<string, unknown> };
  try {
    j = JSON.parse(stdout.trim()) as typeof j;
  } catch {
    return { model, costUsd: null, tokens: { input: 0, output: 0 } };
  }
  const models = j.modelUsage && typeof j.modelUsage === 'object' ? Object.entries(j.modelUsage) : [];
  const tokens = { input: 0, output: 0, cachedInput: 0, cacheCreation: 0 };
  if (models.length) {
    for (const [, m] of models) {
      tokens.input += n(m.inputTokens);
      tokens.output += n(m.outputTokens);
      tokens.cachedInput += n(m.cacheReadInputTokens);
      tokens.cacheCreation += n(m.cacheCreationInputTokens);
    }
  } else if (j.usage) {
    tokens.input = n(j.usage.input_tokens);
    tokens.output = n(j.usage.output_tokens);
    tokens.cachedInput = n(j.usage.cache_read_input_tokens);
    tokens.cacheCreation = n(j.usage.cache_creation_input_tokens);
  }
  const cost = typeof j.total_cost_usd === 'number' ? j.total_cost_usd : models.length ? models.reduce((s, [, m]) => s + n(m.costUSD), 0) : null;
  return { model: models[0]?.[0] ?? model, costUsd: cost, tokens };
}
