// Lock path resolution and confinement. Every path that reaches the lock table goes through
// resolveLockPath: it becomes an absolute real path ('.' and '..' collapsed, no trailing slash,
// symlinks resolved through the longest existing prefix) inside the caller's work tree, or it
// is rejected with a reason that says what is wrong and how to fix it. Two spellings of one file
// therefore always produce the same lock key. `..` applies after the symlink before it, as in
// the kernel. Uses only fs.realpathSync, fs.lstatSync, fs.readlinkSync (small, cheap,
// synchronous, linear in the path's components); no other I/O. The pure rule (isInside) is in
// src/domain/paths.ts.
import fs from 'node:fs';
import path from 'node:path';
import { isInside } from '../domain/paths.js';

/** A path accepted for locking: absolute, real, inside the work tree. */
export interface ResolvedPath {
  ok: true;
  path: string;
}
/** A path refused for locking; `reason` says what is wrong and how to fix it. */
export interface RejectedPath {
  ok: false;
  input: string;
  reason: string;
}

/** Longest path accepted (input and result), in characters. */
export const MAX_PATH_CHARS = 4096;

// Control characters (C0, DEL, C1). A NUL byte is one of them.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

function reject(input: string, reason: string): RejectedPath {
  return { ok: false, input, reason };
}

function errCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : undefined;
}

/** Most components (after symlinks are expanded) one path may have; deeper trees are refused. */
export const MAX_PATH_COMPONENTS = 256;
const MAX_SYMLINKS = 40; // as Linux's ELOOP limit

// The real path `p` names when the kernel walks it from `base`: component by component, each
// symlink replaced by its target *before* a later `..` applies (so `sub/up/../f` with `sub/up` →
// `..` is `<base>/../f`, not `<base>/sub/f` as a lexical collapse would say). Components past the
// first missing one are joined as written. A symlink whose target does not exist is refused,
// since writing through it would land wherever the link points. One lstat per component: linear.
function physicalPath(base: string, p: string, input: string, allowDangling = false): ResolvedPath | RejectedPath {
  const queue = p.split('/');
  let cur = p.startsWith('/') ? '/' : realRoot(base);
  let links = 0;
  let steps = 0;
  let missing = false;
  while (queue.length) {
    const c = queue.shift() as string;
    if (c === '' || c === '.') continue;
    if (++steps > MAX_PATH_COMPONENTS) return reject(input, `"${input.slice(0, 200)}" has more than ${MAX_PATH_COMPONENTS} path components; lock a shorter path`);
    if (c === '..') { cur = path.dirname(cur); continue; }
    const next = cur === '/' ? `/${c}` : `${cur}/${c}`;
    if (missing) { cur = next; continue; }
    let st: fs.Stats;
    try {
      st = fs.lstatSync(next);
    } catch (e) {
      const code = errCode(e);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return reject(input, `cannot resolve "${input}" (${code ?? String(e)} at ${next}); check the path and its permissions`);
      missing = true;
      cur = next;
      continue;
    }
    if (!st.isSymbolicLink()) { cur = next; continue; }
    if (++links > MAX_SYMLINKS) return reject(input, `"${input}" goes through a symlink loop at ${next}; lock the real file instead`);
    try {
      fs.statSync(next);
    } catch (e) {
      if (errCode(e) === 'ELOOP') return reject(input, `"${input}" goes through a symlink loop at ${next}; lock the real file instead`);
      // A write through a dangling link lands at its target: follow it when asked where.
      if (!allowDangling) return reject(input, `"${input}" goes through ${next}, a symlink whose target does not exist; lock the link's target path instead`);
    }
    const target = fs.readlinkSync(next);
    queue.unshift(...target.split('/'));
    if (target.startsWith('/')) cur = '/';
  }
  return { ok: true, path: cur };
}

function realRoot(root: string): string {
  try {
    return fs.realpathSync(root);
  } catch {
    return path.resolve(root);
  }
}

/** Resolve `p` (absolute, or relative to `base`) to an absolute real path confined to `root`; rejects empty, control chars, over-long, outside root, and root itself unless `allowRoot`. */
export function resolveLockPath(
  p: string,
  base: string,
  root: string,
  opts?: { allowRoot?: boolean },
): ResolvedPath | RejectedPath {
  if (typeof p !== 'string' || p.trim() === '') return reject(String(p), 'the path is empty; give a file path relative to your work tree or absolute');
  if (p.includes('\u0000')) return reject(p, 'the path contains a NUL byte; remove it');
  const ctl = CONTROL_CHARS.exec(p);
  if (ctl) {
    const hex = ctl[0].charCodeAt(0).toString(16).padStart(2, '0');
    return reject(p, `the path contains control character U+00${hex.toUpperCase()}; remove it`);
  }
  if (p.length > MAX_PATH_CHARS) return reject(p, `the path is ${p.length} characters long; the limit is ${MAX_PATH_CHARS}`);
  const rootReal = realRoot(root);
  const resolved = physicalPath(base, p, p);
  if (!resolved.ok) return resolved;
  const real = resolved.path;
  if (real.length > MAX_PATH_CHARS) return reject(p, `"${p}" resolves to a path longer than ${MAX_PATH_CHARS} characters`);
  if (!isInside(real, rootReal)) {
    return reject(p, `"${p}" resolves to ${real}, outside the work tree ${rootReal}; only files inside ${rootReal} can be locked`);
  }
  if (real === rootReal && !opts?.allowRoot) {
    return reject(p, `"${p}" is the work tree root ${rootReal} itself; lock the files or sub-directories you will change`);
  }
  return { ok: true, path: real };
}

/**
 * Where a write to `p` (absolute, or relative to `base`) really lands: symlinks followed (dangling
 * ones too), `..` applied after them. Undefined when it cannot be told (a loop, too deep).
 */
export function realTarget(p: string, base: string): string | undefined {
  if (p.includes('\u0000') || p.length > MAX_PATH_CHARS) return undefined;
  const r = physicalPath(base, p, p, true);
  return r.ok ? r.path : undefined;
}

/** Resolve many: all accepted → deduplicated, sorted real paths; otherwise every rejection (for one error message). */
export function resolveLockPaths(
  paths: string[],
  base: string,
  root: string,
): { ok: true; paths: string[] } | { ok: false; rejected: RejectedPath[] } {
  const ok = new Set<string>();
  const rejected: RejectedPath[] = [];
  for (const p of paths) {
    const r = resolveLockPath(p, base, root);
    if (r.ok) ok.add(r.path);
    else rejected.push(r);
  }
  if (rejected.length > 0) return { ok: false, rejected };
  return { ok: true, paths: [...ok].sort() };
}
