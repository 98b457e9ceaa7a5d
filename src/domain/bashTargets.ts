// Files a shell command would write, for the PreToolUse lock hook (docs/coordination.md, "The lock hook").
// Words come from shell-quote; this module only reads them. Invariants: never throws; paths are
// returned exactly as written (relative stays relative; the caller resolves them), deduplicated
// in order; `unknown` is true whenever the command writes somewhere we cannot name ($VAR, glob,
// brace or ~ expansion, eval, xargs/find running a writer, git clean/apply, patch, a relative
// target after `cd`). Unknown commands contribute nothing. Best effort by design: the worktree
// and the sandbox are the hard boundary, this only catches the recognisable writes early.
import { parse, type ParseEntry } from 'shell-quote';
import path from 'node:path';
import { applyPatchTargets } from './applyPatch.js';

/** What a command writes: paths as written, and whether it also writes somewhere unnamed. */
export interface BashTargets {
  paths: string[];
  /** true when the command writes somewhere we cannot name (e.g. `> "$VAR"`, eval, a glob) */
  unknown: boolean;
}

/** One simple command of a shell line, its words joined by spaces; `nested` when it runs under a wrapper (sudo, xargs, bash -c …). */
export interface SimpleCommand {
  text: string;
  nested: boolean;
}

const VAR = '\uE000'; // what every $VAR / $(…) / ${…} expands to
const NL = '\uE001'; // an unquoted newline (a command separator)
const CONT = '\uE002'; // a backslash-newline (line continuation)
const MARKS = /[\uE000-\uE002]/g;
const MAX_DEPTH = 12;

interface Word { text: string; dyn: boolean; glob?: boolean }
type Tok = (Word & { kind: 'w' }) | { kind: 'op'; op: string };
/**
 * `dir`: where relative targets are, relative to the start ('' = the start directory, null = a
 * directory we cannot name: after `cd "$X"`, `cd -`, `popd` past what we saw). `dirs`: pushd's stack.
 */
interface Ctx { out: string[]; unknown: boolean; dir: string | null; dirs: Array<string | null>; segs?: SimpleCommand[] }
type Handler = (args: Word[], ctx: Ctx, stdin: string[], depth: number) => boolean;

const SEPARATORS = new Set([';', '&&', '||', '|', '|&', '&', ';;', ';&', ';;&']);
const REDIRECTS = new Set(['>', '>>', '&>', '&>>', '>|', '<>', '>&', '<', '<&', '<<', '<<-', '<<<']);
const WRITES = new Set(['>', '>>', '&>', '&>>', '>|', '<>']);
const DEVICES = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/;
const ASSIGN = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;
const KEYWORDS = new Set(['!', '{', '}', 'then', 'do', 'else', 'elif', 'if', 'while', 'until']);
const BRACE = /\{[^{}]*(?:,|\.\.)[^{}]*\}/;

const lit = (text: string, dyn = false): Word => ({ text, dyn });

// shell-quote entries → tokens. Unquoted newlines become ';'. A comment swallows the rest of the
// input in shell-quote, so lexing resumes after the comment's newline. `line` counts newlines.
function lex(marked: string): Array<Tok & { line: number }> {
  const out: Array<Tok & { line: number }> = [];
  let line = 0;
  let src: string | null = marked;
  while (src !== null) {
    const entries: ParseEntry[] = parse(src, () => VAR);
    src = null;
    for (const e of entries) {
      if (typeof e === 'string') {
        if (e === NL) out.push({ kind: 'op', op: ';', line: line++ });
        else if (e === CONT) line++;
        else {
          const text = e.replaceAll(` ${NL} `, '\n').replaceAll(` ${CONT} `, '');
          out.push({ kind: 'w', text, dyn: e.includes(VAR) || e.includes('`'), line });
          line += (e.match(/[\uE001\uE002]/g) ?? []).length;
        }
      } else if ('comment' in e) {
        const m = /[\uE001\uE002]/.exec(e.comment);
        if (m) { out.push({ kind: 'op', op: ';', line: line++ }); src = e.comment.slice(m.index + 1); }
      } else if (e.op === 'glob') out.push({ kind: 'w', text: e.pattern, dyn: true, glob: true, line });
      else out.push({ kind: 'op', op: e.op, line });
    }
  }
  return out;
}

