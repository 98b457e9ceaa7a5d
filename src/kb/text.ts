// Pure text helpers of the knowledge base: word tokens (the same split as FTS5's unicode61
// tokenizer: runs of letters, digits and combining marks), stop words, title normalisation,
// Jaccard similarity of word sets, the "distinctive terms" of a text, and the FTS5 query
// built from them. Nothing here touches SQLite, so user text can never reach FTS5 unquoted.

/** Common English words (and prompt filler) that carry no topic; dropped from queries and word sets. */
export const STOP_WORDS: ReadonlySet<string> = new Set(`
a about above after again against all also am an and any are as at be because been before being below between both but by
can could did do does doing done down during each either else etc even ever every few for from further get gets got had has have
having he her here hers herself him himself his how however i if in into is it its itself just least less let like made make
makes many may me might more most much must my myself need needs no nor not now of off often on once only or other others
our ours ourselves out over own per please rather really same say says see seem seems shall she should since so some such
than that the their theirs them themselves then there these they this those though through thus to too under until up upon
us use used uses using very via want was we well were what when where whether which while who whom whose why will with
within without would yet you your yours yourself yourselves
`.trim().split(/\s+/));

const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** Lower-cased word tokens of `text`, in order, repeats kept. */
export function tokens(text: string): string[] {
  return (text.normalize('NFKC').toLowerCase().match(WORD) ?? []);
}

/** Title normalised for duplicate detection: lower-case, punctuation and whitespace runs folded to one space. */
export function normTitle(title: string): string {
  return tokens(title).join(' ');
}

/** The set of meaningful words of a text (stop words and 1-character tokens dropped; all words if that leaves none). */
export function wordSet(text: string): Set<string> {
  const all = tokens(text);
  const meaningful = all.filter((w) => w.length > 1 && !STOP_WORDS.has(w));
  return new Set(meaningful.length ? meaningful : all);
}

/** |A ∩ B| / |A ∪ B|; 0 for two empty sets. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let inter = 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const w of small) if (large.has(w)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * The `max` most distinctive terms of a text: stop words and 1-character tokens dropped,
 * ranked by frequency in the text, then by length (longer words say more), then by first
 * appearance. Without any meaningful word, falls back to the plain words.
 */
export function distinctiveTerms(text: string, max = 12): string[] {
  const all = tokens(text);
  const counts = new Map<string, { n: number; first: number }>();
  const pick = all.some((w) => w.length > 1 && !STOP_WORDS.has(w)) ? (w: string) => w.length > 1 && !STOP_WORDS.has(w) : () => true;
  all.forEach((w, i) => {
    if (!pick(w)) return;
    const c = counts.get(w);
    if (c) c.n++;
    else counts.set(w, { n: 1, first: i });
  });
  return [...counts.entries()]
    .sort(([wa, a], [wb, b]) => b.n - a.n || wb.length - wa.length || a.first - b.first)
    .slice(0, max)
    .map(([w]) => w);
}

/** Most terms one FTS query may carry (a 2,000-character query stays fast). */
export const MAX_QUERY_TERMS = 32;

/**
 * The words a search for user text looks for (any of them): its distinctive terms, stop words
 * dropped unless nothing else is left. Undefined when the text has no word.
 */
export function queryWordsOf(text: string): string[] | undefined {
  if (tokens(text).length === 0) return undefined;
  return queryWords(distinctiveTerms(text, MAX_QUERY_TERMS));
}

/** Already extracted terms as the words to look for: each re-tokenised, repeats dropped, at most MAX_QUERY_TERMS. */
export function queryWords(terms: readonly string[]): string[] {
  return [...new Set(terms.flatMap((t) => tokens(t)))].slice(0, MAX_QUERY_TERMS);
}

/**
 * An FTS5 MATCH expression for user text: its words, each double-quoted (so no FTS5 operator,
 * column filter or syntax character survives), OR-ed so that bm25 ranks partial matches.
 * Stop words are dropped unless nothing else is left. Undefined when the text has no word.
 */
export function ftsQuery(text: string): string | undefined {
  const words = queryWordsOf(text);
  return words === undefined ? undefined : ftsQueryOfTerms(words);
}

/** An FTS5 MATCH expression OR-ing already extracted terms (each re-tokenised and quoted). */
export function ftsQueryOfTerms(terms: readonly string[]): string | undefined {
  const uniq = queryWords(terms);
  if (uniq.length === 0) return undefined;
  // tokens() yields only letters, digits and marks, so no `"` can occur inside the quotes.
  return uniq.map((t) => `"${t}"`).join(' OR ');
}
