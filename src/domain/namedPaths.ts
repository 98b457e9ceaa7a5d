// Paths a shell command NAMES, for the guard that keeps agents out of the hub's state
// (src/services/stateGuard.ts, docs/security.md "The state is refused by name"). Not what the
// command reads — no parser can say that of `python -c …` — but every path it spells out,
// wherever: each shell word, each path-like piece of a word (`open('/x/lead.token')`,
// `-d@/x/f`, `if=/x/f`), here-document bodies, comments, `bash -c`/`eval`/`$(…)` text.
// Relative ones are joined onto every directory the command may be in: the start directories
// and every literal `cd`/`pushd`/`-C`/`--directory` target seen anywhere in it, so control flow
// never needs to be followed (an extra base can only add candidates). Known variables ($HOME,
// anything the child inherits) and `~` are expanded; brace alternatives are listed; globs are
// kept for globReaches. Unknown variables, eval'd strings built at run time, files a script
// reads: not named, so not here (the OS confinement covers those).
// Pure: no I/O; results are joined, not normalised (`..` after a symlink is the kernel's to
// apply: the caller walks them physically and lexically). Never throws.
import path from 'node:path';
import { parse, type ParseEntry } from 'shell-quote';
import { isInside } from './paths.js';

export interface NamingContext {
  /** Absolute directories relative paths start from (the call's cwd, the agent's work tree). */
  cwds: readonly string[];
  /** Variables whose values are known (`HOME` also gives `~`); others are unknown. */
  vars: Readonly<Record<string, string | undefined>>;
}

const UNKNOWN = '\uE010'; // what an unknown variable expands to
const MAX_DEPTH = 4; // nested `bash -c "…$(…)…"` levels re-read as scripts
const MAX_BASES = 16;
const MAX_BRACES = 64;
/** More candidates than this and a command is not read to its end: `truncated` (the guard refuses it). */
export const MAX_NAMED = 200_000;
const CHDIR_WORDS = new Set(['cd', 'pushd']);
const CHDIR_OPTS = new Set(['-C', '--directory', '--chdir', '--cwd', '--work-tree', '--git-dir']);
// A path-like run of text: what is left between quotes, blanks and shell/code punctuation.
const RUN = /[^\s'"`()<>;|&=:$\\]+/g;
// Characters that may stand just before a path inside a word without being part of it.
const PATH_CHAR = /[A-Za-z0-9._~+-]/;
const SCRIPTY = /[\s;|&<>()]/;
const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'fish', 'su', 'script', 'flock']);

