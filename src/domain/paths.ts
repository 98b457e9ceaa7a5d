// Pure path rules. Resolving a path against the file system (symlinks, the real path of a lock)
// is I/O and lives in src/services/realPaths.ts.
import path from 'node:path';

/** Is `child` equal to or inside `parent` (both absolute)? Component-wise: /a/bc is not inside /a/b. */
export function isInside(child: string, parent: string): boolean {
  const c = path.resolve(child);
  const p = path.resolve(parent);
  if (c === p) return true;
  const prefix = p.endsWith(path.sep) ? p : p + path.sep;
  return c.startsWith(prefix);
}
