// The one place where tool outcomes become MCP results: JSON text (+ structuredContent),
// errors as `isError` results with the typed error's message, and a hard cap of 20,000
// characters (Claude Code rejects huge results), shrinking long strings until it fits.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ZodError } from 'zod';
import { OverseerError } from '../errors.js';
import type { Logger } from '../log.js';

export const MAX_RESULT_CHARS = 20_000;

export function okResult(value: unknown): CallToolResult {
  const fitted = fit(value);
  const text = JSON.stringify(fitted, null, 1);
  const structured = fitted !== null && typeof fitted === 'object' && !Array.isArray(fitted) ? (fitted as Record<string, unknown>) : undefined;
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}

export function errorResult(err: unknown, log?: Logger): CallToolResult {
  let text: string;
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
  let v = value;
  let limit = 8000;
  while (JSON.stringify(v, null, 1).length > max && limit > 20) {
    v = truncateStrings(v, limit);
    limit = Math.floor(limit / 2);
  }
  if (JSON.stringify(v, null, 1).length > max && Array.isArray(v)) {
    const arr = [...v];
    while (arr.length > 1 && JSON.stringify(arr, null, 1).length > max) arr.shift();
    v = arr;
  }
  return v;
}

function truncateStrings(v: unknown, limit: number): unknown {
  if (typeof v === 'string') return v.length > limit ? `${v.slice(0, limit)}… (truncated)` : v;
  if (Array.isArray(v)) return v.map((x) => truncateStrings(x, limit));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, truncateStrings(x, limit)]));
  return v;
}
