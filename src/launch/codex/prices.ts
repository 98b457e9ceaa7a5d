// Prices of OpenAI models in USD per million tokens, for Codex children (Codex reports tokens,
// never money). A model not listed here has an unknown cost: the job keeps its tokens and shows
// cost_usd null — never a made-up number. OVERSEER_CODEX_PRICES (JSON, same shape) adds or
// overrides entries, e.g. for newer models or negotiated prices.

export interface Price {
  input: number;
  output: number;
  /** Cached input tokens; defaults to the input price. */
  cached_input?: number;
}

/** Public list prices (per 1M tokens) of models whose prices we know. */
export const KNOWN_PRICES: Readonly<Record<string, Price>> = {
  'gpt-5': { input: 1.25, output: 10, cached_input: 0.125 },
  'gpt-5-mini': { input: 0.25, output: 2, cached_input: 0.025 },
  'gpt-5-nano': { input: 0.05, output: 0.4, cached_input: 0.005 },
  'gpt-4.1': { input: 2, output: 8, cached_input: 0.5 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6, cached_input: 0.1 },
  'gpt-4o': { input: 2.5, output: 10, cached_input: 1.25 },
  'o3': { input: 2, output: 8, cached_input: 0.5 },
  'o4-mini': { input: 1.1, output: 4.4, cached_input: 0.275 },
  'codex-mini-latest': { input: 1.5, output: 6, cached_input: 0.375 },
};

/** Cost of a token count, or null when the model has no known price. */
export function priceOf(model: string | undefined, t: { input: number; output: number; cachedInput?: number }, extra: Record<string, Price> = {}): number | null {
  if (!model) return null;
  const p = extra[model] ?? KNOWN_PRICES[model];
  if (!p) return null;
  const cached = Math.min(t.cachedInput ?? 0, t.input);
  return ((t.input - cached) * p.input + cached * (p.cached_input ?? p.input) + t.output * p.output) / 1_000_000;
}
