// The search syntax people (and models) type, turned into an FTS5 MATCH expression that can only
// mean what the syntax says: FTS5's own query language (NEAR, column filters, ^, parentheses,
// bare AND/NOT) is never reachable from input — every word and phrase reaches MATCH double-quoted.
//
//   words            all of them, in any order        flaky login
//   "a phrase"       these words next to each other   "connection refused"
//   word*  "a phr"*  a word starting so (≥ 3 chars)   migrat*
//   a OR b           either (binds tighter than AND)  sqlite OR postgres
//   -word -"phrase"  without it                       timeout -jest
//
// Anything else is taken as text: punctuation separates words like the index's tokenizer does
// (`src/search/index.ts` is the phrase "src search index ts"). Bad queries get an
// InvalidInputError that says what is wrong and how to write it. Pure.
import { InvalidInputError } from '../errors.js';

export const MAX_TERMS = 16;
/** Letters before a `*`: a shorter prefix matches too much of the index to answer quickly. */
export const MIN_PREFIX = 3;

export interface Term {
  /** The words of the term as the tokenizer will see them. */
  tokens: string[];
  /** The raw text to quote. */
  text: string;
  prefix: boolean;
  negated: boolean;
}

type Piece = { kind: 'term'; term: Term } | { kind: 'or' };

/** What the index's unicode61 tokenizer keeps: runs of letters, digits and private-use characters. */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;

const tokensOf = (s: string): string[] => s.match(TOKEN) ?? [];
const quote = (s: string): string => `"${s.replace(/"/g, '""')}"`;

/** Splits the query into terms and OR markers; throws on an unmatched quote. */
function lex(q: string): Piece[] {
  const pieces: Piece[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i]!;
    if (/\s/u.test(c)) { i++; continue; }
    let negated = false;
    let j = i;
    if (c === '-' && j + 1 < q.length && !/\s/u.test(q[j + 1]!)) { negated = true; j++; }
    if (q[j] === '"') {
      const end = q.indexOf('"', j + 1);
      if (end < 0) throw new InvalidInputError(`query ${JSON.stringify(q)} has an unmatched double quote ("): close the phrase with a second " or remove the quote.`);
      const text = q.slice(j + 1, end);
      let k = end + 1;
      const prefix = q[k] === '*';
      if (prefix) k++;
      pieces.push({ kind: 'term', term: { tokens: tokensOf(text), text, prefix, negated } });
      i = k;
      continue;
    }
    let k = j;
    while (k < q.length && !/\s/u.test(q[k]!) && q[k] !== '"') k++;
    const word = q.slice(j, k);
    i = k;
    if (!negated && word === 'OR') { pieces.push({ kind: 'or' }); continue; }
    const prefix = word.endsWith('*');
    const text = word.replace(/\*+$/, '');
    pieces.push({ kind: 'term', term: { tokens: tokensOf(text), text, prefix, negated } });
  }
  return pieces;
}

function checkPrefix(t: Term): void {
  if (!t.prefix) return;
  const last = t.tokens.at(-1)!;
  if ([...last].length < MIN_PREFIX) {
    throw new InvalidInputError(`"${t.text}*": a prefix search needs at least ${MIN_PREFIX} letters before the * (a shorter one matches too much); write more of the word.`);
  }
}

function phrase(t: Term): string {
  // The raw text, quoted: FTS5 tokenizes it exactly as it tokenized the indexed text.
  return `${quote(t.text)}${t.prefix ? '*' : ''}`;
}

/** A query as the syntax above reads it: groups of terms ANDed (the terms of a group ORed), minus the negatives. */
export interface ParsedQuery {
  groups: Term[][];
  negatives: Term[];
}

/**
 * Reads `query`. Terms are ANDed; `OR` joins the terms on either side into one group; `-term`
 * excludes. Throws InvalidInputError for an empty query, an unmatched quote, a dangling OR, a
 * query that only excludes, a short prefix, or more than MAX_TERMS terms.
 */
