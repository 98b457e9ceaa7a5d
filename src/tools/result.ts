// The one place where tool outcomes become MCP results: JSON text (+ structuredContent),
// errors as `isError` results with the typed error's message, and a hard cap of 20,000
// characters (Claude Code rejects huge results), shrinking long strings until it fits.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { BudgetExceededError, OverseerError } from '../errors.js';
import type { Logger } from '../log.js';
import { isObject } from '../json.js';

export const MAX_RESULT_CHARS = 20_000;

/**
 * A tool's value as a plain CallToolResult: its JSON as the text, and, for an object, the same
 * value as JSON has it as structuredContent (so an in-memory client sees what a client over the
 * wire sees). Over the cap, the fitted copy is both. The MCP layer serialises the message.
 */
export function okResult(value: unknown): CallToolResult {
  const first = JSON.stringify(value ?? null, null, 1) as string | undefined;
  const small = typeof first === 'string' && first.length <= MAX_RESULT_CHARS;
  const fitted = small ? (JSON.parse(first) as unknown) : fit(value);
  const text = small ? first : JSON.stringify(fitted, null, 1);
  return { content: [{ type: 'text', text }], ...(isObject(fitted) ? { structuredContent: fitted } : {}) };
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
