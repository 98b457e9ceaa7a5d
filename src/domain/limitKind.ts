// Which provider limit a status and an error text describe (docs/limits.md has the table of what
// Claude Code and Codex print). Pure: the failure classifier (failure.ts) and the limit signals
// of src/limits/signals.ts share it.

/** The limits Overseer tells apart: all pass with time, unlike a spent quota. */
export type LimitKind = 'rate_limit' | 'overloaded' | 'usage_limit';

/** The kind of limit a status and a text describe, or undefined when they describe none. */
export function limitKind(status: number | null | undefined, text: string): LimitKind | undefined {
  // A spent quota or credit balance is billing, not a limit that passes: waiting does not help.
  if (/quota exceeded|insufficient_quota|credit balance/i.test(text)) return undefined;
  if (/usage limit|hit your (?:\w+ )?limit|session limit|weekly limit|spend limit/i.test(text)) return 'usage_limit';
  // 503 is how an overloaded gateway or OpenAI-style endpoint answers; Anthropic says 529.
  if (status === 529 || status === 503 || /overloaded|high demand/i.test(text)) return 'overloaded';
  if (status === 429 || /rate.?limit|too many requests|\b429\b/i.test(text)) return 'rate_limit';
  return undefined;
}
