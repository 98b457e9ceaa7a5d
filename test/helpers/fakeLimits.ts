// Provider limits as the model APIs answer them, as steps of the bundled fake model's scripts
// (src/fakemodel): only tests play them (docs/limits.md has what claude and codex do with each).
import type { Step } from '../../src/fakemodel/fakeAnthropic.js';
import type { CodexStep } from '../../src/fakemodel/fakeOpenAI.js';

// ---- Claude (the Messages API) ----

/** A 429 rate limit with `retry-after` (seconds): claude waits that long (up to 60 s) and asks again, printing system/api_retry. */
export function rateLimited(retryAfterS: number, message = 'rate limited (fake)'): Step {
  return { error: { status: 429, type: 'rate_limit_error', message, headers: { 'retry-after': String(retryAfterS) } } };
}

/** A 529 overloaded answer (no retry-after): claude retries it with its own backoff. */
export function overloaded(message = 'Overloaded'): Step {
  return { error: { status: 529, type: 'overloaded_error', message } };
}

/**
 * A usage limit that resets at `resetAt` (ms since the epoch): a 429 with the unified rate-limit
 * headers, `x-should-retry: false` (claude gives up at once, as it does at a subscription's usage
 * limit) and the reset time in the message, which claude puts in its result
 * ("API Error: Request rejected (429) · usage limit reached, resets at <ISO time>").
 */
export function usageLimited(resetAt: number): Step {
  return {
    error: {
      status: 429, type: 'rate_limit_error', message: `usage limit reached, resets at ${new Date(resetAt).toISOString()}`,
      headers: {
        'x-should-retry': 'false', 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': String(Math.ceil(resetAt / 1000)),
      },
    },
  };
}

// ---- Codex (the Responses API) ----

/** A 429 rate limit with `retry-after` (seconds): codex ends the turn "exceeded retry limit, last status: 429 Too Many Requests" once its retries are spent. */
export function codexRateLimited(retryAfterS: number): CodexStep {
  return { error: { status: 429, message: `Rate limit reached for requests. Please try again in ${retryAfterS}s.`, code: 'rate_limit_exceeded', headers: { 'retry-after': String(retryAfterS) } } };
}

/** A ChatGPT-plan usage limit that resets at `resetAt` (ms since the epoch): codex ends the turn "You've hit your usage limit. … try again at <local time>." */
export function codexUsageLimited(resetAt: number): CodexStep {
  const inS = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
  return { error: { status: 429, message: 'The usage limit has been reached', type: 'usage_limit_reached', fields: { plan_type: 'plus', resets_at: Math.ceil(resetAt / 1000), resets_in_seconds: inS } } };
}
