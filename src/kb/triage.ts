// The pure half of learning triage: shape checks (empty, too short), secret detection, tag
// normalisation and content merging. The service (service.ts) adds the I/O half: duplicate
// lookup in the stores, the optional triage agent, and storing.
//
// Secret detection errs on the side of rejecting: a learning is cheap to rephrase, a leaked
// key in a database that every future agent reads is not. Reasons name the *kind* of secret
// (and at most its public prefix, like `ghp_…`), never the value.
import { jaccard, normTitle, STOP_WORDS, tokens } from './text.js';
import { MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TITLE_CHARS, MIN_CONTENT_CHARS } from '../contract/kb.js';

export type KbScope = 'project' | 'global';

export interface LearningInput {
  title: string;
  content: string;
  tags?: readonly string[];
  scope?: KbScope;
}

/** A learning that passed the shape checks: trimmed, tags normalised, title normalised. */
export interface CleanLearning {
  title: string;
  content: string;
  tags: string[];
  scope?: KbScope;
  normTitle: string;
}

// The limits report_learnings' schema enforces are the contract's (src/contract/kb.ts).
export { MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TITLE_CHARS, MIN_CONTENT_CHARS };
export const MIN_TITLE_CHARS = 4;
/** A merged entry stops growing past this; new sentences beyond it are dropped. */
export const MAX_MERGED_CONTENT_CHARS = 12_000;

/** Lower-case, trimmed, inner whitespace as "-", duplicates and empties dropped, at most MAX_TAGS. */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const t of tags ?? []) {
    const n = t.normalize('NFKC').trim().toLowerCase().replace(/\s+/g, '-').slice(0, MAX_TAG_CHARS);
    if (n && !out.includes(n)) out.push(n);
  }
  return out.slice(0, MAX_TAGS);
}

/** Shape checks; the reason says what to change. */
export function cleanLearning(l: LearningInput): { ok: true; learning: CleanLearning } | { ok: false; reason: string } {
  const title = (l.title ?? '').replace(/\s+/g, ' ').trim();
  const content = (l.content ?? '').trim();
  if (!title) return { ok: false, reason: 'title is empty: give a short headline, e.g. "Tests need TZ=UTC"' };
  if (title.length < MIN_TITLE_CHARS || normTitle(title).replace(/ /g, '').length < 3) {
    return { ok: false, reason: `title is too short (${title.length} characters, at least ${MIN_TITLE_CHARS} with 3 letters or digits): say what the learning is about` };
  }
  if (title.length > MAX_TITLE_CHARS) return { ok: false, reason: `title is longer than ${MAX_TITLE_CHARS} characters: shorten it and put details in content` };
  if (!content) return { ok: false, reason: 'content is empty: write what you learned, with the how and why' };
  if (content.length < MIN_CONTENT_CHARS) {
    return { ok: false, reason: `content is too short (${content.length} characters, at least ${MIN_CONTENT_CHARS}): say what you learned and why it matters` };
  }
  if (content.length > MAX_CONTENT_CHARS) return { ok: false, reason: `content is longer than ${MAX_CONTENT_CHARS} characters: keep the essential lesson` };
  return { ok: true, learning: { title, content, tags: normalizeTags(l.tags), scope: l.scope, normTitle: normTitle(title) } };
}

// ---------------------------------------------------------------------------------------
// Secrets

interface SecretRule {
  /** What the reason calls it. */
  kind: string;
  re: RegExp;
}

