// A repository's shared remote (`origin`), the git half of jobs that leave the hub's machine
// (issue 30, docs/workers-plan.md §3): the URL a spawn records in jobs.repo_remote, a worker's
// own clone of it and the fetches into that clone, and the hub's fetch of a branch a worker
// pushed, which never overwrites a local branch that went another way. Nothing here knows about jobs.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { errText, firstLine, git, gitOut, outLines } from './exec.js';

/** A fetch or clone that prints nothing for this long is killed (a stuck credential helper or network). */
const NET_TIMEOUT_MS = 300_000;
/** Where a worker's clone keeps what it fetched of the remote's branches. */
export const REMOTE_REFS = 'refs/remotes/origin';

/**
 * The URL of `origin` in the repository at repoRoot (`git remote get-url`, so `insteadOf` rules
 * apply; a path relative to the repository made absolute, as another machine's clone needs it);
 * undefined when it has no origin or is no repository.
 */
export async function originUrl(repoRoot: string): Promise<string | undefined> {
  // A missing directory never reaches spawn: node leaves a failed spawn's pipes open for minutes.
  if (!existsSync(repoRoot)) return undefined;
  const r = await git(['remote', 'get-url', 'origin'], { cwd: repoRoot, allowFail: true }).catch(() => undefined);
  const url = r?.code === 0 ? outLines(r.stdout)[0] : undefined;
  if (!url) return undefined;
  const local = !/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && !/^(?:[^@/]*@)?[^/:]+:/.test(url);
  return local && !path.isAbsolute(url) ? path.resolve(repoRoot, url) : url;
}

/**
 * A refused or failed fetch / push, in words that say what to do. `kind`: `missing` — the remote
 * lacks what was asked (a branch, a commit, a default branch); `refused` — a push or an update
 * that would overwrite another's work; `unreachable` — git could not do it at all (network,
 * credentials), which may pass when tried again.
 */
export class RemoteError extends Error {
  constructor(message: string, readonly kind: 'missing' | 'refused' | 'unreachable', options?: ErrorOptions) {
    super(message, options);
    this.name = 'RemoteError';
  }
}

/** `git clone --no-checkout` of url into dir (made whole or not at all: cloned beside it, then renamed). No-op when dir is already a repository. */
export async function cloneOnce(url: string, dir: string): Promise<boolean> {
  if (existsSync(path.join(dir, '.git'))) return false;
  await mkdir(path.dirname(dir), { recursive: true });
  const tmp = `${dir}.cloning-${process.pid}-${randomBytes(3).toString('hex')}`;
  try {
    await gitOut(['clone', '--quiet', '--no-checkout', '--', url, tmp], { cwd: path.dirname(dir), timeout: NET_TIMEOUT_MS });
    await rm(dir, { recursive: true, force: true }); // a half-made clone of a crashed run
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw new RemoteError(`could not clone ${url} into ${dir}: ${firstLine(errText(err))}. Check that this machine reaches the remote and may read it (git clone ${url}).`, 'unreachable', { cause: err });
  }
  return true;
}

/** Fetch the remote's `branches` into refs/remotes/origin/<branch> of the clone at dir (forced: they are the remote's, not ours). A branch the remote lacks is an error naming it. */
export async function fetchBranches(dir: string, branches: readonly string[]): Promise<void> {
  const wanted = [...new Set(branches)];
  if (!wanted.length) return;
  try {
    await gitOut(['fetch', '--quiet', '--no-tags', 'origin', ...wanted.map((b) => `+refs/heads/${b}:${REMOTE_REFS}/${b}`)], { cwd: dir, timeout: NET_TIMEOUT_MS });
  } catch (err) {
    const msg = errText(err);
    const missing = /couldn't find remote ref (?:refs\/heads\/)?(\S+)/i.exec(msg)?.[1];
    const url = await originUrl(dir);
    if (missing) throw new RemoteError(`the branch ${missing} is not on the remote ${url}: push it there (git push origin ${missing}) so a worker can start from it`, 'missing', { cause: err });
    throw new RemoteError(`could not fetch ${wanted.join(', ')} from ${url}: ${firstLine(msg)}`, 'unreachable', { cause: err });
  }
}

/** Make sure the commit `sha` is in the clone at dir, fetching it from origin when it is not. */
export async function fetchCommit(dir: string, sha: string): Promise<void> {
  if (await hasCommit(dir, sha)) return;
  try {
    await gitOut(['fetch', '--quiet', '--no-tags', 'origin', sha], { cwd: dir, timeout: NET_TIMEOUT_MS });
  } catch (err) {
    const url = await originUrl(dir);
    const msg = errText(err);
    if (!/not our ref|unadvertised object|no such remote ref|couldn't find remote ref/i.test(msg)) throw new RemoteError(`could not fetch the commit ${sha.slice(0, 12)} from ${url}: ${firstLine(msg)}`, 'unreachable', { cause: err });
    throw new RemoteError(`the commit ${sha.slice(0, 12)} is not on the remote ${url} (${firstLine(msg)}): push the branch that holds it (git push origin <branch>) so a worker can start from it`, 'missing', { cause: err });
  }
  if (!(await hasCommit(dir, sha))) throw new RemoteError(`the commit ${sha.slice(0, 12)} was fetched from ${await originUrl(dir)} but is not there`, 'missing');
}

/** The remote's default branch (what its HEAD names) as fetched into the clone: refs/remotes/origin/<name>. */
export async function remoteDefault(dir: string): Promise<string> {
  const r = await git(['ls-remote', '--symref', 'origin', 'HEAD'], { cwd: dir, allowFail: true, timeout: NET_TIMEOUT_MS });
  if (r.code !== 0) throw new RemoteError(`could not ask ${await originUrl(dir)} for its default branch: ${firstLine(r.stderr)}`, 'unreachable');
  const name = /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(r.stdout)?.[1];
  if (!name) throw new RemoteError(`the remote ${await originUrl(dir)} names no default branch (its HEAD); spawn with base: "<branch>"`, 'missing');
  await fetchBranches(dir, [name]);
  return `${REMOTE_REFS}/${name}`;
}

export async function hasCommit(dir: string, sha: string): Promise<boolean> {
  return (await git(['cat-file', '-e', `${sha}^{commit}`], { cwd: dir, allowFail: true })).code === 0;
}

/** The commit a ref names in dir, or undefined. */
export async function tip(dir: string, ref: string): Promise<string | undefined> {
  const r = await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd: dir, allowFail: true });
  return r.code === 0 ? outLines(r.stdout)[0] : undefined;
}

