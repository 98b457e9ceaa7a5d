// Public face of the git layer: per-job worktrees (create, finish, remove) and the read-only
// repository questions the rest of Overseer asks. Import git helpers from here.

/** Worktree lifecycle: create on a new branch, remove, the folder name, the info record. */
export { createWorktree, placeRun, removeWorktree, excludeOverseerDirs, type WorktreeInfo } from './create.js';
/** End of a job: commit, diff stat, push, PR, removal. */
export { finishWorktree, type FinishResult } from './finish.js';
/** Where worktrees live (outside the repository). */
export { LEGACY_WORKTREES_DIR, worktreesBase, repoWorktreesDir, branchSlug } from './placement.js';
/** Read-only repository questions: top level, HEAD, branch existence, pending changes. */
export { branchExists, hasChanges, headCommit, repoRootOf } from './repo.js';