const mark = (s: string): string => s.replace(/\\\n/g, ` ${CONT} `).replace(/\n/g, ` ${NL} `);

// Remove here-document bodies (they are data, not commands), one at a time, re-lexing after each
// so that a quote inside a body never confuses the lexer. Returns the lexed rest and the bodies.
function stripHeredocs(command: string): { toks: Tok[]; bodies: string[] } {
  let lines = command.replace(MARKS, '?').replace(/\r\n?/g, '\n').split('\n');
  const bodies: string[] = [];
  for (;;) {
    const toks = lex(mark(lines.join('\n')));
    const ops = toks.filter((t, i) => t.kind === 'op' && (t.op === '<<' || t.op === '<<-') && toks[i + 1]?.kind === 'w');
    const op = ops[bodies.length];
    if (!op || bodies.length >= 32) return { toks, bodies };
    const d = toks[toks.indexOf(op) + 1] as Word;
    const dash = op.kind === 'op' && op.op === '<<-';
    const start = op.line + 1;
    let end = start;
    while (end < lines.length && (dash ? (lines[end] ?? '').replace(/^\t+/, '') : lines[end]) !== d.text) end++;
    bodies.push(lines.slice(start, end).join('\n'));
    lines = [...lines.slice(0, start), ...lines.slice(end + 1)];
  }
}

