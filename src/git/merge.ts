// Merging a branch into a target branch (docs/merge.md), the git half: the merge is made in a
// scratch worktree at the target's tip (never in the person's checkout), the caller's checks run
// on that merged result, and only then is the target moved to it — a fast-forward of the main
// checkout when the target is checked out there, else a compare-and-set of the ref. A conflict or
// a failed check leaves the target exactly where it was. `--leave-conflicts` is the one mode that
// merges in the person's checkout, on purpose, and leaves the conflicted files for a person.
// Nothing here knows about jobs.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errText, firstLine, git, gitOut, outLines, realPathOrUndefined, withLock } from './exec.js';

export type MergeMode = 'merge' | 'rebase' | 'squash';

export interface MergeRequest {
  repoRoot: string;
  branch: string;
  /** Target branch; default: the branch checked out in repoRoot. */
  into?: string;
  mode: MergeMode;
  /** `-X ours|theirs` for the conflicting hunks. */
  strategy?: 'ours' | 'theirs';
  message: string;
  /** Runs on the merged result in the scratch worktree; a non-empty list of failures refuses the merge. */
  verify?: (scratch: string) => Promise<{ check: string; detail?: string }[]>;
}

export type MergeOutcome =
  | { ok: true; target: string; commit: string; previous: string; applied: 'checkout' | 'ref'; checked: boolean }
  | { ok: false; reason: 'conflict'; target: string; files: string[]; detail?: string }
  | { ok: false; reason: 'checks_failed'; target: string; failed: { check: string; detail?: string }[] }
  | { ok: false; reason: 'nothing_to_merge'; target: string; detail: string }
  | { ok: false; reason: 'apply_failed'; target: string; detail: string };

/** A refusal before anything was touched (bad input / wrong state), with what to do. */
export class MergeRefused extends Error {
  constructor(message: string, readonly kind: 'not_found' | 'invalid_state' | 'invalid_input' = 'invalid_state') {
    super(message);
    this.name = 'MergeRefused';
  }
}

const NO_HOOKS = ['-c', 'core.hooksPath=/dev/null'];

async function tryGit(dir: string, args: string[]): Promise<string | undefined> {
  try {
    return await gitOut(args, { cwd: dir });
  } catch {
    return undefined;
  }
}

