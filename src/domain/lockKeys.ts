// Lock keys (issue 29 point 2; docs/decisions.md "Locks keyed by repository"): a file is locked by
// the repository and branch its work tree has checked out and its path inside that tree, so agents
// in two clones of one repository on one branch exclude each other, while two branches (worktree
// jobs on their own) do not. Outside any repository that can be named, a path is its own key, as
// before. Pure: the facts (origin URL, root commit, HEAD, the tree's top) are read elsewhere
// (src/services/repoScope.ts).
import path from 'node:path';

/**
 * Where a work tree's files are locked. `repo` is `<repository key>@<branch>` and `top` the work
 * tree's top (a real path); unshared (outside a repository, no name for it, or a detached HEAD):
 * both empty, and a file's key is its absolute path.
 */
export interface LockScope {
  repo: string;
  top: string;
}

export const UNSHARED: LockScope = { repo: '', top: '' };

/** One lock's key: the scope's repo and the path inside the tree ('/'-rooted), or '' and the absolute path. */
export interface LockKey {
  repo: string;
  rel: string;
}

/** A key with the path the caller knows it by (absolute, in its own tree). */
export interface LockItem extends LockKey {
  path: string;
}

/** The key path of `abs` (absolute, inside scope.top): '/' + its path below the top, '/' for the top itself. */
export function relPath(scope: LockScope, abs: string): string {
  if (!scope.top) return abs;
  if (abs === scope.top) return '/';
  return abs.slice(scope.top.length);
}

/** The absolute path in scope's tree of a key path (the inverse of relPath). */
export function absPath(scope: LockScope, rel: string): string {
  if (!scope.top) return rel;
  return rel === '/' ? scope.top : scope.top + rel;
}

export function lockItems(scope: LockScope, paths: readonly string[]): LockItem[] {
  return paths.map((p) => ({ repo: scope.repo, rel: relPath(scope, p), path: p }));
}

/** One string per key (the wait-for graph's node names, and how a key is shown): `repo:/rel`, or the absolute path. */
export function keyString(k: LockKey): string {
  return k.repo ? `${k.repo}:${k.rel}` : k.rel;
}

/**
 * The repository's name from its `origin` URL, the same for every way of writing one remote:
 * scheme, user, password and port dropped, host lower-cased, a trailing `.git` and slashes
 * dropped (`git@github.com:o/r.git`, `https://tok@github.com/o/r`, `ssh://git@github.com:22/o/r/`
 * → `github.com/o/r`). A local path (`/srv/r.git`, `file:///srv/r`, relative to `top`) → `file:/srv/r`.
 * Undefined for an empty URL.
 */
export function normaliseOrigin(url: string, top: string): string | undefined {
  const u = url.trim();
  if (!u) return undefined;
  const strip = (p: string): string => p.replace(/\/+$/, '').replace(/\.git$/, '').replace(/\/+$/, '');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(u);
  if (scheme) {
    const [, name, rest] = scheme as unknown as [string, string, string];
    if (name.toLowerCase() === 'file') return `file:${strip(path.posix.normalize(rest.replace(/^[^/]*/, '') || '/'))}`;
    const m = /^(?:[^@/]*@)?(\[[^\]]*\]|[^/:]*)(?::\d*)?(\/.*)?$/.exec(rest);
    if (!m) return undefined;
    return `${m[1]!.toLowerCase()}${strip(path.posix.normalize(m[2] ?? '/'))}`;
  }
  // scp-like: [user@]host:path (no slash before the colon)
  const scp = /^(?:[^@/]*@)?([^/:]+):(.*)$/.exec(u);
  if (scp && !/^[a-z]:[\\/]/i.test(u)) return `${scp[1]!.toLowerCase()}${strip(path.posix.normalize(`/${scp[2]!}`))}`;
  return `file:${strip(path.resolve(top || '/', u))}`;
}

/** The branch HEAD names (`ref: refs/heads/<branch>`), or undefined when it is detached (a commit id) or unreadable. */
export function branchOfHead(head: string): string | undefined {
  const m = /^ref:\s*refs\/heads\/(.+?)\s*$/.exec(head.trim());
  return m?.[1];
}

/** What is known of a work tree's repository. */
export interface RepoFacts {
  /** The tree's top, a real path. */
  top: string;
  /** `remote.origin.url`, when set. */
  origin?: string;
  /** The root commit (the smallest id when there are several), when there is a commit. */
  rootCommit?: string;
}

/** The repository's key: the normalised origin, else `root:<root commit>`; undefined when it has neither. */
export function repoKey(f: RepoFacts): string | undefined {
  const o = f.origin ? normaliseOrigin(f.origin, f.top) : undefined;
  if (o) return o;
  return f.rootCommit ? `root:${f.rootCommit}` : undefined;
}

/** The scope of a tree whose repository is `key` (or none) with HEAD `head` (the text of its HEAD file). */
export function scopeOf(key: string | undefined, top: string, head: string | undefined): LockScope {
  const branch = head === undefined ? undefined : branchOfHead(head);
  if (!key || !branch) return UNSHARED;
  return { repo: `${key}@${branch}`, top };
}