export function parseQuery(query: string): ParsedQuery {
  const pieces = lex(query);
  // Terms with no word in them (punctuation, `*`, "") would be empty phrases, which FTS5 matches
  // nowhere: drop them, and any OR they leave dangling next to nothing.
  const kept: Piece[] = pieces.filter((p) => p.kind === 'or' || p.term.tokens.length > 0);
  const terms = kept.filter((p): p is Extract<Piece, { kind: 'term' }> => p.kind === 'term').map((p) => p.term);
  if (terms.length === 0) {
    throw new InvalidInputError(`query ${JSON.stringify(query)} has no words to search for: give words, e.g. "connection refused" or migrat*.`);
  }
  if (terms.length > MAX_TERMS) throw new InvalidInputError(`query has ${terms.length} terms; use at most ${MAX_TERMS} (the most distinctive words).`);

  const groups: Term[][] = [];
  const negatives: Term[] = [];
  let pendingOr = false;
  for (let i = 0; i < kept.length; i++) {
    const p = kept[i]!;
    if (p.kind === 'or') {
      const prev = groups.at(-1);
      const next = kept[i + 1];
      if (!prev || pendingOr || !next || next.kind !== 'term' || kept[i - 1]?.kind !== 'term' || (kept[i - 1] as { term: Term }).term.negated) {
        throw new InvalidInputError(`query ${JSON.stringify(query)}: OR needs a word or "phrase" on each side (a OR b), and cannot join an excluded -word.`);
      }
      pendingOr = true;
      continue;
    }
    const t = p.term;
    if (t.negated) {
      if (pendingOr) throw new InvalidInputError(`query ${JSON.stringify(query)}: OR cannot join an excluded -word; write "a OR b -c".`);
      negatives.push(t);
    } else if (pendingOr) {
      groups.at(-1)!.push(t);
      pendingOr = false;
    } else {
      groups.push([t]);
    }
  }
  if (groups.length === 0) {
    throw new InvalidInputError(`query ${JSON.stringify(query)} only excludes words (-word): add at least one word to find, e.g. "timeout -jest".`);
  }
  for (const t of [...groups.flat(), ...negatives]) checkPrefix(t);
  return { groups, negatives };
}

/** The FTS5 expression for `query` (without a column filter); throws as parseQuery does. */
export function ftsExpression(query: string): string {
  return fts5Of(parseQuery(query));
}

/** The FTS5 expression of a parsed query. */
export function fts5Of({ groups, negatives }: ParsedQuery): string {
  const positive = groups.map((g) => (g.length === 1 ? phrase(g[0]!) : `(${g.map(phrase).join(' OR ')})`)).join(' AND ');
  if (negatives.length === 0) return positive;
  const neg = negatives.length === 1 ? phrase(negatives[0]!) : `(${negatives.map(phrase).join(' OR ')})`;
  return `(${positive}) NOT ${neg}`;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const RELATIVE = /^(\d{1,9})\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|wk|wks|weeks?)(\s+ago)?$/i;
const ISO = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$/i;

/**
 * `since` as epoch ms: how long ago (`30m`, `2h`, `7d`, `1w`, `90 s ago`) or an ISO time
 * (`2026-05-01`, `2026-05-01T10:00Z`; without a zone: the hub's local time). Throws
 * InvalidInputError for anything else and for a time in the future.
 */
export function parseSince(value: string, now: number): number {
  const v = value.trim();
  const rel = RELATIVE.exec(v);
  if (rel) return now - Number(rel[1]) * UNITS[rel[2]![0]!.toLowerCase()]!;
  if (ISO.test(v)) {
    const ms = Date.parse(v.replace(' ', 'T'));
    if (Number.isFinite(ms)) {
      if (ms > now + 60_000) throw new InvalidInputError(`since ${JSON.stringify(value)} is in the future (now is ${new Date(now).toISOString()}): give a past time, or how long ago like "2h".`);
      return ms;
    }
  }
  throw new InvalidInputError(`since ${JSON.stringify(value)} is not a time: give how long ago ("30m", "2h", "7d", "1w") or an ISO time ("2026-05-01T10:00Z").`);
}
