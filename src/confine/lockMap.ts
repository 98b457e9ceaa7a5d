// Which paths a lock protects in each running child (issue 29 point 2, docs/decisions.md "Locks
// keyed by repository"). A lock is keyed by (repository@branch, path inside the tree), and its
// row carries the holder's own absolute path. In every child but the holder that path is
// protected (as before: a child that can see the holder's checkout must not write it); and in a
// child whose work tree is another checkout of the same repository on the same branch (a clone,
// a worktree), the same file of ITS checkout is protected too: <child's top> + <rel path>. Locks
// outside any repository (repo '') match by their absolute path only. Pure: the child's scope is
// looked up once at its start (src/confine/childScopes.ts).
import { absPath, type LockScope } from '../domain/lockKeys.js';

/** One lock as the mounts and the guard read it. */
export interface HeldLock {
  /** The holder's own absolute path. */
  path: string;
  holder: string;
  /** The key: repository@branch ('' outside one) and the path inside the tree (the absolute path when ''). */
  repo: string;
  rel: string;
}

/** A running child and the scope of the tree it works in (UNSHARED when none). */
export interface ChildTree {
  jobId: string;
  scope: LockScope;
}

/** A lock's file in one checkout: the holder's own (`own`), or the same file in another clone. */
export interface Protected {
  path: string;
  holder: string;
  own: boolean;
}

/** The file of `lock` in `child`'s checkout, when the child works in another checkout of the lock's repository. */
export function copyIn(child: LockScope, lock: HeldLock): string | undefined {
  if (!child.repo || lock.repo !== child.repo) return undefined;
  const p = absPath(child, lock.rel);
  return p === lock.path ? undefined : p;
}

/** The paths `child` must not write: every lock another holds, its own path and its copy in the child's checkout. */
export function protectedFor(child: ChildTree, held: readonly HeldLock[]): Protected[] {
  const out: Protected[] = [];
  for (const h of held) {
    if (h.holder === child.jobId) continue;
    out.push({ path: h.path, holder: h.holder, own: true });
    const copy = copyIn(child.scope, h);
    if (copy) out.push({ path: copy, holder: h.holder, own: false });
  }
  return out;
}

/**
 * Every protected file of every lock, once per path: the holders' own paths, and the copies in the
 * checkouts of running children other than the holder (for the lock guard, which watches them).
 * A path that is some lock's own path is that lock's, whatever copy falls on it too.
 */
export function protectedFiles(held: readonly HeldLock[], children: readonly ChildTree[]): Protected[] {
  const out = new Map<string, Protected>();
  for (const h of held) out.set(h.path, { path: h.path, holder: h.holder, own: true });
  for (const c of children) {
    for (const h of held) {
      if (h.holder === c.jobId) continue;
      const copy = copyIn(c.scope, h);
      if (copy && !out.has(copy)) out.set(copy, { path: copy, holder: h.holder, own: false });
    }
  }
  return [...out.values()];
}
