// Slicing long strings into pieces whose JSON encoding fits a budget, so a tool result never
// has to cut a value short: a reader gets a whole piece and the offset of the next one.

/** Characters JSON.stringify spends on the UTF-16 unit at `i` of `s`. */
function encodedLength(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return 2; // " and \
  if (c < 0x20) return c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
  if (c >= 0xd800 && c <= 0xdbff) return i + 1 < s.length && isLow(s.charCodeAt(i + 1)) ? 1 : 6;
  if (isLow(c)) return i > 0 && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff ? 1 : 6;
  return 1;
}
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/**
 * The end index of the longest piece of `s` from `start` whose JSON string encoding (without
 * the quotes) is at most `budget` characters. Never splits a surrogate pair; returns `start`
 * when not even one character fits.
 */
export function chunkEnd(s: string, start: number, budget: number): number {
  let used = 0;
  let i = start;
  while (i < s.length) {
    const n = encodedLength(s, i);
    if (used + n > budget) break;
    used += n;
    i++;
  }
  // Do not end between the two halves of a surrogate pair.
  if (i > start && i < s.length && isLow(s.charCodeAt(i)) && s.charCodeAt(i - 1) >= 0xd800 && s.charCodeAt(i - 1) <= 0xdbff) i--;
  return i;
}

/** JSON-encoded length of a string without its quotes (what `chunkEnd` budgets). */
export function jsonLength(s: string): number {
  return JSON.stringify(s).length - 2;
}