export async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await tryGit(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`])) !== undefined;
}

export async function revParse(repo: string, ref: string): Promise<string | undefined> {
  return outLines((await tryGit(repo, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])) ?? '')[0];
}

/** The branch checked out in `dir` (undefined: detached HEAD). */
export async function checkedOutBranch(dir: string): Promise<string | undefined> {
  return outLines((await tryGit(dir, ['symbolic-ref', '--quiet', '--short', 'HEAD'])) ?? '')[0];
}

/** The checkout in `dir` in one git call: its branch (undefined: detached), HEAD and its dirty tracked files (unmerged included); undefined when not a repository. */
export async function checkoutState(dir: string): Promise<{ branch?: string; head?: string; dirty: string[] } | undefined> {
  const out = await tryGit(dir, ['status', '--porcelain=v2', '--branch', '--untracked-files=no']);
  if (out === undefined) return undefined;
  const st: { branch?: string; head?: string; dirty: string[] } = { dirty: [] };
  for (const l of out.split('\n')) {
    if (l.startsWith('# branch.oid ')) { const v = l.slice(13); if (v !== '(initial)') st.head = v; }
    else if (l.startsWith('# branch.head ')) { const v = l.slice(14); if (v !== '(detached)') st.branch = v; }
    else if (l.startsWith('1 ')) st.dirty.push(l.split(' ').slice(8).join(' '));
    else if (l.startsWith('2 ')) st.dirty.push(l.split(' ').slice(9).join(' ').split('\t')[0]!);
    else if (l.startsWith('u ')) st.dirty.push(l.split(' ').slice(10).join(' '));
  }
  return st;
}

/** `-c user.name=… -c user.email=…` for what the repository does not configure (as finish.ts identityArgs, in one quick call). */
async function identity(dir: string): Promise<string[]> {
  const keys = new Set(outLines((await tryGit(dir, ['config', '--get-regexp', '^user\\.(name|email)$'])) ?? '').map((l) => l.split(/\s/)[0]?.toLowerCase()));
  return [...(keys.has('user.name') ? [] : ['-c', 'user.name=Overseer']), ...(keys.has('user.email') ? [] : ['-c', 'user.email=overseer@localhost'])];
}

/** Where `branch` is checked out among the repository's worktrees (real paths). */
async function checkedOutIn(repo: string, branch: string): Promise<string[]> {
  const out = (await tryGit(repo, ['worktree', 'list', '--porcelain'])) ?? '';
  const paths: string[] = [];
  let cur: string | undefined;
  for (const l of out.split('\n')) {
    if (l.startsWith('worktree ')) cur = l.slice('worktree '.length);
    else if (l === `branch refs/heads/${branch}` && cur) paths.push((await realPathOrUndefined(cur)) ?? cur);
  }
  return paths;
}

/** Files a branch changes relative to where it left `target` (their merge base), and how many lines (added + deleted). */
export async function branchChanges(repo: string, branch: string, target: string): Promise<{ files: string[]; lines: number }> {
  const num = await tryGit(repo, ['diff', '--numstat', '--no-renames', `${target}...${branch}`, '--']);
  if (num === undefined) return { files: [], lines: 0 };
  const files: string[] = [];
  let lines = 0;
  for (const l of outLines(num)) {
    const [a, d, ...f] = l.split('\t');
    files.push(f.join('\t'));
    lines += a === '-' ? 1 : (Number(a) || 0) + (Number(d) || 0); // a binary file counts as one line
  }
  return { files, lines };
}

/** Local branch names of a repository (one git call). */
export async function localBranches(repo: string): Promise<Set<string>> {
  return new Set(outLines((await tryGit(repo, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/'])) ?? ''));
}

interface Resolved { root: string; target: string; targetTip: string; branchTip: string; mainBranch?: string; inMain: boolean }

/** Checks of a merge request, before anything is written. */
export async function resolveMerge(r: Pick<MergeRequest, 'repoRoot' | 'branch' | 'into'>): Promise<Resolved> {
  const root = await realPathOrUndefined(r.repoRoot);
  const main = root ? await checkoutState(root) : undefined;
  if (!root || !main) throw new MergeRefused(`the repository ${r.repoRoot} is gone or is not a git repository`, 'not_found');
  const branchTip = await revParse(root, `refs/heads/${r.branch}`);
  if (!branchTip) throw new MergeRefused(`the branch ${r.branch} no longer exists in ${root} (deleted or renamed): nothing to merge; resume the job (resume_agent) to redo its work`, 'not_found');
  const mainBranch = main.branch;
  const target = r.into ?? mainBranch;
  if (!target) throw new MergeRefused(`${root} has a detached HEAD, so there is no default target branch: check out the branch to merge into, or pass into/--into <branch>`, 'invalid_input');
  if (target === r.branch) throw new MergeRefused(`cannot merge ${r.branch} into itself: pass into/--into another branch`, 'invalid_input');
  const inMain = mainBranch === target;
  const targetTip = inMain ? main.head : await revParse(root, `refs/heads/${target}`);
  if (!targetTip) throw new MergeRefused(`the target branch ${target} does not exist in ${root}`, 'not_found');
  if (!inMain) {
    const elsewhere = await checkedOutIn(root, target);
    if (elsewhere.length) throw new MergeRefused(`the target branch ${target} is checked out in the worktree ${elsewhere[0]}: merge there yourself, or merge into the branch of ${root}`);
  }
  if (inMain && main.dirty.length) {
    // A merge left open (MERGE_HEAD) always shows here too: its unmerged or staged files.
    const dirty = main.dirty;
    throw new MergeRefused(`the main checkout ${root} has uncommitted changes: ${dirty.slice(0, 20).join(', ')}${dirty.length > 20 ? ` (+${dirty.length - 20} more)` : ''}. Commit or stash them (or finish / abort a merge in progress), then merge again`);
  }
  return { root, target, targetTip, branchTip, mainBranch, inMain };
}

/** The merge in a fresh scratch worktree at `start`; returns its HEAD or the conflict. */
async function mergeInScratch(scratch: string, r: MergeRequest, res: Resolved, ident: string[]): Promise<{ commit: string } | { files: string[]; detail?: string } | { nothing: string }> {
  const x = r.strategy ? ['-X', r.strategy] : [];
  const conflicted = async (err: unknown) => {
    const files = outLines((await tryGit(scratch, ['diff', '--name-only', '--diff-filter=U'])) ?? '');
    return { files, ...(files.length ? {} : { detail: firstLine(errText(err)) }) };
  };
  try {
    if (r.mode === 'rebase') {
      await gitOut(['checkout', '--quiet', '--detach', res.branchTip], { cwd: scratch });
      await gitOut([...ident, ...NO_HOOKS, 'rebase', '--no-autosquash', ...x, res.targetTip], { cwd: scratch });
    } else if (r.mode === 'squash') {
      await gitOut([...ident, ...NO_HOOKS, 'merge', '--squash', ...x, res.branchTip], { cwd: scratch });
      if ((await gitOut(['diff', '--cached', '--name-only'], { cwd: scratch })).trim() === '') return { nothing: `${r.branch} adds no change to ${res.target}` };
      await gitOut([...ident, ...NO_HOOKS, 'commit', '--no-verify', '--quiet', `--message=${r.message}`], { cwd: scratch });
    } else {
      await gitOut([...ident, ...NO_HOOKS, 'merge', '--no-ff', '--no-edit', ...x, `--message=${r.message}`, res.branchTip], { cwd: scratch });
    }
  } catch (err) {
    return conflicted(err);
  }
  return { commit: outLines(await gitOut(['rev-parse', 'HEAD'], { cwd: scratch }))[0]! };
}

/**
 * Merge `branch` into the target: in a scratch worktree, verify, then move the target. On every
 * failure the target branch (and the person's checkout) is where it was.
 */
export async function mergeBranch(r: MergeRequest): Promise<MergeOutcome> {
  const res = await resolveMerge(r);
  const { root, target } = res;
  if ((await tryGit(root, ['merge-base', '--is-ancestor', res.branchTip, res.targetTip])) !== undefined) {
    return { ok: false, reason: 'nothing_to_merge', target, detail: `${r.branch} is already merged into ${target}` };
  }
  const ident = await identity(root);
  if (!r.verify && !r.strategy && r.mode !== 'rebase') {
    // Nothing to run on the result: compute it without a worktree (git merge-tree, git >= 2.38).
    const m = await mergeWithoutWorktree(root, r, res, ident);
    if (m !== undefined) {
      if ('nothing' in m) return { ok: false, reason: 'nothing_to_merge', target, detail: m.nothing };
      if ('files' in m) return { ok: false, reason: 'conflict', target, files: m.files, ...(m.detail ? { detail: m.detail } : {}) };
      return applyMerge(root, r, res, m.commit, false);
    }
  }
  const parent = await mkdtemp(join(tmpdir(), 'overseer-merge-'));
  const scratch = join(parent, 'wt');
  try {
    await withLock(`worktrees:${root}`, () => gitOut(['worktree', 'add', '--quiet', '--detach', scratch, res.targetTip], { cwd: root }));
    const m = await mergeInScratch(scratch, r, res, ident);
    if ('nothing' in m) return { ok: false, reason: 'nothing_to_merge', target, detail: m.nothing };
    if ('files' in m) return { ok: false, reason: 'conflict', target, files: m.files, ...(m.detail ? { detail: m.detail } : {}) };
    const failed = r.verify ? await r.verify(scratch) : [];
    if (failed.length) return { ok: false, reason: 'checks_failed', target, failed };
    return await applyMerge(root, r, res, m.commit, !!r.verify);
  } finally {
    await withLock(`worktrees:${root}`, async () => {
      await tryGit(root, ['worktree', 'remove', '--force', '--force', scratch]);
      await tryGit(root, ['worktree', 'prune']);
    });
    await rm(parent, { recursive: true, force: true });
  }
}

/** Move the target to `commit` (a descendant of its tip), only from where it was when we started. */
async function applyMerge(root: string, r: MergeRequest, res: Resolved, commit: string, checked: boolean): Promise<MergeOutcome> {
  const { target } = res;
  if (res.inMain) {
    const now = await checkoutState(root);
    if (now?.branch !== target || now.head !== res.targetTip || now.dirty.length) {
      return { ok: false, reason: 'apply_failed', target, detail: `${root} moved while merging (another commit or checkout); nothing was changed, merge again` };
    }
    try {
      await gitOut([...NO_HOOKS, 'merge', '--ff-only', '--quiet', commit], { cwd: root });
    } catch (err) {
      // ff-only changes nothing when it refuses; put the checkout back if it got half-way.
      if ((await revParse(root, 'HEAD')) !== res.targetTip) await tryGit(root, ['reset', '--hard', '--quiet', res.targetTip]);
      return { ok: false, reason: 'apply_failed', target, detail: `could not fast-forward ${target} in ${root}: ${firstLine(errText(err))}` };
    }
    return { ok: true, target, commit, previous: res.targetTip, applied: 'checkout', checked };
  }
  try {
    await gitOut(['update-ref', '-m', `overseer: ${r.message}`, `refs/heads/${target}`, commit, res.targetTip], { cwd: root });
  } catch (err) {
    return { ok: false, reason: 'apply_failed', target, detail: `${target} moved while merging: ${firstLine(errText(err))}; nothing was changed, merge again` };
  }
  return { ok: true, target, commit, previous: res.targetTip, applied: 'ref', checked };
}

/** merge / squash as objects only (`git merge-tree --write-tree` + `commit-tree`); undefined when this git cannot. */
async function mergeWithoutWorktree(root: string, r: MergeRequest, res: Resolved, ident: string[]): Promise<{ commit: string } | { files: string[]; detail?: string } | { nothing: string } | undefined> {
  const t = await git(['merge-tree', '--write-tree', '--name-only', '--no-messages', res.targetTip, res.branchTip], { cwd: root, allowFail: true });
  if (t.code !== 0 && t.code !== 1) return undefined; // too old a git (usage error), or something else: the worktree path decides
  const [tree, ...rest] = t.stdout.split('\n');
  if (t.code === 1) {
    const files = [...new Set(rest.map((l) => l.trim()).filter((l) => l.length > 0))];
    return { files };
  }
  if (r.mode === 'squash' && tree === outLines(await gitOut(['rev-parse', `${res.targetTip}^{tree}`], { cwd: root }))[0]) return { nothing: `${r.branch} adds no change to ${res.target}` };
  const parents = r.mode === 'squash' ? ['-p', res.targetTip] : ['-p', res.targetTip, '-p', res.branchTip];
  const commit = outLines(await gitOut([...ident, 'commit-tree', tree!, ...parents, '-m', r.message], { cwd: root }))[0]!;
  return { commit };
}

/**
 * `--leave-conflicts` after a conflict: run the same merge in the person's checkout (the target
 * must be checked out there and clean) and leave the conflicted files for a person to resolve.
 * Returns the files and exactly how to finish or abort.
 */
export async function mergeLeavingConflicts(r: MergeRequest): Promise<{ files: string[]; finish: string; abort: string; target: string; root: string }> {
  const res = await resolveMerge(r);
  if (!res.inMain) throw new MergeRefused(`leave_conflicts needs the target branch checked out in ${res.root} (it has ${res.mainBranch ?? 'a detached HEAD'}, the target is ${res.target}): check out ${res.target} there first`);
  if (r.mode === 'rebase') throw new MergeRefused('leave_conflicts cannot be used with rebase (a half-done rebase would move the person\'s checkout off its branch): use a merge or squash', 'invalid_input');
  const ident = await identity(res.root);
  const x = r.strategy ? ['-X', r.strategy] : [];
  const args = r.mode === 'squash' ? ['merge', '--squash', ...x, r.branch] : ['merge', '--no-ff', '--no-commit', ...x, `--message=${r.message}`, r.branch];
  try {
    await gitOut([...ident, ...NO_HOOKS, ...args], { cwd: res.root });
  } catch {
    // expected: the conflict
  }
  const files = outLines((await tryGit(res.root, ['diff', '--name-only', '--diff-filter=U'])) ?? '');
  if (files.length === 0) {
    // It merged cleanly here after all (the target moved?): do not leave an uncommitted merge behind.
    await tryGit(res.root, r.mode === 'squash' ? ['reset', '--hard', '--quiet', res.targetTip] : ['merge', '--abort']);
    throw new MergeRefused(`${r.branch} no longer conflicts with ${res.target}: merge it again without leave_conflicts`);
  }
  const q = (f: string) => (/^[\w./@-]+$/.test(f) ? f : `'${f.replace(/'/g, `'\\''`)}'`);
  const finish = r.mode === 'squash'
    ? `cd ${q(res.root)} && (edit the files, remove the conflict markers) && git add ${files.map(q).join(' ')} && git commit -m ${q(r.message)}`
    : `cd ${q(res.root)} && (edit the files, remove the conflict markers) && git add ${files.map(q).join(' ')} && git commit --no-edit`;
  const abort = r.mode === 'squash' ? `cd ${q(res.root)} && git reset --merge` : `cd ${q(res.root)} && git merge --abort`;
  return { files, finish, abort, target: res.target, root: res.root };
}