export const hasGlob = (s: string): boolean => /[*?[]/.test(s);

/** Every absolute path `command` names (joined onto each possible directory; may hold globs); `truncated` past MAX_NAMED. */
export function bashNamedPaths(command: string, c: NamingContext): { paths: string[]; truncated: boolean } {
  if (typeof command !== 'string' || command === '') return { paths: [], truncated: false };
  const found: Found = { words: [], pieces: [], dirs: [] };
  const text = command.replace(/\r\n?/g, '\n');
  read(text.replaceAll('`', ' ; '), c, found, 0, true);
  pieces(expandText(text, c), found.pieces); // what the lexer may have mangled, read as plain text
  const bases = basesOf(found.dirs, c);
  const out = new Set<string>();
  for (const [list, bare] of [[found.words, true], [found.pieces, false]] as const) {
    for (const w of list) for (const p of candidates(w, c, bases, bare)) { out.add(p); if (out.size > MAX_NAMED) return { paths: [...out], truncated: true }; }
  }
  return { paths: [...out], truncated: false };
}

/** Where a path given to a tool (Read's file_path, Glob's pattern …) may be: `~` expanded, relative joined onto each cwd. */
export function toolNamedPaths(value: string, c: NamingContext): string[] {
  if (typeof value !== 'string' || value === '') return [];
  return candidates(value, c, c.cwds, true);
}

interface Found {
  /** Whole words: a bare name counts (`tar c state` after `cd` to its parent). */
  words: string[];
  /** Pieces of text: only path-like ones count (with a `/`, or `~/`). */
  pieces: string[];
  /** Directories the command may move to (`cd x`, `git -C x`), in order. */
  dirs: string[];
}

// One script: its words (whole, and cut into pieces), its directory changes, and, for a word
// that is itself a script (`bash -c '…'`, eval's text), that script too. `bare`: whole words
// count even without a `/` (a shell's own words); text that is data or another language
// (here-document bodies, `python -c` code, a quoted `"$(…)"`) counts only where path-like.
function read(script: string, c: NamingContext, f: Found, depth: number, bare: boolean): void {
  let entries: ParseEntry[];
  try {
    entries = parse(script, (k) => (k === 'PWD' ? c.cwds[0] : c.vars[k]) ?? UNKNOWN);
  } catch {
    entries = script.split(/\s+/); // shell-quote refuses e.g. `${}`: read it word by word
  }
  let heredoc: string | null = null; // the delimiter while inside a here-document body
  let expectDelimiter = false;
  let seg: string[] = []; // the words of the current simple command
  const all: string[] = []; // every word, '' where an operator stood (for cd and its operand)
  for (const e of entries) {
    if (typeof e !== 'string') {
      if ('comment' in e) { f.pieces.push(e.comment); if (depth < MAX_DEPTH) read(e.comment, c, f, depth + 1, false); continue; }
      if (e.op === 'glob') { seg.push(e.pattern); all.push(e.pattern); (bare && heredoc === null ? f.words : f.pieces).push(e.pattern); continue; }
      if (e.op === '<<' || e.op === '<<-') expectDelimiter = true;
      if (heredoc === null) seg = [];
      all.push('');
      continue;
    }
    if (expectDelimiter) { heredoc = e; expectDelimiter = false; continue; }
    if (heredoc !== null && e === heredoc) { heredoc = null; continue; }
    const whole = bare && heredoc === null; // a here-document body is data
    all.push(e);
    if (e.includes(UNKNOWN)) f.pieces.push(...e.split(UNKNOWN));
    else {
      (whole ? f.words : f.pieces).push(e);
      const eq = /^-{0,2}[A-Za-z0-9_.-]*=(.*)$/s.exec(e); // name=value, --opt=value, if=value
      if (eq?.[1]) (whole ? f.words : f.pieces).push(eq[1]);
      f.pieces.push(e);
    }
    if (depth < MAX_DEPTH && SCRIPTY.test(e)) read(e.replaceAll(UNKNOWN, '$__X'), c, f, depth + 1, whole && isShellText(seg));
    if (heredoc === null) seg.push(e);
  }
  for (let i = 0; i < all.length; i++) {
    const w = all[i] as string;
    const long = /^(--[a-z-]+)=(.+)$/s.exec(w);
    if (long && CHDIR_OPTS.has(long[1] as string)) { f.dirs.push(long[2] as string); continue; }
    if (!CHDIR_OPTS.has(w) && !CHDIR_WORDS.has(w)) continue;
    let j = i + 1;
    while (CHDIR_WORDS.has(w) && /^-[LPe@]+$/.test(all[j] ?? '')) j++; // cd -P dir
    const to = all[j];
    if (to === undefined || to === '') { if (CHDIR_WORDS.has(w) && c.vars.HOME) f.dirs.push(c.vars.HOME); continue; }
    f.dirs.push(to);
  }
}

// Is the next word of this simple command (`seg` so far) shell text: `bash -c <it>`, `eval <it>`?
function isShellText(seg: readonly string[]): boolean {
  const prev = seg.at(-1) ?? '';
  if (seg.some((w) => path.posix.basename(w) === 'eval')) return true;
  return /^-[A-Za-z]*c[A-Za-z]*$/.test(prev) && seg.some((w) => SHELLS.has(path.posix.basename(w)));
}

// Path-like runs of `text` (with a `/`, or starting with `~`), and every absolute path or `~/…`
// that starts inside a run after a character that cannot be part of a name (`@/x`, `{/x`).
function pieces(text: string, out: string[]): void {
  for (const m of text.matchAll(RUN)) {
    const run = m[0];
    if (run.includes('/') || run.startsWith('~')) out.push(run);
    for (let i = 1; i < run.length; i++) {
      const ch = run[i];
      if ((ch === '/' || (ch === '~' && run[i + 1] === '/')) && !PATH_CHAR.test(run[i - 1] as string)) out.push(run.slice(i));
    }
  }
}

// The raw text with known variables written out (`$HOME/x`, `${HOME}/x`): pieces read from it too.
function expandText(text: string, c: NamingContext): string {
  return text.replace(/\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g, (all, a?: string, b?: string) => {
    const k = (a ?? b) as string;
    return (k === 'PWD' ? c.cwds[0] : c.vars[k]) ?? all;
  });
}

// Every directory relative names may start from: the cwds, then each `cd` target joined onto
// every base known so far (literal targets only), at most MAX_BASES.
function basesOf(dirs: readonly string[], c: NamingContext): string[] {
  const bases = [...new Set(c.cwds)];
  for (const d of dirs) {
    if (d === '-' || d.includes(UNKNOWN) || hasGlob(d) || bases.length >= MAX_BASES) continue;
    for (const t of braces(d)) {
      const abs = home(t, c);
      if (abs === undefined) continue;
      const next = abs.startsWith('/') ? [abs] : bases.map((b) => join(b, abs));
      for (const n of next) if (!bases.includes(n) && bases.length < MAX_BASES) bases.push(n);
    }
  }
  return bases;
}

function candidates(s: string, c: NamingContext, bases: readonly string[], bare: boolean): string[] {
  const out: string[] = [];
  for (const alt of braces(s)) {
    const p = home(alt, c);
    if (p === undefined || p === '') continue;
    if (p.startsWith('/')) { out.push(p); continue; }
    if (!bare && !p.includes('/')) continue;
    for (const b of bases) out.push(join(b, p));
  }
  return out;
}

const join = (base: string, rel: string): string => `${base.replace(/\/+$/, '')}/${rel}`;

// `~` and `~/x` with HOME known; `~user`: undefined (not followed).
function home(p: string, c: NamingContext): string | undefined {
  if (!p.startsWith('~')) return p;
  if (p !== '~' && !p.startsWith('~/')) return undefined;
  return c.vars.HOME ? c.vars.HOME + p.slice(1) : undefined;
}

/** Brace expansion (`a{b,c}d` → abd, acd; nested; at most MAX_BRACES results); `{x}` and unmatched braces stay literal. */
export function braces(s: string): string[] {
  const open = s.indexOf('{');
  if (open < 0) return [s];
  let depth = 0;
  const commas: number[] = [];
  for (let i = open + 1; i < s.length; i++) {
    const ch = s[i];
    if (ch === '{') depth++;
    else if (ch === '}' && depth-- === 0) {
      if (commas.length === 0) return braces(s.slice(i + 1)).map((rest) => s.slice(0, i + 1) + rest).slice(0, MAX_BRACES);
      const cuts = [open, ...commas, i];
      const out: string[] = [];
      for (let k = 1; k < cuts.length && out.length < MAX_BRACES; k++) {
        for (const alt of braces(s.slice(0, open) + s.slice((cuts[k - 1] as number) + 1, cuts[k]) + s.slice(i + 1))) {
          if (out.length < MAX_BRACES) out.push(alt);
        }
      }
      return out;
    } else if (ch === ',' && depth === 0) commas.push(i);
  }
  return [s];
}

/**
 * Can the glob `pattern` (absolute) expand to `dir` or to something inside it? Segment by
 * segment, as bash expands it: `*`, `?` and `[…]` never cross a `/` nor match a leading dot;
 * a `**` segment spans any number of segments (globstar). A pattern that stops above `dir`
 * (`/tmp/*` for `/tmp/x/state`) names a parent, not the directory: false.
 */
export function globReaches(pattern: string, dir: string): boolean {
  const p = path.posix.normalize(pattern).split('/').filter(Boolean);
  const d = path.posix.normalize(dir).split('/').filter(Boolean);
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    if (j === d.length) return true;
    if (i === p.length) return false;
    const key = `${i},${j}`;
    const hit = memo.get(key);
    if (hit !== undefined) return hit;
    const seg = p[i] as string;
    const name = d[j] as string;
    const dotOk = !name.startsWith('.') || seg.startsWith('.');
    const r = seg === '**' ? go(i + 1, j) || (dotOk && go(i, j + 1)) : dotOk && segmentRe(seg).test(name) && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

function segmentRe(seg: string): RegExp {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i] as string;
    if (ch === '*') re += '.*';
    else if (ch === '?') re += '.';
    else if (ch === '\\' && i + 1 < seg.length) re += escape(seg[++i] as string);
    else if (ch === '[') {
      const end = seg.indexOf(']', i + 2);
      if (end < 0) { re += '\\['; continue; }
      const body = seg.slice(i + 1, end).replace(/^[!^]/, '^').replace(/\\/g, '\\\\');
      re += `[${body}]`;
      i = end;
    } else re += escape(ch);
  }
  try {
    return new RegExp(`^${re}$`, 's');
  } catch {
    return /^/; // a class we cannot read: assume it may match
  }
}

