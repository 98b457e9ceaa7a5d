// The lock scope (repository@branch and the tree's top) of each running child, looked up once when
// the child is first seen running and kept until it is not: the lock mounts' passes and the lock
// guard map a lock onto a child's own checkout from it (src/confine/lockMap.ts) without a git
// process per pass. A branch checked out inside a running child is not followed: its locks are
// those of the branch it started on (the hook, which reads HEAD on every check, follows it).
import { realpathSync } from 'node:fs';
import { UNSHARED, type LockScope } from '../domain/lockKeys.js';
import { RepoScopes } from '../services/repoScope.js';

export class ChildScopes {
  private readonly byJob = new Map<string, { tree: string; scope: Promise<LockScope>; known?: LockScope }>();

  constructor(private readonly scopes: RepoScopes = new RepoScopes()) {}

  /** The scope of job `jobId` working in `tree` (its work dir, else its cwd): looked up once per job. */
  of(jobId: string, tree: string): Promise<LockScope> {
    const e = this.byJob.get(jobId);
    if (e && e.tree === tree) return e.scope;
    let real = tree;
    try {
      real = realpathSync(tree);
    } catch {
      // gone: the lookup answers unshared
    }
    const entry: { tree: string; scope: Promise<LockScope>; known?: LockScope } = { tree, scope: Promise.resolve(UNSHARED) };
    entry.scope = this.scopes.scope(real).catch(() => UNSHARED).then((s) => {
      entry.known = s;
      return s;
    });
    this.byJob.set(jobId, entry);
    return entry.scope;
  }

  /** The scope when its lookup is done already (a synchronous question: a child's plan at launch). */
  known(jobId: string): LockScope | undefined {
    return this.byJob.get(jobId)?.known;
  }

  /** Forget the jobs not in `live` (ended children). */
  keep(live: ReadonlySet<string>): void {
    for (const id of [...this.byJob.keys()]) if (!live.has(id)) this.byJob.delete(id);
  }
}

/** The tree a job works in, as the lock service takes it: its work dir, else its cwd. */
export function treeOf(j: { work_dir: string | null; cwd: string }): string {
  return j.work_dir ?? j.cwd;
}
