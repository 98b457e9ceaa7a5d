// Lock path resolution and confinement. Every path that reaches the lock table goes through
// resolveLockPath: it becomes an absolute real path ('.' and '..' collapsed, no trailing slash,
// symlinks resolved through the longest existing prefix) inside the caller's work tree, or it
// is rejected with a reason that says what is wrong and how to fix it. Two spellings of one file
// therefore always produce the same lock key. Uses only fs.realpathSync and fs.lstatSync (small,
// cheap, synchronous); no other I/O.
import fs from 'node:fs';
import path from 'node:path';

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

// Real path of `abs` (already absolute and normalised): realpath of the longest existing prefix
// joined with the missing tail. A missing component that is a dangling symlink is refused,
// since writing through it would land wherever the link points.
function realpathLenient(abs: string, input: string): ResolvedPath | RejectedPath {
  const tail: string[] = [];
  let cur = abs;
  for (;;) {
    try {
      const real = fs.realpathSync(cur);
      return { ok: true, path: tail.length === 0 ? real : path.join(real, ...tail.reverse()) };
    } catch (e) {
      const code = errCode(e);
      if (code === 'ELOOP') return reject(input, `"${input}" goes through a symlink loop at ${cur}; lock the real file instead`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        return reject(input, `cannot resolve "${input}" (${code ?? String(e)} at ${cur}); check the path and its permissions`);
      }
      let isLink = false;
      try {
        isLink = fs.lstatSync(cur).isSymbolicLink();
      } catch {
        isLink = false;
      }
      if (isLink) {
        return reject(input, `"${input}" goes through ${cur}, a symlink whose target does not exist; lock the link's target path instead`);
      }
      const parent = path.dirname(cur);
      if (parent === cur) return reject(input, `cannot resolve "${input}": no part of it exists`);
      tail.push(path.basename(cur));
      cur = parent;
    }
  }
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
  const resolved = realpathLenient(path.resolve(base, p), p);
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

/** Is `child` equal to or inside `parent` (both absolute)? Component-wise: /a/bc is not inside /a/b. */
export function isInside(child: string, parent: string): boolean {
  const c = path.resolve(child);
  const p = path.resolve(parent);
  if (c === p) return true;
  const prefix = p.endsWith(path.sep) ? p : p + path.sep;
  return c.startsWith(prefix);
}
