// Live usage of one attempt. Model calls arrive as the stream goes (Claude: each assistant
// event's message.usage, repeated for every content block of the same message id; Codex: each
// model response's usage from the rollout file), are counted once per call id (the latest usage
// of an id replaces the earlier one), and are priced with a per-model table. When the provider's
// own end-of-invocation figure arrives (Claude's `result`, Codex's `turn.completed`), it replaces
// the estimate of the calls it covers: the estimate is what a cancelled or killed child keeps,
// the provider's figure is what a finished one keeps. Pure: no I/O, no clock.
import type { TokenUsage } from '../launch/types.js';

/** Price of a call's tokens, or null when the model has no known price. */
export type Pricer = (model: string | undefined, tokens: TokenUsage) => number | null;

export interface UsageSnapshot {
  /** Known cost; a lower bound when costUnknown. */
  costUsd: number;
  /** Some call could not be priced (unknown model): the cost is not the whole spend. */
  costUnknown: boolean;
  tokens: Required<TokenUsage>;
  /** Distinct model calls seen. */
  calls: number;
}

/** A settled figure from the provider (result / turn.completed) covering the calls since the last one. */
export interface Settlement {
  /** null: the provider reported no money and the calls could not be priced; undefined: none reported, keep the estimate. */
  costUsd?: number | null;
  tokens?: TokenUsage;
}

export const zeroTokens = (): Required<TokenUsage> => ({ input: 0, output: 0, cachedInput: 0, cacheCreation: 0 });

export function addTokens(a: Required<TokenUsage>, b: TokenUsage): void {
  a.input += b.input;
  a.output += b.output;
  a.cachedInput += b.cachedInput ?? 0;
  a.cacheCreation += b.cacheCreation ?? 0;
}

const sameTokens = (a: TokenUsage, b: TokenUsage): boolean =>
  a.input === b.input && a.output === b.output && (a.cachedInput ?? 0) === (b.cachedInput ?? 0) && (a.cacheCreation ?? 0) === (b.cacheCreation ?? 0);

export class UsageMeter {
  private readonly settled = { costUsd: 0, costUnknown: false, tokens: zeroTokens() };
  /** Calls since the last settlement, by call id. */
  private readonly pending = new Map<string, { model?: string; tokens: TokenUsage }>();
  private readonly seen = new Set<string>();
  private readonly settledIds = new Set<string>();

  constructor(private readonly price: Pricer, private readonly defaultModel?: string) {}

  /** A model call's usage (again, for a repeated id). Returns whether anything changed. */
  observe(id: string, model: string | undefined, tokens: TokenUsage): boolean {
    this.seen.add(id);
    const prev = this.pending.get(id);
    if (prev && sameTokens(prev.tokens, tokens) && prev.model === (model ?? prev.model)) return false;
    // A call already settled (its id seen before a result) keeps the settled figure.
    if (!prev && this.settledIds.has(id)) return false;
    this.pending.set(id, { model: model ?? prev?.model, tokens: { ...tokens } });
    return true;
  }

  /** The provider's figure for every call since the last settlement replaces their estimate. */
  settle(s: Settlement): void {
    const est = this.estimate();
    if (s.tokens) addTokens(this.settled.tokens, s.tokens);
    else addTokens(this.settled.tokens, est.tokens);
    if (s.costUsd === undefined) {
      this.settled.costUsd += est.costUsd;
      if (est.unknown) this.settled.costUnknown = true;
    } else if (s.costUsd === null) {
      this.settled.costUnknown = true;
    } else {
      this.settled.costUsd += s.costUsd;
    }
    for (const id of this.pending.keys()) this.settledIds.add(id);
    this.pending.clear();
  }

  snapshot(): UsageSnapshot {
    const est = this.estimate();
    const tokens = { ...this.settled.tokens };
    addTokens(tokens, est.tokens);
    return { costUsd: this.settled.costUsd + est.costUsd, costUnknown: this.settled.costUnknown || est.unknown, tokens, calls: this.seen.size };
  }

  private estimate(): { costUsd: number; unknown: boolean; tokens: Required<TokenUsage> } {
    let costUsd = 0;
    let unknown = false;
    const tokens = zeroTokens();
    for (const c of this.pending.values()) {
      addTokens(tokens, c.tokens);
      const p = this.price(c.model ?? this.defaultModel, c.tokens);
      if (p === null) unknown = true;
      else costUsd += p;
    }
    return { costUsd, unknown, tokens };
  }
}