const escape = (ch: string): string => ch.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** Candidates walked through the file system (symlinks) per call; the rest are judged as written. */
export const MAX_WALKED = 20_000;

/**
 * The first candidate that lands in one of `places`: as written (`..` applied lexically), or where
 * `walk` says it really leads (symlinks followed; undefined: it cannot be told). A glob is
 * judged by globReaches, its literal directory walked. `strict`: a candidate that cannot be
 * walked is a hit with no place. The first MAX_WALKED candidates are walked, all are read.
 */
export function firstInside<P extends { path: string }>(
  candidates: readonly string[], places: readonly P[], walk: (p: string) => string | undefined, strict: boolean,
): { path: string; place?: P } | undefined {
  let walked = 0;
  for (const cand of candidates) {
    if (hasGlob(cand)) {
      const cut = cand.slice(0, cand.search(/[*?[]/)).lastIndexOf('/');
      const dir = cand.slice(0, cut) || '/';
      const real = (walked++ < MAX_WALKED ? walk(dir) : undefined) ?? dir;
      const forms = [path.posix.normalize(cand), path.posix.join(real, cand.slice(cut + 1))];
      const place = places.find((p) => forms.some((f) => globReaches(f, p.path)));
      if (place) return { path: forms[0] as string, place };
      continue;
    }
    const lexical = path.posix.resolve(cand);
    let place = places.find((p) => isInside(lexical, p.path));
    if (place) return { path: lexical, place };
    if (walked++ >= MAX_WALKED) continue;
    const physical = walk(cand);
    if (physical === undefined) { if (strict) return { path: cand }; continue; }
    place = places.find((p) => isInside(physical, p.path));
    if (place) return { path: physical === lexical ? lexical : `${lexical} (really ${physical})`, place };
  }
  return undefined;
}
