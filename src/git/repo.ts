// Read-only questions about a repository: its top level, its HEAD, whether a branch exists,
// whether a work dir has changes. Each answer costs one git process.
import { InvalidInputError } from '../errors.js';
import { errText, gitOut, outLines, realPathOrUndefined } from './exec.js';

/** git's ways of saying "this directory is not a work tree". */
const NOT_A_REPO = /not a git repository|must be run in a work tree|cannot change to|was not found/i;
/** git's ways of saying "HEAD names no commit yet". */
const NO_COMMITS = /ambiguous argument 'HEAD'|unknown revision|bad revision 'HEAD'|does not have any commits/i;

/** Absolute git top level of dir (real path); InvalidInputError when dir is not in a work tree
 * or the repository has no commit yet. */
export async function repoRootOf(dir: string): Promise<string> {
  const real = await realPathOrUndefined(dir);
  if (real === undefined) {
    throw new InvalidInputError(`cwd ${dir} does not exist; worktree: true needs an existing directory inside a git repository.`);
  }
  let out: string;
  try {
    // One process: the top level, then HEAD resolved (fails when there is no commit yet).
    out = await gitOut(['rev-parse', '--show-toplevel', 'HEAD'], { cwd: real });
  } catch (err) {
    const msg = errText(err);
    if (NOT_A_REPO.test(msg)) {
      throw new InvalidInputError(
        `cwd ${dir} is not inside a git repository; worktree: true needs one. Run \`git init\` there (and make a first commit), or pass worktree: false.`,
        { cause: err },
      );
    }
    if (NO_COMMITS.test(msg)) {
      throw new InvalidInputError(
        `The git repository at ${dir} has no commits yet; worktree: true branches from HEAD, so make a first commit (e.g. \`git add -A && git commit -m "initial"\`), or pass worktree: false.`,
        { cause: err },
      );
    }
    throw err;
  }
  const top = outLines(out)[0];
  if (!top) throw new InvalidInputError(`cwd ${dir} is not inside a git work tree; worktree: true needs one.`);
  return (await realPathOrUndefined(top)) ?? top;
}

/** HEAD sha of dir, or undefined when dir is not in a repository or has no commit. */
export async function headCommit(dir: string): Promise<string | undefined> {
  const real = await realPathOrUndefined(dir);
  if (real === undefined) return undefined;
  try {
    const sha = outLines(await gitOut(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: real }))[0];
    return sha && /^[0-9a-f]{40,64}$/.test(sha) ? sha : undefined;
  } catch {
    return undefined;
  }
}

/** Does refs/heads/<branch> exist in the repository at repoRoot. */
export async function branchExists(repoRoot: string, branch: string): Promise<boolean> {
  const ref = `refs/heads/${branch}`;
  // for-each-ref treats its argument as a pattern; compare the output exactly.
  const out = await gitOut(['for-each-ref', '--format=%(refname)', ref], { cwd: repoRoot });
  return outLines(out).includes(ref);
}

/** Parsed `git status --porcelain=v2 --branch`: the HEAD sha (undefined before the first
 * commit), the checked-out branch (undefined when detached) and whether anything is uncommitted. */
export interface WorkStatus {
  head?: string;
  branch?: string;
  dirty: boolean;
}

/** One `git status` in workDir. Untracked files count, ignored ones do not. */
export async function workStatus(workDir: string): Promise<WorkStatus> {
  const real = await realPathOrUndefined(workDir);
  if (real === undefined) throw new InvalidInputError(`Work dir ${workDir} does not exist.`);
  let out: string;
  try {
    out = await gitOut(['status', '--porcelain=v2', '--branch', '--untracked-files=normal'], { cwd: real });
  } catch (err) {
    if (NOT_A_REPO.test(errText(err))) {
      throw new InvalidInputError(`Work dir ${workDir} is not inside a git repository, so its changes cannot be checked.`, { cause: err });
    }
    throw err;
  }
  const status: WorkStatus = { dirty: false };
  for (const line of out.split('\n')) {
    if (line.startsWith('# branch.oid ')) {
      const oid = line.slice('# branch.oid '.length).trim();
      if (oid !== '(initial)') status.head = oid;
    } else if (line.startsWith('# branch.head ')) {
      const head = line.slice('# branch.head '.length).trim();
      if (head !== '(detached)') status.branch = head;
    } else if (line.length > 0 && !line.startsWith('#')) {
      status.dirty = true;
    }
  }
  return status;
}

/** True when workDir has uncommitted changes (untracked included, ignored not) or, given
 * baseCommit, its HEAD is no longer that commit. Works for any work tree, linked or not. */
export async function hasChanges(workDir: string, baseCommit?: string): Promise<boolean> {
  const st = await workStatus(workDir);
  if (st.dirty) return true;
  if (baseCommit === undefined || baseCommit === '') return false;
  if (st.head === undefined) return true;
  return !(st.head === baseCommit || (baseCommit.length >= 7 && st.head.startsWith(baseCommit)));
}