function addTarget(ctx: Ctx, w: Word, baseChanged = false): void {
  // A glob or brace expansion writes somewhere under its literal directory: that directory is a
  // target (a write to a directory conflicts with every lock inside it), and the files unknown.
  if ((w.glob || BRACE.test(w.text)) && !w.text.includes(VAR) && !w.text.startsWith('~')) {
    const literal = w.text.slice(0, w.text.search(/[*?[{]/));
    addTarget(ctx, lit(literal.includes('/') ? literal.slice(0, literal.lastIndexOf('/')) || '/' : '.'), baseChanged);
    ctx.unknown = true; // which files it names is still not known (strict mode denies it)
    return;
  }
  if (w.dyn || w.text.startsWith('~') || BRACE.test(w.text)) { ctx.unknown = true; return; }
  if (w.text === '' || DEVICES.test(w.text)) return;
  if (w.text.startsWith('/')) { ctx.out.push(w.text); return; }
  if (ctx.dir === null || baseChanged) { ctx.unknown = true; ctx.out.push(w.text); return; }
  // Joined, not collapsed: `..` in the target is the kernel's (physical) one, resolved by the caller.
  ctx.out.push(ctx.dir ? `${ctx.dir.replace(/\/+$/, '')}/${w.text}` : w.text);
}

// `$(…)` and backticks run commands of their own, wherever they are (inside double quotes too,
// where the lexer sees only a word): take them out, analyse each as a subshell, and leave a
// variable in their place (its value is what the outer command sees). Single quotes are literal.
function hoistSubstitutions(command: string): { rest: string; subs: string[] } {
  const subs: string[] = [];
  let rest = '';
  let single = false;
  let double = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i] as string;
    if (single) { rest += c; if (c === "'") single = false; continue; }
    if (c === '\\') { rest += c + (command[i + 1] ?? ''); i++; continue; }
    if (c === "'" && !double) { single = true; rest += c; continue; }
    if (c === '"') { double = !double; rest += c; continue; }
    if (c === '`') {
      let j = i + 1;
      while (j < command.length && command[j] !== '`') j += command[j] === '\\' ? 2 : 1;
      subs.push(command.slice(i + 1, j).replace(/\\([`$\\])/g, '$1'));
      rest += '$__SUB';
      i = j;
      continue;
    }
    if (c === '$' && command[i + 1] === '(' && command[i + 2] !== '(') {
      const end = closingParen(command, i + 2);
      subs.push(command.slice(i + 2, end));
      rest += '$__SUB';
      i = end;
      continue;
    }
    rest += c;
  }
  return { rest, subs };
}

// Index of the `)` closing a `$(` whose content starts at `from` (quotes inside respected), or the end.
function closingParen(s: string, from: number): number {
  let depth = 0;
  let q: string | null = null;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (q) { if (c === '\\' && q === '"') i++; else if (c === q) q = null; continue; }
    if (c === '\\') { i++; continue; }
    if (c === "'" || c === '"') q = c;
    else if (c === '(') depth++;
    else if (c === ')' && depth-- === 0) return i;
  }
  return s.length;
}

function script(command: string, ctx: Ctx, depth: number): void {
  if (command.includes('`') || command.includes('$(')) {
    const { rest, subs } = hoistSubstitutions(command);
    for (const sub of subs) {
      const saved: [string | null, Array<string | null>] = [ctx.dir, [...ctx.dirs]];
      if (depth < MAX_DEPTH) script(sub, ctx, depth + 1);
      else ctx.unknown = true;
      [ctx.dir, ctx.dirs] = saved;
    }
    command = rest;
  }
  const { toks, bodies } = stripHeredocs(command);
  const stack: Array<{ words: Word[]; stdin: string[] }> = [];
  const dirs: Array<[string | null, Array<string | null>]> = []; // a subshell's cd ends with it
  let cur = { words: [] as Word[], stdin: [] as string[] };
  let body = 0;
  const finish = (): void => { run(cur.words, ctx, cur.stdin, depth, false); cur = { words: [], stdin: [] }; };
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i] as Tok;
    if (t.kind === 'w') { cur.words.push(t); continue; }
    if (SEPARATORS.has(t.op)) finish();
    else if (t.op === '(' || t.op === '<(' || t.op === '>(') { stack.push(cur); dirs.push([ctx.dir, [...ctx.dirs]]); cur = { words: [], stdin: [] }; }
    else if (t.op === ')') { finish(); cur = stack.pop() ?? cur; const d = dirs.pop(); if (d) [ctx.dir, ctx.dirs] = d; }
    else if (REDIRECTS.has(t.op)) {
      const last = cur.words[cur.words.length - 1];
      if (last && !last.dyn && /^\d+$/.test(last.text)) cur.words.pop(); // `2>` is an fd number
      const next = toks[i + 1];
      if (next?.kind !== 'w') continue;
      i++;
      if (t.op === '<<' || t.op === '<<-') { const b = bodies[body++]; if (b !== undefined) cur.stdin.push(b); }
      else if (t.op === '<<<') cur.stdin.push(next.text);
      else if (WRITES.has(t.op) || (t.op === '>&' && !/^(\d+|-)$/.test(next.text))) addTarget(ctx, next);
    }
  }
  finish();
  while (stack.length > 0) { cur = stack.pop() ?? cur; finish(); }
}

// One simple command: skip assignments and keywords, record it, dispatch on the command name.
function run(words: Word[], ctx: Ctx, stdin: string[], depth: number, nested: boolean): boolean {
  let i = 0;
  while (i < words.length && !words[i]?.dyn && (ASSIGN.test(words[i]?.text ?? '') || KEYWORDS.has(words[i]?.text ?? ''))) i++;
  const head = words[i];
  if (!head) return false;
  ctx.segs?.push({ text: words.slice(i).map((w) => w.text.replaceAll(VAR, '$')).join(' '), nested });
  if (head.dyn) return false;
  if (depth > MAX_DEPTH) { ctx.unknown = true; return false; }
  const h = HANDLERS[path.posix.basename(head.text)];
  return h ? h(words.slice(i + 1), ctx, stdin, depth) : false;
}

interface Spec { arg?: string; opt?: string; digits?: string; long?: string[]; posix?: boolean }
interface Opts { opts: Map<string, Word | null>; operands: Word[]; dashdash: number }

// getopt-style: short clusters (`-rf`, `-i.bak`, `-tDIR`), `--long[=v]`, `--`; GNU permutation
// unless `posix` (stop at the first operand: the rest belongs to a wrapped command).
function getopt(args: Word[], s: Spec): Opts {
  const opts = new Map<string, Word | null>();
  const operands: Word[] = [];
  let dashdash = -1;
  for (let i = 0; i < args.length; i++) {
    const w = args[i] as Word;
    const t = w.text;
    if (w.dyn || t === '-' || !t.startsWith('-')) {
      if (s.posix) { operands.push(...args.slice(i)); break; }
      operands.push(w);
    } else if (t === '--') { dashdash = operands.length; operands.push(...args.slice(i + 1)); break; }
    else if (t.startsWith('--')) {
      const eq = t.indexOf('=');
      const name = eq < 0 ? t.slice(2) : t.slice(2, eq);
      opts.set(name, eq >= 0 ? lit(t.slice(eq + 1)) : s.long?.includes(name) ? (args[++i] ?? null) : null);
    } else {
      for (let j = 1; j < t.length; j++) {
        const c = t[j] as string;
        const rest = t.slice(j + 1);
        if (s.arg?.includes(c)) { opts.set(c, rest ? lit(rest) : (args[++i] ?? null)); break; }
        if (s.opt?.includes(c)) { opts.set(c, lit(rest)); break; }
        const d = s.digits?.includes(c) ? (/^[0-9a-fA-Fx]*/.exec(rest)?.[0] ?? '') : '';
        opts.set(c, d ? lit(d) : null);
        j += d.length;
      }
    }
  }
  return { opts, operands, dashdash };
}

const has = (o: Opts, ...names: string[]): boolean => names.some((n) => o.opts.has(n));
const val = (o: Opts, ...names: string[]): Word | null => names.map((n) => o.opts.get(n) ?? null).find((w) => w) ?? null;
const addAll = (ctx: Ctx, ws: Word[], baseChanged = false): void => ws.forEach((w) => addTarget(ctx, w, baseChanged));

const files = (s: Spec, skipFirst?: (o: Opts, args: Word[]) => boolean): Handler => (args, ctx) => {
  const o = getopt(args, s);
  addAll(ctx, skipFirst?.(o, args) ? o.operands.slice(1) : o.operands);
  return true;
};

// cp/mv/ln/install: `-t DIR` or the last operand (mv: also its sources; ln NAME: basename).
const copy = (kind: 'cp' | 'mv' | 'ln' | 'install'): Handler => (args, ctx) => {
  const o = getopt(args, { arg: kind === 'install' ? 'mogtS' : 'tS', long: ['target-directory', 'suffix', 'mode', 'owner', 'group'] });
  if (kind === 'install' && has(o, 'd', 'directory')) return false;
  const dir = val(o, 't', 'target-directory');
  const ops = o.operands;
  if (dir) addAll(ctx, kind === 'mv' ? [dir, ...ops] : [dir]);
  else if (ops.length >= 2) addAll(ctx, kind === 'mv' ? ops : ops.slice(-1));
  else if (kind === 'ln' && ops[0]) addTarget(ctx, { ...ops[0], text: path.posix.basename(ops[0].text) });
  return true;
};

// sudo/env/nice/timeout/…: options, then the wrapped command. `stop`: options meaning nothing
// runs (command -v); `opaque`: the command is in a string we do not split (env -S); `chdir`.
interface Wrap { skip?: number; stop?: string[]; opaque?: string[]; chdir?: string[] }
const wrapper = (s: Spec, w: Wrap = {}): Handler => (args, ctx, stdin, depth) => {
  const o = getopt(args, { ...s, posix: true });
  if (has(o, ...(w.opaque ?? []))) { ctx.unknown = true; return true; }
  if (has(o, ...(w.stop ?? []))) return false;
  if (has(o, ...(w.chdir ?? []))) ctx.dir = null;
  return run(o.operands.slice(w.skip ?? 0), ctx, stdin, depth + 1, true);
};

// xargs/find -exec run a command on names we cannot see: a writer there makes the result unknown.
function innerWrites(words: Word[], ctx: Ctx, depth: number): boolean {
  const scratch: Ctx = { out: [], unknown: false, dir: ctx.dir, dirs: [...ctx.dirs], ...(ctx.segs ? { segs: ctx.segs } : {}) };
  const w = run(words, scratch, [], depth + 1, true) || scratch.unknown;
  if (w) ctx.unknown = true;
  return w;
}

// An interpreter given code inline (`python3 -c`, `node -e`) can write any file: what it writes
// cannot be named.
const inline = (flags: string): Handler => (args, ctx) => {
  const o = getopt(args, { posix: true, long: ['eval', 'print'] });
  if (![...flags].some((f) => has(o, f)) && !has(o, 'eval', 'print')) return false;
  ctx.unknown = true;
  return true;
};

const shell: Handler = (args, ctx, _stdin, depth) => {
  const o = getopt(args, { arg: 'oO', long: ['rcfile', 'init-file'], posix: true });
  const s = o.operands[0];
  if (!has(o, 'c') || !s) return false;
  if (s.dyn) { ctx.unknown = true; return true; }
  const before = ctx.out.length;
  const wasUnknown = ctx.unknown;
  script(s.text, ctx, depth + 1);
  return ctx.out.length > before || ctx.unknown !== wasUnknown;
};

const git: Handler = (args, ctx) => {
  let i = 0;
  let moved = false;
  for (; i < args.length && (args[i]?.text ?? '').startsWith('-') && !args[i]?.dyn; i++) {
    const t = args[i]?.text ?? '';
    if (t === '-C') moved = true;
    if (['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--config-env'].includes(t)) i++;
  }
  const sub = args[i];
  if (!sub || sub.dyn) return false;
  const rest = args.slice(i + 1);
  const o = getopt(rest, { arg: 'bBse', long: ['orphan', 'conflict', 'source', 'exclude'] });
  const ops = o.operands;
  if (has(o, 'pathspec-from-file')) { ctx.unknown = true; return true; }
  switch (sub.text) {
    case 'checkout': {
      if (o.dashdash >= 0) addAll(ctx, ops.slice(o.dashdash), moved);
      else if (has(o, 'b', 'B', 'orphan')) return false;
      else if (ops.length >= 2) addAll(ctx, ops.slice(1), moved);
      else if (ops[0] && (ops[0].glob || /^(\.|\.\/|\.\.\/|\/|:)/.test(ops[0].text))) addAll(ctx, ops, moved);
      else if (ops[0]) addTarget(ctx, lit('.'), moved); // `git checkout <branch>` rewrites the tree
      else return false;
      return true;
    }
    case 'restore': case 'rm': case 'mv':
      addAll(ctx, ops, moved);
      return true;
    // Commands that rewrite the work tree as a whole: the tree itself is the target.
    case 'clean':
      if (has(o, 'n', 'dry-run')) return false;
      addTarget(ctx, lit('.'), moved);
      return true;
    case 'apply':
      if (has(o, 'check', 'stat', 'numstat', 'summary') || (has(o, 'cached') && !has(o, 'index'))) return false;
      addTarget(ctx, lit('.'), moved);
      return true;
    case 'reset':
      if (!has(o, 'hard', 'merge', 'keep')) return ops.length > 0 && o.dashdash >= 0 ? (addAll(ctx, ops.slice(o.dashdash), moved), true) : false;
      addTarget(ctx, lit('.'), moved);
      return true;
    case 'stash':
      if (ops[0] && ['list', 'show', 'create', 'store'].includes(ops[0].text)) return false;
      addTarget(ctx, lit('.'), moved);
      return true;
    case 'switch': case 'merge': case 'rebase': case 'pull': case 'cherry-pick': case 'revert': case 'am':
      addTarget(ctx, lit('.'), moved);
      return true;
    default:
      return false;
  }
};

// Codex's apply_patch through the shell: the patch is a here-document or an argument.
const applyPatch: Handler = (args, ctx, stdin) => {
  const texts = [...stdin, ...args.filter((w) => !w.dyn).map((w) => w.text)];
  if (texts.length === 0 || args.some((w) => w.dyn)) ctx.unknown = true;
  texts.forEach((t) => addAll(ctx, applyPatchTargets(t).map((p) => lit(p))));
  return true;
};

// cd/pushd to a literal directory moves where relative targets are; anything else (no argument,
// `-`, a variable, a glob) makes it a directory we cannot name. popd returns to pushd's.
const chdirTo = (args: Word[], ctx: Ctx): void => {
  const ops = getopt(args, { posix: true }).operands;
  const to = ops[0];
  if (!to || to.dyn || to.glob || to.text === '-' || to.text.startsWith('~') || BRACE.test(to.text) || /^[+-]\d+$/.test(to.text)) { ctx.dir = null; return; }
  ctx.dir = to.text.startsWith('/') ? path.posix.normalize(to.text) : ctx.dir === null ? null : path.posix.join(ctx.dir || '.', to.text).replace(/^\.$/, '');
};
const chdir: Handler = (args, ctx) => { chdirTo(args, ctx); return false; };
const pushd: Handler = (args, ctx) => { ctx.dirs.push(ctx.dir); chdirTo(args, ctx); return false; };
const popd: Handler = (_args, ctx) => { ctx.dir = ctx.dirs.length ? (ctx.dirs.pop() as string | null) : null; return false; };

const HANDLERS: Record<string, Handler> = {
  rm: files({}), rmdir: files({}), unlink: files({}), tee: files({}),
  shred: files({ arg: 'ns', long: ['iterations', 'size', 'random-source'] }),
  touch: files({ arg: 'drt', long: ['date', 'reference', 'time'] }),
  truncate: files({ arg: 'sr', long: ['size', 'reference'] }),
  chmod: files({ long: ['reference'] }, (o, args) => !has(o, 'reference') && !args.some((w) => !w.dyn && /^-[rwxXst]+$/.test(w.text))),
  chown: files({ long: ['reference', 'from'] }, (o) => !has(o, 'reference')),
  chgrp: files({ long: ['reference'] }, (o) => !has(o, 'reference')),
  cp: copy('cp'), mv: copy('mv'), ln: copy('ln'), install: copy('install'),
  dd: (args, ctx) => {
    const of = args.filter((w) => w.text.startsWith('of='));
    of.forEach((w) => addTarget(ctx, { ...w, text: w.text.slice(3) }));
    return of.length > 0;
  },
  sed: (args, ctx) => {
    const bsd = args.findIndex((w, k) => w.text === '-i' && args[k + 1]?.text === '' && !args[k + 1]?.dyn);
    const o = getopt(bsd >= 0 ? args.filter((_, k) => k !== bsd + 1) : args, { arg: 'efl', opt: 'i', long: ['expression', 'file', 'line-length'] });
    if (!has(o, 'i', 'in-place')) return false;
    addAll(ctx, has(o, 'e', 'f', 'expression', 'file') ? o.operands : o.operands.slice(1));
    return true;
  },
  perl: (args, ctx) => {
    const o = getopt(args, { arg: 'eEMmI', opt: 'iCdDxF', digits: 'l0', posix: true });
    if (!has(o, 'i')) return false;
    addAll(ctx, has(o, 'e', 'E') ? o.operands : o.operands.slice(1));
    return true;
  },
  apply_patch: applyPatch, applypatch: applyPatch,
  rsync: (args, ctx) => {
    const o = getopt(args, { arg: 'eTfB', long: ['rsh', 'temp-dir', 'filter', 'exclude', 'include', 'exclude-from', 'include-from', 'files-from', 'partial-dir', 'backup-dir', 'suffix', 'chmod', 'chown', 'log-file', 'password-file', 'compare-dest', 'copy-dest', 'link-dest'] });
    const dest = o.operands.length >= 2 ? o.operands.at(-1) : undefined;
    if (!dest) return false;
    if (/^[^/]*:/.test(dest.text)) return false; // a remote destination
    addTarget(ctx, dest);
    return true;
  },
  tar: (args, ctx) => {
    const oldStyle = args[0] && !args[0].dyn && /^[A-Za-z]+$/.test(args[0].text) ? args[0].text : '';
    const o = getopt(oldStyle ? args.slice(1) : args, { arg: 'fCbTXKNgVHI', long: ['file', 'directory', 'exclude', 'files-from', 'exclude-from', 'transform', 'xform', 'owner', 'group', 'mode', 'newer', 'use-compress-program'] });
    const extracting = oldStyle.includes('x') || has(o, 'x', 'extract', 'get');
    const creatingTo = (oldStyle.includes('c') || oldStyle.includes('r') || oldStyle.includes('u') || has(o, 'c', 'create', 'r', 'append', 'u', 'update')) ? val(o, 'f', 'file') : null;
    if (creatingTo) addTarget(ctx, creatingTo);
    if (extracting) addTarget(ctx, val(o, 'C', 'directory') ?? lit('.'));
    return extracting || !!creatingTo;
  },
  cd: chdir, pushd, popd,
  git,
  patch: (args, ctx) => {
    if (has(getopt(args, { arg: 'pioBDFrVYzdgx' }), 'dry-run', 'C')) return false;
    ctx.unknown = true;
    return true;
  },
  eval: (_args, ctx) => { ctx.unknown = true; return true; },
  xargs: (args, ctx, _stdin, depth) => {
    const o = getopt(args, { arg: 'IdEaLnPs', opt: 'ile', long: ['arg-file', 'delimiter', 'max-args', 'max-procs', 'max-chars', 'process-slot-var'], posix: true });
    return o.operands.length > 0 && innerWrites(o.operands, ctx, depth);
  },
  find: (args, ctx, _stdin, depth) => {
    let writes = false;
    const starts = args.slice(0, Math.max(0, args.findIndex((w) => /^[-!(]/.test(w.text)))).filter((w) => !w.dyn);
    const where = (): void => { if (starts.length) addAll(ctx, starts); else addTarget(ctx, lit('.')); };
    for (let i = 0; i < args.length; i++) {
      const t = args[i]?.text;
      if (t === '-delete') { where(); writes = true; }
      if (t !== '-exec' && t !== '-execdir' && t !== '-ok' && t !== '-okdir') continue;
      let j = i + 1;
      while (j < args.length && !(args[j]?.text === ';' || args[j]?.text === '+')) j++;
      if (innerWrites(args.slice(i + 1, j), ctx, depth)) { where(); writes = true; }
      i = j;
    }
    return writes;
  },
  sudo: wrapper({ arg: 'ugpCDrtUTR', long: ['user', 'group', 'prompt', 'close-from', 'chdir', 'role', 'type', 'other-user', 'command-timeout', 'chroot'] }, { chdir: ['D', 'chdir'] }),
  doas: wrapper({ arg: 'uC' }),
  env: wrapper({ arg: 'uCS', long: ['unset', 'chdir', 'split-string'] }, { opaque: ['S', 'split-string'], chdir: ['C', 'chdir'] }),
  command: wrapper({}, { stop: ['v', 'V'] }), builtin: wrapper({}), nohup: wrapper({}), time: wrapper({}), exec: wrapper({ arg: 'a' }),
  nice: wrapper({ arg: 'n', long: ['adjustment'] }),
  timeout: wrapper({ arg: 'sk', long: ['signal', 'kill-after'] }, { skip: 1 }),
  stdbuf: wrapper({ arg: 'ioe', long: ['input', 'output', 'error'] }),
  ionice: wrapper({ arg: 'cnpPu' }),
  bash: shell, sh: shell, zsh: shell, dash: shell, ksh: shell,
  python: inline('c'), python3: inline('c'), python2: inline('c'), node: inline('ep'), nodejs: inline('ep'), deno: inline('e'),
  ruby: inline('e'), php: inline('r'), lua: inline('e'), osascript: inline('e'),
};

function analyse(command: string, segs?: SimpleCommand[]): BashTargets {
  const ctx: Ctx = { out: [], unknown: false, dir: '', dirs: [], ...(segs ? { segs } : {}) };
  if (typeof command !== 'string') return { paths: [], unknown: false };
  try {
    script(command, ctx, 0);
  } catch {
    ctx.unknown = true; // shell-quote refuses e.g. `${}`: we cannot tell what it writes
  }
  return { paths: [...new Set(ctx.out)], unknown: ctx.unknown };
}

/** Files a shell command would write: paths exactly as written (deduplicated, in order) and whether it writes somewhere unnamed. Never throws. */
export function bashWriteTargets(command: string): BashTargets {
  return analyse(command);
}

/** The simple commands of a shell line (pipelines, lists, subshells, $(…), and what sudo/env/xargs/bash -c run), for policy matching. Never throws. */
export function simpleCommands(command: string): SimpleCommand[] {
  const segs: SimpleCommand[] = [];
  analyse(command, segs);
  return segs;
}