/**
 * Send back (docs/decisions.md "Send back"): merge the target into a job's own worktree, so its
 * agent works on what the merge will see. A clean merge is committed; a conflicted one is LEFT
 * (MERGE_HEAD and the markers) for the agent to resolve and commit. Never a rebase: one
 * resolution step, the branch's history kept, and finishing is a plain commit.
 */
export async function mergeTargetIntoWorktree(worktree: string, target: string, message: string): Promise<{ state: 'up_to_date' | 'merged' } | { state: 'conflicts'; files: string[] }> {
  const before = await revParse(worktree, 'HEAD');
  const ident = await identity(worktree);
  try {
    await gitOut([...ident, ...NO_HOOKS, 'merge', '--no-ff', '--no-edit', `--message=${message}`, `refs/heads/${target}`], { cwd: worktree });
  } catch (err) {
    const files = outLines((await tryGit(worktree, ['diff', '--name-only', '--diff-filter=U'])) ?? '');
    if (files.length === 0) throw new MergeRefused(`could not merge ${target} into the worktree ${worktree}: ${firstLine(errText(err))}`);
    return { state: 'conflicts', files };
  }
  return { state: (await revParse(worktree, 'HEAD')) === before ? 'up_to_date' : 'merged' };
}

/** Abort a merge left in a worktree (a send-back whose resume was refused). */
export async function abortWorktreeMerge(worktree: string): Promise<void> {
  await tryGit(worktree, ['merge', '--abort']);
}

