// Token usage in Claude's stream: per model call as it grows (message_start, the assistant events
// of each content block, message_delta), and per invocation in the `result`. Pure.
import type { AgentSignal, TokenUsage } from '../types.js';

type Counts = { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };

/** One model call's tokens from an assistant event's message.usage (Messages API names). */
export function callUsage(u: unknown): TokenUsage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const c = u as Counts;
  const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { input: n(c.input_tokens), output: n(c.output_tokens), cachedInput: n(c.cache_read_input_tokens), cacheCreation: n(c.cache_creation_input_tokens) };
}

/**
 * The usage of each model call as it grows: message_start has the input and 1 output token,
 * assistant events repeat that, message_delta brings the final output count. Field-wise maximum
 * per message id, so events in any order give the final figure.
 */
export class CallUsage {
  private readonly byId = new Map<string, { model?: string; usage: TokenUsage }>();

  merge(id: string, model: string | undefined, u: TokenUsage | undefined): TokenUsage | undefined {
    const prev = this.byId.get(id);
    if (!u) return prev?.usage;
    const p = prev?.usage;
    const usage: TokenUsage = p ? {
      input: Math.max(p.input, u.input), output: Math.max(p.output, u.output),
      cachedInput: Math.max(p.cachedInput ?? 0, u.cachedInput ?? 0), cacheCreation: Math.max(p.cacheCreation ?? 0, u.cacheCreation ?? 0),
    } : u;
    this.byId.set(id, { model: model ?? prev?.model, usage });
    return usage;
  }

  fromStreamEvent(raw: unknown): AgentSignal {
    const r = raw as { api_message_id?: string; event?: { type?: string; message?: { id?: string; model?: string; usage?: unknown }; usage?: Counts } };
    const ev = r.event;
    if (ev?.type === 'message_start' && ev.message?.id) {
      const usage = this.merge(ev.message.id, ev.message.model, callUsage(ev.message.usage));
      if (usage) return { kind: 'usage', callId: ev.message.id, model: this.byId.get(ev.message.id)?.model, usage, transient: true };
    }
    if (ev?.type === 'message_delta' && r.api_message_id && ev.usage) {
      const known = this.byId.get(r.api_message_id)?.usage;
      const u = callUsage(ev.usage)!;
      // message_delta reports only the fields it has (output_tokens, sometimes input/cache): the rest stays.
      const usage = this.merge(r.api_message_id, undefined, {
        input: ev.usage.input_tokens ?? known?.input ?? 0, output: u.output,
        cachedInput: ev.usage.cache_read_input_tokens ?? known?.cachedInput ?? 0, cacheCreation: ev.usage.cache_creation_input_tokens ?? known?.cacheCreation ?? 0,
      });
      if (usage) return { kind: 'usage', callId: r.api_message_id, model: this.byId.get(r.api_message_id)?.model, usage, transient: true };
    }
    return { kind: 'noise', transient: true };
  }
}

/** Tokens of this invocation from a result's model_usage_since_last_result (else usage). */
export function usageOf(raw: unknown): TokenUsage | undefined {
  const r = raw as { model_usage_since_last_result?: Record<string, { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheCreationInputTokens?: number }>; usage?: Counts };
  if (r.model_usage_since_last_result && Object.keys(r.model_usage_since_last_result).length) {
    const t = { input: 0, output: 0, cachedInput: 0, cacheCreation: 0 };
    for (const m of Object.values(r.model_usage_since_last_result)) {
      t.input += m.inputTokens ?? 0;
      t.output += m.outputTokens ?? 0;
      t.cachedInput += m.cacheReadInputTokens ?? 0;
      t.cacheCreation += m.cacheCreationInputTokens ?? 0;
    }
    return t;
  }
  return r.usage ? callUsage(r.usage) : undefined;
}
