// Moving a project's runtime state out of the repository. Before 0.2 the hub kept everything in
// `<project>/.overseer/` — inside the tree every non-worktree agent works in, lead token
// included. Now the settings a person writes (config.json, policy.json, templates/) stay there
// and the runtime state lives under the state root (src/config.ts, projectStateDir). The move
// happens when a hub is about to start for the project and none runs on the old directory: both
// claims are held for the move, so no hub can open the database half-moved. A hub still running
// on the old directory keeps it until it ends (resolveStateDir returns it meanwhile).
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot, projectStateDir } from '../config.js';
import { tryClaim } from '../hubfiles/claim.js';

/** What stays in `<project>/.overseer/`: the person's settings, and the claim file (never deleted). */
const STAYS = new Set(['config.json', 'policy.json', 'templates', 'hub.claim']);

export type LegacyMove =
  | { moved: true; from: string; to: string; entries: string[] }
  | { moved: false; reason: 'not_legacy' | 'explicit_home' | 'hub_running' | 'target_busy' };

export function moveLegacyState(env: NodeJS.ProcessEnv, cwd: string): LegacyMove {
  if (env.OVERSEER_HOME) return { moved: false, reason: 'explicit_home' };
  const root = projectRoot(cwd);
  const from = join(root, '.overseer');
  const to = projectStateDir(root, env);
  if (!existsSync(join(from, 'state.db')) || existsSync(join(to, 'state.db'))) return { moved: false, reason: 'not_legacy' };
  const old = tryClaim(from);
  if (!old) return { moved: false, reason: 'hub_running' };
  try {
    const fresh = tryClaim(to);
    if (!fresh) return { moved: false, reason: 'target_busy' };
    try {
      mkdirSync(to, { recursive: true });
      const entries = readdirSync(from).filter((e) => !STAYS.has(e));
      for (const e of entries) moveEntry(join(from, e), join(to, e));
      return { moved: true, from, to, entries };
    } finally {
      fresh.release();
    }
  } finally {
    old.release();
  }
}

/** rename(2), or copy then delete across filesystems. */
function moveEntry(src: string, dst: string): void {
  try {
    renameSync(src, dst);
  } catch (err) {
    if ((err as { code?: string }).code !== 'EXDEV') throw err;
    cpSync(src, dst, { recursive: true, preserveTimestamps: true });
    rmSync(src, { recursive: true, force: true });
  }
}
