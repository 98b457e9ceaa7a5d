// Codex `exec --json` events → the supervisor's AgentSignals. Usage in turn.completed is the
// thread's running total, so this invocation's tokens are the difference from the total before
// it (the prior usage of a resumed thread). A failed turn becomes a Claude-shaped error result
// so one classifier serves both providers. Never throws.
import type { AgentSignal, ParserOptions, StreamParser, TokenUsage } from '../types.js';
import { priceOf, type Price } from './prices.js';

interface CodexItem { id?: string; type?: string; text?: string; message?: string; aggregated_output?: unknown }

/** HTTP status inside a Codex error message ("…status 429…", "429 Too Many Requests"). */
function statusIn(msg: string): number | undefined {
  const m = /\b(4\d\d|5\d\d)\b/.exec(msg);
  return m ? Number(m[1]) : undefined;
}

/** A turn.failed message as the Claude-shaped result the failure classifier reads. */
export function failedResult(message: string): Record<string, unknown> {
  let status = statusIn(message);
  if (/rate.?limit|too many requests/i.test(message)) status = 429;
  else if (/missing environment variable|unauthorized|invalid api key|incorrect api key/i.test(message)) status = 401;
  const reason = /connection failed|error sending request|connection refused/i.test(message)
    ? `the model endpoint could not be reached: ${message}`
    : message;
  return { type: 'result', subtype: 'codex_turn_failed', is_error: true, result: reason, terminal_reason: 'api_error', api_error_status: status ?? null };
}

export function newCodexParser(o: ParserOptions & { prices?: Record<string, Price> } = {}): StreamParser {
  let prior: TokenUsage = o.priorUsage ?? { input: 0, output: 0, cachedInput: 0 };
  let lastText: string | undefined;
  let turns = 0;
  let threadId: string | undefined;
  return {
    line(line: string): AgentSignal | { kind: 'unparsed'; reason: string } {
      let e: { type?: string; thread_id?: string; item?: CodexItem; usage?: Record<string, number>; error?: { message?: string }; message?: string };
      try {
        const v = JSON.parse(line) as unknown;
        if (!v || typeof v !== 'object' || Array.isArray(v)) return { kind: 'unparsed', reason: 'not a JSON object' };
        e = v as typeof e;
      } catch {
        return { kind: 'unparsed', reason: 'not JSON' };
      }
      switch (e.type) {
        case 'thread.started':
          threadId = e.thread_id;
          // The overseer server is `required`: if it cannot connect Codex exits before this line.
          return { kind: 'init', sessionId: e.thread_id, mcpConnected: true, mcpStatus: 'required' };
        case 'item.completed': {
          const it = e.item ?? {};
          if (it.type === 'agent_message') {
            lastText = it.text;
            turns++;
            return { kind: 'turn', messageId: it.id, text: it.text };
          }
          if (it.type === 'command_execution' || it.type === 'file_change' || it.type === 'mcp_tool_call') {
            turns++;
            // Each finished command, patch or MCP call ends one call the hook saw (the ids differ).
            const ended = [{ toolUseId: String(it.id), name: it.type === 'file_change' ? 'apply_patch' : it.type === 'mcp_tool_call' ? 'mcp' : 'shell', ...(typeof it.aggregated_output === 'string' ? { text: it.aggregated_output.slice(-4000) } : {}) }];
            return { kind: 'turn', messageId: `${it.type}:${it.id}:${turns}`, ended };
          }
          return { kind: 'noise' }; // reasoning, and `error` items (warnings, not failures)
        }
        case 'turn.completed': {
          const u = e.usage ?? {};
          const total: TokenUsage = { input: u.input_tokens ?? 0, output: u.output_tokens ?? 0, cachedInput: u.cached_input_tokens ?? 0 };
          const tokens: TokenUsage = {
            input: Math.max(0, total.input - prior.input),
            output: Math.max(0, total.output - prior.output),
            cachedInput: Math.max(0, (total.cachedInput ?? 0) - (prior.cachedInput ?? 0)),
          };
          prior = total;
          let structured: unknown;
          if (o.structured && lastText) {
            try {
              structured = JSON.parse(lastText);
            } catch {
              structured = undefined;
            }
          }
          return {
            kind: 'result', isError: false, costUsd: priceOf(o.model, tokens, o.prices), tokens, threadUsage: total,
            numTurns: turns, sessionId: threadId, text: lastText, structured,
            raw: { type: 'result', subtype: 'success', is_error: false, result: lastText ?? '' },
          };
        }
        case 'turn.failed': {
          const msg = e.error?.message ?? e.message ?? 'the turn failed';
          return { kind: 'result', isError: true, costUsd: undefined, numTurns: turns, sessionId: threadId, text: msg, raw: failedResult(msg) };
        }
        default:
          return { kind: 'noise' }; // turn.started, top-level `error` (reconnecting), item.started
      }
    },
  };
}
