// Range bounds for "starts with" over SQLite TEXT columns (BINARY collation compares UTF-8
// bytes, which order like code points). `key >= prefix AND key < upper` selects exactly the
// keys that start with `prefix`: `upper` is the prefix with its last code point incremented.
// (The old bound `prefix + "\uffff"` sorts below every 4-byte UTF-8 character, so keys with a
// character beyond U+FFFF right after the prefix were invisible.)

/** The smallest string greater than every string starting with `prefix`; undefined = no upper bound. */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = [...prefix].map((c) => c.codePointAt(0)!);
  while (cps.length) {
    let last = cps.pop()! + 1;
    if (last >= 0xd800 && last <= 0xdfff) last = 0xe000; // no surrogates in well-formed text
    if (last <= 0x10ffff) return String.fromCodePoint(...cps, last);
    // U+10FFFF cannot be incremented: carry into the previous character.
  }
  return undefined;
}

/** SQL condition and parameters selecting `column` values that start with `prefix`. */
export function prefixRange(column: string, prefix: string): { sql: string; params: string[] } {
  const upper = prefixUpperBound(prefix);
  return upper === undefined ? { sql: `${column} >= ?`, params: [prefix] } : { sql: `${column} >= ? AND ${column} < ?`, params: [prefix, upper] };
}