/** Well-known credential formats: their prefixes and lengths are specific enough to trust. */
const SECRET_RULES: readonly SecretRule[] = [
  { kind: 'a private key block (-----BEGIN … PRIVATE KEY-----)', re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----/ },
  { kind: 'an API key (sk-…)', re: /(?<![A-Za-z0-9_-])sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}/ },
  { kind: 'a Stripe key (sk_live_… / rk_live_…)', re: /(?<![A-Za-z0-9])[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}/ },
  { kind: 'a GitHub token (ghp_…/gho_…/ghs_…)', re: /(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}/ },
  { kind: 'a GitHub token (github_pat_…)', re: /github_pat_[A-Za-z0-9_]{22,}/ },
  { kind: 'a GitLab token (glpat-…)', re: /glpat-[A-Za-z0-9_-]{20,}/ },
  { kind: 'an AWS access key id (AKIA…)', re: /(?<![A-Z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}(?![A-Z0-9])/ },
  { kind: 'a Slack token (xox…-)', re: /(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}/ },
  { kind: 'a Slack webhook URL', re: /hooks\.slack\.com\/services\/[A-Za-z0-9/]{20,}/ },
  { kind: 'a Google API key (AIza…)', re: /AIza[0-9A-Za-z_-]{35}/ },
  { kind: 'an npm token (npm_…)', re: /(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}/ },
  { kind: 'a JSON web token (eyJ…)', re: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/ },
  { kind: 'a bearer token (Authorization: Bearer …)', re: /\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*/ },
];

