// Where job worktrees live: outside the repository's working tree, so test runners, linters
// and `grep -r` in the main checkout never see them (`node --test` ran every test twice when
// they lived under <repo>/.overseer-worktrees/).
//
//   <base>/<repo-basename>-<8 hex of sha256(repo real path)>/<branch-slug>
//   base = OVERSEER_WORKTREES_DIR / config `worktreesDir`, else $XDG_DATA_HOME/overseer/worktrees
//          (XDG_DATA_HOME defaults to ~/.local/share)
//
// Worktrees created before this layout (<repo>/.overseer-worktrees/<id>) keep working: their
// path is stored in the job/workflow row and removal accepts both places.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The old in-repository folder (relative to the repo top level), still cleaned and excluded. */
export const LEGACY_WORKTREES_DIR = '.overseer-worktrees';

/** The base folder of every repository's worktrees. `configured` (config `worktreesDir`) wins over the environment. */
export function worktreesBase(configured?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (configured) return path.resolve(configured);
  if (env.OVERSEER_WORKTREES_DIR) return path.resolve(env.OVERSEER_WORKTREES_DIR);
  const data = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(env.HOME || os.homedir(), '.local', 'share');
  return path.join(data, 'overseer', 'worktrees');
}

/** The folder of one repository's worktrees under `base`: its name plus a hash of its real path, so two clones named alike never share it. */
export function repoWorktreesDir(base: string, repoRealPath: string): string {
  const hash = createHash('sha256').update(repoRealPath).digest('hex').slice(0, 8);
  const name = path.basename(repoRealPath).replace(/[^A-Za-z0-9._-]/g, '_') || 'repo';
  return path.join(base, `${name}-${hash}`);
}

/** A branch name as one folder name: `overseer/fix-login` → `overseer-fix-login`. */
export function branchSlug(branch: string): string {
  const s = branch.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|-+$/g, '');
  return s.slice(0, 100) || 'branch';
}

/** Is `dir` (absolute, resolved) a worktree folder Overseer placed for the repository at `repoRealPath`, new layout or old? */
export function isOverseerWorktreeDir(repoRealPath: string, dir: string): boolean {
  const parent = path.dirname(dir);
  if (parent === path.join(repoRealPath, LEGACY_WORKTREES_DIR)) return true;
  return path.basename(parent) === path.basename(repoWorktreesDir('/', repoRealPath));
}

/** Where a new worktree of `branch` goes for the repository at `top` (its real path): the repository's
 * folder under the base and the branch's slug in it — the slug with the job id when another branch of
 * the same slug (a/b, a-b) holds it already. */
export function worktreeFolder(worktreesDir: string | undefined, top: string, branch: string, jobId: string): { repoDir: string; path: string } {
  const repoDir = repoWorktreesDir(worktreesBase(worktreesDir), top);
  const slug = branchSlug(branch);
  return { repoDir, path: path.join(repoDir, existsSync(path.join(repoDir, slug)) ? `${slug}-${jobId}` : slug) };
}
