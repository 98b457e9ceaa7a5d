// Creating and removing per-job git worktrees on a new branch at the repo's HEAD, outside the
// repository (placement.ts says where), with Overseer's folders kept out of `git status` via
// info/exclude (.overseer/, and .overseer-worktrees/ of worktrees made by older versions).
import { appendFile, mkdir, readFile, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '../errors.js';
import { errText, firstLine, gitOut, outLines, realPathOrUndefined, TRANSIENT_GIT_ERROR, withLock } from './exec.js';
import { branchExists, headCommit, repoRootOf } from './repo.js';
import { slugify } from '../domain/job.js';
import { LEGACY_WORKTREES_DIR, isOverseerWorktreeDir, worktreeFolder } from './placement.js';

/** Lines added to <git-common-dir>/info/exclude so Overseer's folders never show as untracked. */
const EXCLUDES = [`${LEGACY_WORKTREES_DIR}/`, '.overseer/'];

/** A job's worktree: the repo it belongs to, its directory, its branch and the commit it started from. */
export interface WorktreeInfo {
  repoRoot: string;
  path: string;
  branch: string;
  baseCommit: string;
}

/** Reject branch names git would misread or refuse, before spending a process on them. */
function checkBranchName(branch: string): void {
  if (branch.trim() === '' || branch.startsWith('-') || /[\s~^:?*[\\\x00-\x1f\x7f]/.test(branch) || branch.includes('..') || branch.includes('@{') || branch.endsWith('.lock') || branch.endsWith('/') || branch.endsWith('.') || branch === 'HEAD') {
    throw new InvalidInputError(`branch ${JSON.stringify(branch)} is not a valid git branch name; pass a name like "overseer/fix-login".`);
  }
}

/** Append the Overseer folders to <commonDir>/info/exclude unless already listed (serialised per
 * file in this process so concurrent creates append once). */
async function ensureExcluded(commonDir: string): Promise<void> {
  const file = path.join(commonDir, 'info', 'exclude');
  await withLock(`exclude:${file}`, async () => {
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch {
      await mkdir(path.dirname(file), { recursive: true });
    }
    const have = new Set(outLines(text).map((l) => l.replace(/^\//, '').replace(/\/?$/, '/')));
    const missing = EXCLUDES.filter((e) => !have.has(e));
    if (missing.length === 0) return;
    const sep = text.length > 0 && !text.endsWith('\n') ? '\n' : '';
    await appendFile(file, `${sep}${missing.join('\n')}\n`);
  });
}

/** Best effort: list .overseer/ and .overseer-worktrees/ in the exclude file of the repository
 * holding `dir` (the hub does this at start so its state never shows up as a change). */
export async function excludeOverseerDirs(dir: string): Promise<void> {
  try {
    const common = (await gitOut(['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: dir })).trim();
    if (common) await ensureExcluded(common);
  } catch {
    /* not a repository: nothing to exclude */
  }
}

/** Undo what a failed `worktree add -b` may have left: its folder, its registration and the
 * branch it created (deleted only while it still points at baseCommit). */
async function undoPartialAdd(top: string, branch: string, wtPath: string, baseCommit: string): Promise<void> {
  const g = (args: string[]): Promise<string> => gitOut(args, { cwd: top });
  await g(['worktree', 'remove', '--force', '--force', wtPath]).catch(() => undefined);
  await rm(wtPath, { recursive: true, force: true });
  await g(['worktree', 'prune']).catch(() => undefined);
  await g(['update-ref', '-d', `refs/heads/${branch}`, baseCommit]).catch(() => undefined);
}

/** `git worktree add -b`, serialised per repository in this process and retried when another
 * git process got in the way. Throws git's error otherwise. */
async function addWorktree(top: string, branch: string, wtPath: string, baseCommit: string): Promise<void> {
  await withLock(`worktrees:${top}`, async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        await gitOut(['worktree', 'add', '-b', branch, wtPath, baseCommit], { cwd: top });
        return;
      } catch (err) {
        const msg = errText(err);
        if (/already exists|is not a valid branch name/i.test(msg)) throw err;
        await undoPartialAdd(top, branch, wtPath, baseCommit);
        if (attempt >= 3 || !TRANSIENT_GIT_ERROR.test(msg)) throw err;
        await new Promise((r) => setTimeout(r, 25 * attempt));
      }
    }
  });
}

/** Create `<base>/<repo>-<hash>/<branch-slug>` (placement.ts; `worktreesDir` is the base, default
 * from the environment) on a new branch at the repo's HEAD, or at `base` (a stacked job: its
 * dependency's branch). Two git processes: one rev-parse
 * (top level, common dir, HEAD), one `worktree add`. Creates in one repository are serialised in
 * this process (git's worktree bookkeeping is not concurrency-safe). */
export async function createWorktree(opts: { repoRoot: string; jobId: string; branch: string; worktreesDir?: string; base?: string }): Promise<WorktreeInfo> {
  const { jobId, branch } = opts;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(jobId)) {
    throw new InvalidInputError(`job id ${JSON.stringify(jobId)} cannot name a worktree folder (letters, digits, ".", "_" and "-" only).`);
  }
  checkBranchName(branch);
  const real = await realPathOrUndefined(opts.repoRoot);
  if (real === undefined) throw new InvalidInputError(`Repository ${opts.repoRoot} does not exist.`);

  let top: string;
  let commonDir: string;
  let baseCommit: string;
  try {
    const [t, c, h] = outLines(await gitOut(['rev-parse', '--show-toplevel', '--git-common-dir', opts.base ? `${opts.base}^{commit}` : 'HEAD'], { cwd: real }));
    if (!t || !c || !h) throw new Error(`unexpected rev-parse output in ${real}`);
    top = (await realPathOrUndefined(t)) ?? t;
    commonDir = path.resolve(real, c);
    baseCommit = h;
  } catch (err) {
    const msg = errText(err);
    if (opts.base && /ambiguous argument|unknown revision|bad revision|needed a single revision/i.test(msg)) {
      throw new InvalidInputError(`The base ${JSON.stringify(opts.base)} does not exist in ${opts.repoRoot} (a branch that was deleted?); spawn again with another base, or without one.`, { cause: err });
    }
    if (/ambiguous argument 'HEAD'|unknown revision/i.test(msg)) {
      throw new InvalidInputError(`The git repository at ${opts.repoRoot} has no commits yet; make a first commit so the worktree has a base.`, { cause: err });
    }
    if (/not a git repository|must be run in a work tree/i.test(msg)) {
      throw new InvalidInputError(`${opts.repoRoot} is not inside a git repository; worktree: true needs one (try \`git init\`).`, { cause: err });
    }
    throw err;
  }

  await ensureExcluded(commonDir);
  const { repoDir, path: wtPath } = worktreeFolder(opts.worktreesDir, top, branch, jobId);
  await mkdir(repoDir, { recursive: true });
  try {
    await addWorktree(top, branch, wtPath, baseCommit);
  } catch (err) {
    const msg = errText(err);
    if (/a branch named .* already exists/i.test(msg)) {
      throw new InvalidInputError(`Branch "${branch}" already exists in ${top}; pass another \`branch\` (e.g. "${branch}-2").`, { cause: err });
    }
    if (/is not a valid branch name/i.test(msg)) {
      throw new InvalidInputError(`branch "${branch}" is not a valid git branch name; pass another \`branch\`.`, { cause: err });
    }
    if (/already exists/i.test(msg)) {
      throw new InvalidInputError(`Worktree folder ${wtPath} already exists; remove it or use another job id.`, { cause: err });
    }
    throw new Error(`git worktree add failed in ${top}: ${firstLine(msg)}`, { cause: err });
  }
  return { repoRoot: top, path: wtPath, branch, baseCommit };
}

/** Remove a worktree folder and prune git's record of it, wherever it is (new layout or the old
 * <repo>/.overseer-worktrees/). A path that is not (or no longer) a worktree is not an error;
 * leftovers in a folder Overseer placed are deleted, and that folder's parent when it is empty. */
export async function removeWorktree(repoRoot: string, wtPath: string): Promise<void> {
  const root = await realPathOrUndefined(repoRoot);
  if (root === undefined) return;
  const target = (await realPathOrUndefined(wtPath)) ?? path.resolve(wtPath);
  const g = (args: string[]): Promise<string> => gitOut(args, { cwd: root });
  await withLock(`worktrees:${root}`, async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        await g(['worktree', 'remove', '--force', '--force', target]);
        break;
      } catch (err) {
        const msg = errText(err);
        if (/is not a working tree|does not exist|No such file|not a git repository/i.test(msg)) break;
        if (attempt >= 3 || !TRANSIENT_GIT_ERROR.test(msg)) throw err;
        await new Promise((r) => setTimeout(r, 25 * attempt));
      }
    }
    // A half-created folder (spawn failed mid-way) is not a registered worktree; delete it when
    // it lies in a folder Overseer placed for this repository, never elsewhere.
    if (isOverseerWorktreeDir(root, target)) {
      await rm(target, { recursive: true, force: true });
      await rmdir(path.dirname(target)).catch(() => undefined); // only when empty
    }
    // pruning is housekeeping; a failure here changes nothing for the caller
    await g(['worktree', 'prune']).catch(() => undefined);
  });
}

/** Where a workflow or debate works: a new worktree on `overseer/<prefix>-<title slug>-<id>` at the repository's HEAD, or `cwd` as it is (its HEAD recorded). */
export async function placeRun(o: { cwd: string; worktree: boolean; id: string; prefix: string; title: string; worktreesDir?: string }): Promise<{ repoRoot: string | null; worktreePath: string | null; branch: string | null; baseCommit: string | null }> {
  if (!o.worktree) return { repoRoot: null, worktreePath: null, branch: null, baseCommit: (await headCommit(o.cwd).catch(() => undefined)) ?? null };
  const repoRoot = await repoRootOf(o.cwd);
  const branch = `overseer/${o.prefix}-${slugify(o.title)}-${o.id.slice(2, 8)}`;
  if (await branchExists(repoRoot, branch)) throw new InvalidInputError(`branch ${branch} already exists; pass another title.`);
  const wt = await createWorktree({ repoRoot, jobId: o.id, branch, worktreesDir: o.worktreesDir });
  return { repoRoot, worktreePath: wt.path, branch, baseCommit: wt.baseCommit };
}
