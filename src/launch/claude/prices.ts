// Prices of Claude models in USD per million tokens, for the live estimate of a running Claude
// child (Claude Code reports money only in its `result`, which stays authoritative: the estimate
// is replaced by it when it arrives). The figures are the ones claude 2.1.330 itself charges
// (measured against the fake API: 1M input / 1M output tokens per model; opus-4-0/4-1 are the public list prices). Cache writes cost
// 1.25× and cache reads 0.1× the input price unless a model says otherwise. A model not listed
// has an unknown cost: the job shows cost_unknown, never $0.
import type { TokenUsage } from '../types.js';

export interface ClaudePrice {
  input: number;
  output: number;
  cache_write?: number;
  cache_read?: number;
}

export const CLAUDE_PRICES: Readonly<Record<string, ClaudePrice>> = {
  'claude-opus-5-5': { input: 4, output: 20 },
  'claude-opus-5': { input: 5, output: 25 },
  'claude-opus-4-8': { input: 5, output: 25 },
  'claude-opus-4-7': { input: 5, output: 25 },
  'claude-opus-4-6': { input: 5, output: 25 },
  'claude-opus-4-5': { input: 5, output: 25 },
  'claude-opus-4-1': { input: 15, output: 75 },
  'claude-opus-4-0': { input: 15, output: 75 },
  'claude-sonnet-5-5': { input: 2, output: 10 },
  'claude-sonnet-5': { input: 2, output: 10 },
  'claude-sonnet-4-6': { input: 3, output: 15 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-sonnet-4-0': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'claude-fable-5': { input: 10, output: 50 },
  'claude-mythos-5': { input: 10, output: 50 },
};

/** The table key of a model id: `claude-sonnet-4-5-20250929` and `claude-opus-4-5[1m]` price as their base model. */
function keyOf(model: string): string {
  return model.replace(/\[[12]m\]$/i, '').replace(/-\d{8}$/, '').replace(/^claude-(opus|sonnet|haiku)-4$/, 'claude-$1-4-0');
}

/** Cost of one call's tokens (input excludes cache reads and writes, as the Messages API reports it), or null when unpriced. */
export function claudeCostOf(model: string | undefined, t: TokenUsage, extra: Record<string, ClaudePrice> = {}): number | null {
  if (!model) return null;
  const p = extra[model] ?? CLAUDE_PRICES[model] ?? CLAUDE_PRICES[keyOf(model)];
  if (!p) return null;
  const write = p.cache_write ?? p.input * 1.25;
  const read = p.cache_read ?? p.input * 0.1;
  return (t.input * p.input + t.output * p.output + (t.cacheCreation ?? 0) * write + (t.cachedInput ?? 0) * read) / 1_000_000;
}