/** Is commit a an ancestor of (or equal to) b in dir. */
export async function isAncestor(dir: string, a: string, b: string): Promise<boolean> {
  return (await git(['merge-base', '--is-ancestor', a, b], { cwd: dir, allowFail: true })).code === 0;
}

/** Push `branch` of the work tree (or clone) at dir to origin. A refused push (the remote's branch moved) is a RemoteError saying so. */
export async function pushToOrigin(dir: string, branch: string): Promise<void> {
  const r = await git(['push', '--porcelain', 'origin', `refs/heads/${branch}:refs/heads/${branch}`], { cwd: dir, allowFail: true, timeout: NET_TIMEOUT_MS });
  if (r.code === 0) return;
  const url = await originUrl(dir);
  const text = `${r.stdout}\n${r.stderr}`;
  if (/\[rejected\]|non-fast-forward|fetch first|stale info/i.test(text)) {
    throw new RemoteError(`the remote ${url} refused the push of ${branch}: its ${branch} has commits this branch does not (someone else pushed to it). Nothing was overwritten; fetch it and merge, or push under another branch name`, 'refused');
  }
  throw new RemoteError(`could not push ${branch} to ${url}: ${firstLine(r.stderr || r.stdout)}`, 'unreachable');
}

/** What the hub's fetch of a pushed branch did. */
export type FetchedBranch = { branch: string; commit: string; local: 'created' | 'updated' | 'same' | 'ahead' };

/**
 * The hub's side: bring `branch` from origin into the repository at repoRoot as the local branch
 * of that name, so a merge works as for a local job. The local branch is created, or moved
 * forward to the remote's; one already holding the remote's commits (ahead) is kept. A local
 * branch that went another way than the remote's, or one checked out that would have to move,
 * is refused (RemoteError) and left as it was.
 */
export async function fetchBranchHere(repoRoot: string, branch: string): Promise<FetchedBranch> {
  const scratch = `refs/overseer/fetched/${branch}`;
  const url = await originUrl(repoRoot);
  if (!url) throw new RemoteError(`${repoRoot} has no remote named origin to fetch ${branch} from; add it (git remote add origin <url>) and merge again`, 'missing');
  try {
    await gitOut(['fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${branch}:${scratch}`], { cwd: repoRoot, timeout: NET_TIMEOUT_MS });
  } catch (err) {
    const msg = errText(err);
    if (/couldn't find remote ref/i.test(msg)) throw new RemoteError(`the branch ${branch} is not on the remote ${url}: the worker has not pushed it (see the job's git note)`, 'missing', { cause: err });
    throw new RemoteError(`could not fetch ${branch} from ${url}: ${firstLine(msg)}`, 'unreachable', { cause: err });
  }
  try {
    const remote = (await tip(repoRoot, scratch))!;
    const local = await tip(repoRoot, `refs/heads/${branch}`);
    if (local === remote) return { branch, commit: remote, local: 'same' };
    if (local && (await isAncestor(repoRoot, remote, local))) return { branch, commit: local, local: 'ahead' };
    if (local && !(await isAncestor(repoRoot, local, remote))) {
      throw new RemoteError(`the local branch ${branch} in ${repoRoot} (${local.slice(0, 12)}) and the one on ${url} (${remote.slice(0, 12)}) went different ways; it was not overwritten. Merge or reset one of them (git fetch origin ${branch}, then git merge or git branch -f ${branch} origin/${branch}), then merge again`, 'refused');
    }
    if (local && (await checkedOut(repoRoot, branch))) {
      throw new RemoteError(`the local branch ${branch} is checked out in ${repoRoot} or one of its worktrees and is behind the one on ${url}; pull there (git pull origin ${branch}), then merge again`, 'refused');
    }
    // A compare-and-set: the local branch moves only from what was read here.
    await gitOut(['update-ref', '-m', `overseer: fetched from ${url}`, `refs/heads/${branch}`, remote, local ?? ''], { cwd: repoRoot });
    return { branch, commit: remote, local: local ? 'updated' : 'created' };
  } finally {
    await git(['update-ref', '-d', scratch], { cwd: repoRoot, allowFail: true });
  }
}

async function checkedOut(repoRoot: string, branch: string): Promise<boolean> {
  const out = (await git(['worktree', 'list', '--porcelain'], { cwd: repoRoot, allowFail: true })).stdout;
  return out.split('\n').includes(`branch refs/heads/${branch}`);
}
