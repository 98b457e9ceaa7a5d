// What a provider limit looks like in a child's output, read into a LimitHit (src/limits/breaker.ts).
// Pure; `now` comes in for the reset times said as a clock time ("resets 4:40pm").
//
// Claude Code (2.1.330, verified against the fake API; docs/limits.md has the table):
//   - retries 429 and 529 itself, printing `system/api_retry` {attempt, max_retries, retry_delay_ms,
//     error_status, error: "rate_limit" | "overloaded"} before each wait; retry_delay_ms is the
//     server's retry-after (plus up to ~25 % jitter) when it sent one of at most 60 s, else its
//     own backoff (~0.5 s·2^(n-1)). CLAUDE_CODE_MAX_RETRIES bounds the retries (default 10).
//   - gives up at once on a retry-after over 60 s or `x-should-retry: false` (usage limits), and
//     after its last retry: the `result` has api_error_status 429/529 and the server's message in
//     `result` ("API Error: Request rejected (429) · <message>").
// Codex (0.169.0):
//   - a request retry prints `{"type":"error","message":"Reconnecting... n/m (<why>)"}` where <why>
//     names the status ("last status: 429 Too Many Requests", "unexpected status 529 …");
//   - a usage limit prints an `error` then `turn.failed` "You've hit your usage limit. … try again
//     at 5:02 PM."; exhausted 5xx retries end "We're currently experiencing high demand, …".
import type { LimitHit } from './breaker.js';
import { limitKind, type LimitKind } from '../domain/limitKind.js';

/** The kind of limit a status and a text describe (the pure rule is src/domain/limitKind.ts). */
export { limitKind };

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, second: 1000, seconds: 1000, m: 60_000, min: 60_000, minute: 60_000, minutes: 60_000, h: 3_600_000, hour: 3_600_000, hours: 3_600_000 };

/** "try again in 6.5s", "retry in 1m30s", "try again in 20 minutes" → ms; undefined when the text says no such wait. */
export function retryInMs(text: string): number | undefined {
  const m = /(?:try again|retry|retrying) in ((?:\d+(?:\.\d+)?\s*(?:ms|seconds?|sec|s|minutes?|min|m|hours?|h)\s*)+)/i.exec(text);
  if (!m) return undefined;
  let ms = 0;
  for (const p of m[1]!.matchAll(/(\d+(?:\.\d+)?)\s*(ms|seconds?|sec|s|minutes?|min|m|hours?|h)/gi)) ms += Number(p[1]) * (UNIT_MS[p[2]!.toLowerCase()] ?? 0);
  return ms > 0 ? Math.ceil(ms) : undefined;
}

/**
 * The local time h:mm the text means, seen from `now`: today's if it is still ahead; within the
 * stated minute (a CLI prints the reset rounded down: 17:02:40 as "5:02 PM") the end of that
 * minute; otherwise tomorrow's.
 */
function clockTime(h: number, min: number, now: number): number {
  const d = new Date(now);
  d.setHours(h, min, 0, 0);
  const t = d.getTime();
  if (t > now) return t;
  if (now - t < 60_000) return t + 60_000;
  d.setDate(d.getDate() + 1);
  return d.getTime();
}

/**
 * When the text says the limit resets (ms since the epoch), or undefined: an ISO time, an epoch in
 * seconds after `|` or `resets_at` (older Claude Code: "…usage limit reached|1735689600"), a date
 * and time ("try again at Nov 29th, 2026 5:02 PM"), or a clock time ("resets 4pm", "resets at
 * 16:40", "try again at 5:02 PM"), taken in this machine's time zone: the CLI printed it on this
 * machine (a clock time already past is tomorrow's, except within its own minute). Only times
 * after `now` count.
 */
export function resetAt(text: string, now: number): number | undefined {
  const later = (t: number | undefined): number | undefined => (t !== undefined && Number.isFinite(t) && t > now ? t : undefined);
  const iso = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/.exec(text);
  if (iso) return later(Date.parse(iso[0]));
  const epoch = /(?:\||resets?_at"?\s*[:=]\s*)(\d{10})\b/.exec(text);
  if (epoch) return later(Number(epoch[1]) * 1000);
  const dated = /(?:resets?|try again)(?: at| on)? ([A-Z][a-z]{2,8} \d{1,2})(?:st|nd|rd|th)?,? (\d{4})?,? ?(\d{1,2}:\d{2} ?(?:[AaPp][Mm])?)/.exec(text);
  if (dated) {
    const year = dated[2] ?? String(new Date(now).getFullYear());
    return later(Date.parse(`${dated[1]}, ${year} ${dated[3]!.replace(/([AaPp][Mm])$/, ' $1')}`));
  }
  const clock = /(?:resets?|try again)(?: at)? (\d{1,2})(?::(\d{2}))?\s*([AaPp][Mm])?(?![\d:])/.exec(text);
  if (clock && (clock[2] !== undefined || clock[3] !== undefined)) {
    let h = Number(clock[1]);
    const pm = clock[3]?.toLowerCase() === 'pm';
    if (clock[3]) h = (h % 12) + (pm ? 12 : 0);
    if (h > 23 || Number(clock[2] ?? 0) > 59) return undefined;
    return clockTime(h, Number(clock[2] ?? 0), now);
  }
  return undefined;
}

/** A LimitHit from an ended attempt's error text and status, or undefined when it was no limit. */
export function limitOfText(text: string, status: number | null | undefined, now: number): LimitHit | undefined {
  const kind = limitKind(status, text);
  if (!kind) return undefined;
  const reset = resetAt(text, now);
  const retry = retryInMs(text);
  return {
    kind,
    ...(status ? { status } : {}),
    ...(reset !== undefined ? { resetAt: reset } : {}),
    ...(retry !== undefined ? { retryAfterMs: retry } : {}),
    message: text,
  };
}

/** A limit a running child's line shows: `retrying` when the CLI waits and asks again by itself. */
export interface LineLimit {
  hit: LimitHit;
  retrying: boolean;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * The limit one stdout line of a running child shows, or undefined. Cheap for the other lines:
 * only a line with the event's marker is parsed.
 */
export function limitOfLine(provider: 'claude' | 'codex', line: string, now: number): LineLimit | undefined {
  if (provider === 'claude') {
    if (!line.includes('"api_retry"')) return undefined;
    const e = parse(line);
    if (!e || e.type !== 'system' || e.subtype !== 'api_retry') return undefined;
    const status = num(e.error_status);
    const error = typeof e.error === 'string' ? e.error : JSON.stringify(e.error ?? '');
    const kind: LimitKind | undefined = status === 429 || error === 'rate_limit' ? 'rate_limit' : status === 529 || status === 503 || error === 'overloaded' ? 'overloaded' : undefined;
    if (!kind) return undefined;
    const delay = num(e.retry_delay_ms);
    return { hit: { kind, ...(status ? { status } : {}), ...(delay ? { retryAfterMs: delay } : {}), message: `API ${status ?? ''} ${error}`.replace(/\s+/g, ' ').trim() }, retrying: true };
  }
  if (!line.includes('"error"')) return undefined;
  const e = parse(line);
  if (!e || e.type !== 'error' || typeof e.message !== 'string') return undefined;
  const retrying = /^Reconnecting\.\.\./.test(e.message);
  const status = /\b(429|503|529)\b/.exec(e.message)?.[1];
  const hit = limitOfText(e.message, status ? Number(status) : undefined, now);
  return hit ? { hit, retrying } : undefined;
}

function parse(line: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(line) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
