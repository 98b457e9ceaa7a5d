// The one place where tool outcomes become MCP results: JSON text (+ structuredContent),
// errors as `isError` results with the typed error's message, and a hard cap of 20,000
// characters (Claude Code rejects huge results), shrinking long strings until it fits.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { BudgetExceededError, OverseerError } from '../errors.js';
import type { Logger } from '../log.js';
import { RESULT_JSON, isObject } from '../mcp/rpc.js';

export const MAX_RESULT_CHARS = 20_000;

export function okResult(value: unknown): CallToolResult {
  const first = JSON.stringify(value ?? null, null, 1) as string | undefined;
  if (typeof first === 'string' && first.length <= MAX_RESULT_CHARS) return smallResult(value, first);
  const fitted = fit(value);
  const text = JSON.stringify(fitted, null, 1);
  const structured = isObject(fitted) ? fitted : undefined;
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}

/**
 * A result under the cap, the common case. Its JSON is made here, once, while the value is as
 * the handler left it, and read by the HTTP answer through RESULT_JSON (no parse of the value
 * back into an object and no second serialisation of it). structuredContent, a copy of the
 * value as JSON has it, is parsed only when something reads it (an in-memory client), and
 * toJSON gives the plain result to any other serialiser (stdio). A class, not an object with its
 * own accessor: defineProperty and freeze cost more than the parse they saved. Nothing may change
 * a result after okResult made it (nothing does: the tool table sends it as it comes).
 */
class SmallResult {
  readonly content: { type: 'text'; text: string }[];
  readonly #compact: string;
  readonly #json: string;
  #parsed?: Record<string, unknown>;

  constructor(text: string, compact: string) {
    this.content = [{ type: 'text', text }];
    this.#compact = compact;
    this.#json = `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"structuredContent":${compact}}`;
  }

  get structuredContent(): Record<string, unknown> {
    return (this.#parsed ??= JSON.parse(this.#compact) as Record<string, unknown>);
  }

  get [RESULT_JSON](): string {
    return this.#json;
  }

  toJSON(): CallToolResult {
    return { content: this.content, structuredContent: this.structuredContent };
  }
}

function smallResult(value: unknown, text: string): CallToolResult {
  if (!isObject(value)) return { content: [{ type: 'text', text }] };
  return new SmallResult(text, JSON.stringify(value)) as unknown as CallToolResult;
}

export function errorResult(err: unknown, log?: Logger): CallToolResult {
  let text: string;
  // A budget refusal also carries its numbers as structuredContent, for clients that read them.
  if (err instanceof BudgetExceededError) {
    return { content: [{ type: 'text', text: `${err.code}: ${err.message}`.slice(0, MAX_RESULT_CHARS) }], structuredContent: { error: err.code, ...err.details }, isError: true };
  }
  if (err instanceof OverseerError) text = `${err.code}: ${err.message}`;
  else if (err instanceof ZodError) text = `invalid_input: ${formatZod(err)}`;
  else {
    log?.error({ err }, 'unexpected error in a tool');
    text = `internal: ${err instanceof Error ? err.message : String(err)}`;
  }
  return { content: [{ type: 'text', text: text.slice(0, MAX_RESULT_CHARS) }], isError: true };
}

export function formatZod(err: ZodError): string {
  return err.issues.map((i) => `${i.path.join('.') || '(input)'}: ${i.message}`).join('; ');
}

/** Shrink the longest strings until the JSON fits the cap. */
export function fit(value: unknown, max = MAX_RESULT_CHARS): unknown {
  let v = JSON.parse(JSON.stringify(value ?? null)) as unknown;
  let limit = 8000;
  while (JSON.stringify(v, null, 1).length > max && limit > 20) {
    v = truncateStrings(v, limit);
    limit = Math.floor(limit / 2);
  }
  // Still too big: many small items. Drop items from the longest array until it fits
  // (from the front of a top-level array — the newest entries are last — else from the end).
  for (let guard = 0; guard < 10_000 && JSON.stringify(v, null, 1).length > max; guard++) {
    const arr = longestArray(v);
    if (!arr || arr.length === 0) break;
    if (arr === v) arr.shift();
    else arr.pop();
    if (v && typeof v === 'object' && !Array.isArray(v)) (v as Record<string, unknown>).truncated = true;
  }
  return v;
}

function longestArray(v: unknown): unknown[] | undefined {
  let best: unknown[] | undefined;
  const visit = (x: unknown): void => {
    if (Array.isArray(x)) {
      if (!best || x.length > best.length) best = x;
      x.forEach(visit);
    } else if (x && typeof x === 'object') Object.values(x).forEach(visit);
  };
  visit(v);
  return best;
}

function truncateStrings(v: unknown, limit: number): unknown {
  if (typeof v === 'string') return v.length > limit ? `${v.slice(0, limit)}… (truncated)` : v;
  if (Array.isArray(v)) return v.map((x) => truncateStrings(x, limit));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, truncateStrings(x, limit)]));
  return v;
}
