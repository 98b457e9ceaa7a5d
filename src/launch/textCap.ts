// Bounded text for rendered transcripts (Claude's and Codex's): cut a string without splitting
// a surrogate pair, and stringify any value compactly. Pure.

/** Cuts `s` to at most `n` characters, ending with "…" when cut; never splits a surrogate pair. */
export function truncate(s: string, n: number): string {
  if (s.length <= n) return s;
  if (n <= 1) return n === 1 ? '…' : '';
  let cut = n - 1;
  if (isHighSurrogate(s.charCodeAt(cut - 1))) cut--;
  return s.slice(0, cut) + '…';
}

export const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
export const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

export function compactJson(v: unknown): string {
  if (v === undefined) return '';
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
