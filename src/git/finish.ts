// Finishing a job's worktree: commit what the agent left, measure the diff against the base,
// push the branch and open a PR (problems become notes), then remove the folder, keeping the branch.
import { access } from 'node:fs/promises';
import { errText, firstLine, git, gitOut, outLines } from './exec.js';
import { removeWorktree, type WorktreeInfo } from './create.js';
import { openPullRequest, pushBranch } from './pr.js';
import { workStatus } from './repo.js';

/** Author used when the repository has no user.name / user.email configured. */
const FALLBACK_NAME = 'Overseer';
const FALLBACK_EMAIL = 'overseer@localhost';
/** A commit that waits on a signer or hook longer than this without output is killed. */
const COMMIT_TIMEOUT_MS = 120_000;

/** What finishing a worktree did: the commit, the diff against the base, push / PR and removal. */
export interface FinishResult {
  committed: boolean;
  commit?: string;
  branch: string;
  diffStat: string;
  /** files changed vs baseCommit */
  filesChanged: number;
  pushed: boolean;
  prUrl?: string;
  /** why no push / no PR, in plain words, e.g. "no remote configured", "gh not installed", "gh not authenticated" */
  note?: string;
  removed: boolean;
}

/** `-c user.name=… -c user.email=…` for what the repository does not configure (commits and merges by the hub). */
export async function identityArgs(dir: string): Promise<string[]> {
  // `git config --get-regexp` exits 1 without stderr when nothing matches.
  const ident = await gitOut(['config', '--get-regexp', '^user\\.(name|email)$'], { cwd: dir }).catch(() => '');
  const keys = new Set(outLines(ident).map((l) => l.split(/\s/)[0]?.toLowerCase()));
  const extra: string[] = [];
  if (!keys.has('user.name')) extra.push('-c', `user.name=${FALLBACK_NAME}`);
  if (!keys.has('user.email')) extra.push('-c', `user.email=${FALLBACK_EMAIL}`);
  return extra;
}

/** Commit anything left in the worktree, as the repo's configured author or as Overseer. */
async function commitAll(dir: string, message: string): Promise<string> {
  const g = (args: string[]): Promise<string> => gitOut(args, { cwd: dir });
  await g(['add', '-A']);
  const extra = await identityArgs(dir);
  const msg = message.trim() === '' ? 'Overseer job changes' : message;
  // --no-verify: this is an automatic checkpoint of an agent's work; a failing pre-commit hook
  // must not leave the work uncommitted in a folder we are about to delete. No hooks at all
  // (post-commit too): a hooks path inside the tree is the agent's to write, and the hub runs
  // unconfined.
  await gitOut([...extra, '-c', 'core.hooksPath=/dev/null', 'commit', '--no-verify', '--no-edit', `--message=${msg}`], { cwd: dir, timeout: COMMIT_TIMEOUT_MS });
  return outLines(await g(['rev-parse', 'HEAD']))[0] ?? '';
}

/** Parse the "N files changed" summary line of `git diff --stat`. */
function countFiles(stat: string): number {
  const m = /(\d+) files? changed/.exec(stat);
  return m ? Number(m[1]) : 0;
}

/** At job end: commit leftovers, diff stat vs baseCommit, push to origin, open a PR with gh,
 * remove the worktree folder (keeping the branch). Push and PR problems land in `note`; a
 * failed commit or a worktree moved off its branch keeps the folder so no work is lost. */
export async function finishWorktree(
  wt: WorktreeInfo,
  opts: { message: string; remove?: boolean; push?: boolean; ghBin?: string },
): Promise<FinishResult> {
  const notes: string[] = [];
  const result: FinishResult = { committed: false, branch: wt.branch, diffStat: '', filesChanged: 0, pushed: false, removed: false };
  let keepFolder = false;

  const exists = await access(wt.path).then(() => true, () => false);
  const where = exists ? wt.path : wt.repoRoot;
  if (!exists) {
    notes.push('worktree folder was already gone');
  } else {
    const st = await workStatus(wt.path);
    if (st.branch !== wt.branch) {
      keepFolder = true;
      notes.push(`worktree is on ${st.branch ?? 'a detached HEAD'}, not ${wt.branch}; folder kept for review`);
    }
    if (st.dirty) {
      try {
        result.commit = await commitAll(wt.path, opts.message);
        result.committed = true;
      } catch (err) {
        keepFolder = true;
        notes.push(`commit failed (${firstLine(errText(err))}); worktree kept at ${wt.path}`);
      }
    }
  }

  const tip = exists ? 'HEAD' : `refs/heads/${wt.branch}`;
  try {
    const stat = (await git(['diff', '--stat=200', wt.baseCommit, tip, '--'], { cwd: where })).stdout;
    result.diffStat = stat.trimEnd();
    result.filesChanged = countFiles(stat);
  } catch (err) {
    notes.push(`diff against ${wt.baseCommit.slice(0, 12)} failed: ${firstLine(errText(err))}`);
  }

  const tipSha = outLines(await gitOut(['rev-parse', tip], { cwd: where }).catch(() => ''))[0];
  if (opts.push === false) {
    notes.push('push disabled');
  } else if (tipSha === undefined || tipSha === wt.baseCommit) {
    notes.push('no changes to push');
  } else {
    const push = await pushBranch(where, wt.branch);
    result.pushed = push.pushed;
    if (push.note) notes.push(push.note);
    if (push.pushed) {
      const pr = await openPullRequest(wt.repoRoot, wt.branch, opts.ghBin ?? 'gh');
      if (pr.prUrl) result.prUrl = pr.prUrl;
      if (pr.note) notes.push(pr.note);
    }
  }

  if (opts.remove !== false && !keepFolder) {
    try {
      await removeWorktree(wt.repoRoot, wt.path);
      result.removed = !(await access(wt.path).then(() => true, () => false));
    } catch (err) {
      notes.push(`worktree removal failed: ${firstLine(errText(err))}`);
    }
  }
  if (notes.length > 0) result.note = notes.join('; ');
  return result;
}