/** A line a merge conflict left: `<<<<<<< `, `=======` or `>>>>>>> ` at the start of a line the branch adds. */
export interface ConflictMarker { file: string; line: number; text: string }

/**
 * Conflict markers a branch still adds relative to `target` (their merge base): git's own
 * `git diff --check`, which names each leftover marker (its whitespace findings are ignored).
 * A branch sent back over a conflict and "resolved" with its markers left must never merge,
 * whether or not it has checks (docs/decisions.md "Send back").
 */
export async function leftoverMarkers(repo: string, branch: string, target: string): Promise<ConflictMarker[]> {
  const r = await git(['-c', 'core.whitespace=-trailing-space,-space-before-tab,-indent-with-non-tab,-tab-in-indent,-blank-at-eof', 'diff', '--check', '--no-renames', '--no-color', `refs/heads/${target}...refs/heads/${branch}`, '--'], { cwd: repo, allowFail: true });
  if (r.code !== 0 && r.code !== 2) throw new MergeRefused(`could not look for conflict markers in ${branch}: ${firstLine(r.stderr) || `git diff --check exited ${r.code}`}`);
  const found: ConflictMarker[] = [];
  for (const l of outLines(r.stdout)) {
    const m = /^(.*):(\d+): leftover conflict marker$/.exec(l);
    if (m) found.push({ file: m[1]!, line: Number(m[2]), text: '' });
  }
  // git names the line, not its text: read each file once at the branch's tip.
  for (const file of new Set(found.map((f) => f.file))) {
    const text = (await tryGit(repo, ['show', `refs/heads/${branch}:${file}`])) ?? '';
    const lines = text.split('\n');
    for (const f of found) if (f.file === file) f.text = (lines[f.line - 1] ?? '').slice(0, 120);
  }
  return found;
}
