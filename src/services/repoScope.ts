// Which repository and branch a file's lock is keyed by (src/domain/lockKeys.ts): the innermost
// work tree that contains it, found by its `.git` entry. The hook asks on every edit, so what git
// says of a top — its git directory and the repository's key (origin URL or root commit) — is
// looked up once per top and kept; only the branch is
// read on each call, from the tree's HEAD file (one small read, no git process), so a checkout of
// another branch takes effect at once. A tree with no repository key (not a repository, no commit
// and no origin) is looked up again in the background once its answer is RECHECK_MS old: `git
// init` or a first commit may follow; the check that notices it still answers from the old one.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { git } from '../git/exec.js';
import { isInside } from '../domain/paths.js';
import { relPath, repoKey, scopeOf, UNSHARED, type LockItem, type LockScope } from '../domain/lockKeys.js';

/** How long "this tree has no repository key" is believed. */
const RECHECK_MS = 10_000;
/** git's answers are local and fast; a hung one must not hold a hook check for long. */
const GIT_TIMEOUT_MS = 10_000;

interface TreeFacts {
  top: string;
  /** The tree's own git directory (a linked worktree's is under the main one's .git/worktrees). */
  gitDir: string;
  key: string | undefined;
}

interface Entry {
  facts: Promise<TreeFacts | undefined>;
  at: number;
  /** Looked up, and no repository key came of it. */
  keyless: boolean;
  /** A lookup again (keyless and stale) is under way. */
  refreshing: boolean;
}

export class RepoScopes {
  private readonly trees = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The lock scope of work tree `tree` (a real path). Never throws: a failing lookup is unshared. */
  async scope(tree: string): Promise<LockScope> {
    const f = await this.facts(tree);
    if (!f?.key) return UNSHARED;
    let head: string | undefined;
    try {
      head = readFileSync(path.join(f.gitDir, 'HEAD'), 'utf8');
    } catch {
      head = undefined; // the repository went away: nothing to share
    }
    return scopeOf(f.key, f.top, head);
  }

  /**
   * The keys of `paths` (absolute, real): each in the innermost repository that contains it, found
   * by the `.git` entry of its directory or one above (a stat per level, remembered for this call
   * only, so a `git init` counts at once); outside any, its absolute path.
   */
  async items(paths: readonly string[]): Promise<LockItem[]> {
    const tops = new Map<string, string | null>();
    const scopes = new Map<string, LockScope>();
    const out: LockItem[] = [];
    for (const p of paths) {
      const top = topOf(p, tops);
      let scope = UNSHARED;
      if (top) {
        scope = scopes.get(top) ?? await this.scope(top);
        scopes.set(top, scope);
      }
      out.push(scope.repo && isInside(p, scope.top) ? { repo: scope.repo, rel: relPath(scope, p), path: p } : { repo: '', rel: p, path: p });
    }
    return out;
  }

  private facts(tree: string): Promise<TreeFacts | undefined> {
    const e = this.trees.get(tree);
    if (!e) return this.lookUp(tree).facts;
    // A keyless answer gone stale is looked up again in the background: the call that notices
    // still gets the old answer, so no hook check waits for git after a tree's first.
    if (e.keyless && !e.refreshing && this.now() - e.at > RECHECK_MS) {
      e.refreshing = true;
      const next = this.lookUp(tree, false);
      void next.facts.then(() => this.trees.set(tree, next));
    }
    return e.facts;
  }

  private lookUp(tree: string, keep = true): Entry {
    const entry: Entry = { facts: Promise.resolve(undefined), at: this.now(), keyless: false, refreshing: false };
    entry.facts = lookUp(tree).catch(() => undefined).then((f) => {
      entry.keyless = !f?.key;
      return f;
    });
    if (keep) this.trees.set(tree, entry);
    return entry;
  }
}

/** The nearest directory at or above `p` with a `.git` entry (a work tree's top), or null. */
function topOf(p: string, memo: Map<string, string | null>): string | null {
  const seen: string[] = [];
  let top: string | null = null;
  for (let d = p; ; d = path.dirname(d)) {
    const known = memo.get(d);
    if (known !== undefined) {
      top = known;
      break;
    }
    seen.push(d);
    if (existsSync(path.join(d, '.git'))) {
      top = d;
      break;
    }
    if (path.dirname(d) === d) break;
  }
  for (const d of seen) memo.set(d, top);
  return top;
}

async function lookUp(tree: string): Promise<TreeFacts | undefined> {
  const run = async (args: string[]): Promise<string | undefined> => {
    const r = await git(args, { cwd: tree, allowFail: true, timeout: GIT_TIMEOUT_MS });
    return r.code === 0 ? r.stdout.trim() : undefined;
  };
  const where = await run(['rev-parse', '--show-toplevel', '--absolute-git-dir']);
  const [topRaw, gitDir] = where?.split('\n') ?? [];
  if (!topRaw || !gitDir) return undefined; // not in a work tree (or a bare repository)
  let top = topRaw;
  try {
    top = realpathSync(topRaw);
  } catch {
    // keep git's answer
  }
  const [origin, roots] = await Promise.all([run(['config', '--get', 'remote.origin.url']), run(['rev-list', '--max-parents=0', 'HEAD'])]);
  const rootCommit = roots?.split('\n').map((s) => s.trim()).filter(Boolean).sort()[0];
  return { top, gitDir, key: repoKey({ top, origin, rootCommit }) };
}
