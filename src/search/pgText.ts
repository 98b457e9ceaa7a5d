// The transcript index's text on PostgreSQL, decided here in JS so that it splits words exactly as
// SQLite's FTS5 index does (tokenize = 'unicode61 remove_diacritics 2'): runs of letters, digits
// and private-use characters, lower-cased, diacritics removed. PostgreSQL's own parser would keep
// `src/search/index.ts`, URLs, e-mail addresses and versions as one token each and lower-cases only
// ASCII in a "C" database, so neither the index nor the query is left to it: a row's words go in
// as a tsvector literal (`indexDocument`), a parsed query (query.ts) comes out as a tsquery literal
// (`tsqueryOf`), and the snippet is cut here too (`snippetOf`), with the same words, since
// ts_headline would parse the raw text again and mark other words than the ones that matched.
// Pure.
import { InvalidInputError } from '../errors.js';
import type { ParsedQuery, Term } from './query.js';

/** A word and where it stands in the text (UTF-16 offsets). */
interface Span {
  word: string;
  start: number;
  end: number;
}

/** Longest lexeme PostgreSQL keeps (bytes); a longer one is an error in a tsvector literal. */
export const MAX_WORD_BYTES = 2047;

/** Letters, digits, private-use characters, and the marks that belong to them. */
const WORD = /[\p{L}\p{N}\p{Co}\p{M}]+/gu;

/** The indexed form of a word: lower case (final sigma folded as FTS5 folds it), without diacritics ('' for marks alone). */
export function normalWord(raw: string): string {
  return raw.toLowerCase().replace(/ς/g, 'σ').normalize('NFD').replace(/\p{M}+/gu, '');
}

function spans(text: string): Span[] {
  const out: Span[] = [];
  for (const m of text.matchAll(WORD)) {
    const word = normalWord(m[0]);
    if (word) out.push({ word, start: m.index, end: m.index + m[0].length });
  }
  return out;
}

/** The words of a text as the index keeps them, in order. */
export function indexWords(text: string): string[] {
  return spans(text).map((s) => s.word);
}

const fits = (w: string): boolean => Buffer.byteLength(w, 'utf8') <= MAX_WORD_BYTES;

/** The tsvector literal of a row's text: each word with its position (PostgreSQL caps positions at 16,383). */
export function indexDocument(text: string): string {
  // Words are letters and digits only, so they need no escaping inside the quotes.
  return indexWords(text).map((w, i) => (fits(w) ? `'${w}':${i + 1}` : '')).filter(Boolean).join(' ');
}

function termWords(t: Term): string[] {
  const words = indexWords(t.text);
  if (words.some((w) => !fits(w))) {
    throw new InvalidInputError(`a word of "${t.text.slice(0, 40)}…" is longer than ${MAX_WORD_BYTES} bytes: search for a shorter part of it.`);
  }
  return words;
}

function phrase(t: Term): string {
  const words = termWords(t).map((w) => `'${w}'`);
  if (t.prefix) words[words.length - 1] += ':*';
  return words.length === 1 ? words[0]! : `(${words.join(' <-> ')})`;
}

const anyOf = (ts: readonly Term[]): string => (ts.length === 1 ? phrase(ts[0]!) : `(${ts.map(phrase).join(' | ')})`);

/** The tsquery literal of a parsed query: groups ANDed, a group's terms ORed, phrases as `<->`, prefixes as `:*`, negatives as `!`. */
export function tsqueryOf(q: ParsedQuery): string {
  const positive = q.groups.map(anyOf).join(' & ');
  return q.negatives.length === 0 ? positive : `(${positive}) & !${anyOf(q.negatives)}`;
}

/** Where the positive terms of `q` occur in `words`: [first word, last word] of each occurrence, with the term's number. */
function occurrences(words: readonly string[], q: ParsedQuery): { from: number; to: number; term: number }[] {
  const found: { from: number; to: number; term: number }[] = [];
  q.groups.flat().forEach((t, term) => {
    const want = indexWords(t.text);
    for (let i = 0; i + want.length <= words.length; i++) {
      const ok = want.every((w, k) => (t.prefix && k === want.length - 1 ? words[i + k]!.startsWith(w) : words[i + k] === w));
      if (ok) found.push({ from: i, to: i + want.length - 1, term });
    }
  });
  return found.sort((a, b) => a.from - b.from || a.to - b.to);
}

/**
 * A snippet of `text` as FTS5's snippet() cuts one: a window of at most `size` words holding the
 * most different terms of the query (the first such window), each occurrence between `open` and
 * `close`, `cut` where the text goes on. The window is centred on what it holds. Without any
 * occurrence: the first `size` words.
 */
export function snippetOf(text: string, q: ParsedQuery, o: { size: number; open: string; close: string; cut: string }): string {
  const sp = spans(text);
  if (sp.length === 0) return '';
  const occ = occurrences(sp.map((s) => s.word), q);
  let from = 0;
  if (occ.length > 0) {
    let best = { start: occ[0]!.from, terms: -1, last: occ[0]!.to };
    for (const first of occ) {
      const inside = occ.filter((x) => x.from >= first.from && x.to < first.from + o.size);
      const terms = new Set(inside.map((x) => x.term)).size;
      if (terms > best.terms) best = { start: first.from, terms, last: Math.max(...inside.map((x) => x.to)) };
    }
    const slack = o.size - (best.last - best.start + 1);
    from = Math.max(0, Math.min(best.start - Math.floor(slack / 2), sp.length - o.size));
  }
  const to = Math.min(sp.length, from + o.size) - 1;
  const marks = new Map<number, { open: number; close: number }>();
  // Overlapping occurrences are marked as one run.
  let run: { from: number; to: number } | undefined;
  const flush = (): void => {
    if (!run) return;
    const a = Math.max(run.from, from);
    const b = Math.min(run.to, to);
    if (a <= b) {
      marks.set(a, { ...(marks.get(a) ?? { close: 0 }), open: (marks.get(a)?.open ?? 0) + 1 });
      marks.set(b, { ...(marks.get(b) ?? { open: 0 }), close: (marks.get(b)?.close ?? 0) + 1 });
    }
    run = undefined;
  };
  for (const x of occ) {
    if (run && x.from <= run.to) run.to = Math.max(run.to, x.to);
    else {
      flush();
      run = { from: x.from, to: x.to };
    }
  }
  flush();
  let out = from > 0 ? o.cut : '';
  for (let i = from; i <= to; i++) {
    const s = sp[i]!;
    if (i > from) out += text.slice(sp[i - 1]!.end, s.start);
    const m = marks.get(i);
    out += `${m?.open ? o.open : ''}${text.slice(s.start, s.end)}${m?.close ? o.close : ''}`;
  }
  return to < sp.length - 1 ? out + o.cut : out;
}