/** Values that stand for a secret without being one. */
function isPlaceholder(v: string): boolean {
  const s = v.replace(/^['"`]|['"`]$/g, '');
  if (/^[<[{(]/.test(s) || /^\$\{?[A-Za-z_]/.test(s) || /^%[A-Za-z_]/.test(s)) return true; // <key>, ${VAR}, $VAR, {{x}}, %VAR%
  if (/^(?:x+|\*+|\.+|-+|_+|#+|0+|redacted|hidden|changeme|example|placeholder|your[_-].*|my[_-].*|dummy|fake|test|secret|token|password)$/i.test(s)) return true;
  if (/^(?:process\.env|os\.environ|env\.|getenv|secrets\.|vault:|ENV\[)/i.test(s)) return true;
  return false;
}

/** Type names and keywords that follow `token:` in code and schemas without being values. */
const NOT_VALUES = new Set(['string', 'str', 'number', 'int', 'integer', 'boolean', 'bool', 'null', 'undefined', 'none', 'nil', 'any', 'unknown', 'object', 'true', 'false', 'required', 'optional', 'bytes', 'buffer', 'text', 'varchar', 'secretstr']);

const ASSIGNMENT = /(?<![A-Za-z0-9])((?:[A-Za-z0-9]+[_.-])*(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|credentials?))["']?\s*(?:=|:|:=|=>)\s*(["'`]?)([^\s"'`,;)}\]]+)/gi;

/** A `password=…` / `token: …` style assignment whose value looks real. */
function findAssignment(text: string): string | undefined {
  for (const m of text.matchAll(ASSIGNMENT)) {
    const key = m[1]!;
    const value = m[3]!;
    if (value.length < 6 || isPlaceholder(value) || NOT_VALUES.has(value.toLowerCase())) continue;
    // A lower-case dictionary-looking word ("token: refreshed") is prose; real values have a
    // digit, a symbol or mixed case, or are long.
    const looksReal = /\d/.test(value) || /[^A-Za-z]/.test(value) || (/[a-z]/.test(value) && /[A-Z]/.test(value)) || value.length >= 12;
    if (!looksReal) continue;
    return `a credential assignment (${key.toLowerCase()}=…)`;
  }
  return undefined;
}

const URL_CREDENTIALS = /\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:([^\s@/]+)@/gi;

function findUrlCredentials(text: string): string | undefined {
  for (const m of text.matchAll(URL_CREDENTIALS)) {
    if (!isPlaceholder(m[1]!) && m[1]!.length >= 3) return 'a password inside a URL (scheme://user:password@host)';
  }
  return undefined;
}

/** Shannon entropy in bits per character. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / s.length;
    h -= p * Math.log2(p);
  }
  return h;
}

const LONG_TOKEN = /[A-Za-z0-9+/_=-]{32,}/g;
/** Words that name a hex string as a hash, when they appear just before it. */
const HASH_CONTEXT = /\b(?:commit|commits|sha|sha1|sha-1|sha256|sha-256|sha512|checksum|hash|digest|integrity|revision|rev|object id|oid)\b/i;

/** A long base64/hex-looking run that is random enough to be a key (not a path, identifier, hash or UUID). */
function findHighEntropy(text: string): string | undefined {
  for (const m of text.matchAll(LONG_TOKEN)) {
    const tok = m[0];
    const before = text.slice(Math.max(0, m.index - 32), m.index);
    if (/^(?:sha(?:1|256|384|512)|md5)-/i.test(tok)) continue; // SRI integrity values
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tok)) continue; // UUID
    if (/^[0-9a-f]+$/i.test(tok)) {
      // Hex: a git object id or checksum named as such is not a secret.
      if (HASH_CONTEXT.test(before)) continue;
      if (/[0-9]/.test(tok) && /[a-f]/i.test(tok) && entropy(tok) >= 3.0) return `a long random hex string (${tok.length} characters)`;
      continue;
    }
    // Paths and identifiers: made of word-like segments.
    const segments = tok.split(/[/_.-]+/).filter(Boolean);
    if (segments.length > 1 && segments.every((s) => s.length <= 16 && /^[A-Za-z]*[0-9]{0,4}$/.test(s))) continue;
    if (!/[0-9]/.test(tok) || !/[A-Za-z]/.test(tok)) continue;
    const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((r) => r.test(tok)).length;
    if (classes >= 3 && entropy(tok) >= 4.2) return `a long random base64-like string (${tok.length} characters)`;
  }
  return undefined;
}

/**
 * Why `text` looks like it holds a secret (the kind, never the value), or undefined.
 * Known token formats first, then credential assignments, URL passwords, and long random strings.
 */
export function detectSecret(text: string): string | undefined {
  for (const r of SECRET_RULES) if (r.re.test(text)) return r.kind;
  return findAssignment(text) ?? findUrlCredentials(text) ?? findHighEntropy(text);
}

/** The rejection reason for a learning whose title, content or tags hold a secret. */
export function secretReason(l: CleanLearning): string | undefined {
  const kind = detectSecret(`${l.title}\n${l.content}\n${l.tags.join(' ')}`);
  return kind ? `looks like it contains a secret: ${kind}. Remove it (or write a placeholder like <API_KEY>) and report again` : undefined;
}

// ---------------------------------------------------------------------------------------
// Merging

/** Sentences of a text (split after . ! ? or at line breaks); bullet markers kept. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function sentenceKey(s: string): string {
  return tokens(s).filter((w) => !STOP_WORDS.has(w)).join(' ');
}

/** A sentence this close (Jaccard of all its words, negations included) to a known one says nothing new. */
export const SAME_SENTENCE_JACCARD = 0.7;

/**
 * Append the sentences of `addition` that `existing` does not already say: not the same words
 * (ignoring case, punctuation and stop words), not a reordering of a known sentence (word
 * overlap ≥ SAME_SENTENCE_JACCARD), not contained in it. `added` is false when nothing was new
 * (or the entry is already at MAX_MERGED_CONTENT_CHARS).
 */
export function mergeContent(existing: string, addition: string): { content: string; added: boolean } {
  const known = sentences(existing);
  const keys = new Set(known.map(sentenceKey));
  const sets = known.map((k) => new Set(tokens(k)));
  const whole = ` ${sentenceKey(existing)} `;
  const fresh: string[] = [];
  for (const s of sentences(addition)) {
    const k = sentenceKey(s);
    if (!k || keys.has(k) || whole.includes(` ${k} `)) continue;
    const words = new Set(tokens(s));
    if (sets.some((w) => jaccard(w, words) >= SAME_SENTENCE_JACCARD)) continue;
    keys.add(k);
    sets.push(words);
    fresh.push(s);
  }
  if (fresh.length === 0) return { content: existing, added: false };
  const content = `${existing.trimEnd()}\n\n${fresh.join(' ')}`;
  if (content.length > MAX_MERGED_CONTENT_CHARS) return { content: existing, added: false };
  return { content, added: true };
}

/** Union of two tag lists, order kept, at most MAX_TAGS. */
export function unionTags(a: readonly string[], b: readonly string[]): string[] {
  return normalizeTags([...a, ...b]);
}
