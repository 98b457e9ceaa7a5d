// Files changed in a work tree (uncommitted, untracked and committed since a base commit), as
// absolute real paths — what an agent touched in its turn, for the lock-violation check.
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { gitOut } from './exec.js';

export async function changedFiles(workDir: string, baseCommit?: string | null): Promise<string[]> {
  const top = (await gitOut(['rev-parse', '--show-toplevel'], { cwd: workDir })).trim();
  const out = new Set<string>();
  // -z: NUL-separated, no quoting; rename entries carry the new path first.
  const status = await gitOut(['status', '--porcelain=v1', '-z', '--untracked-files=all'], { cwd: workDir });
  const parts = status.split('\0');
  for (let i = 0; i < parts.length; i++) {
    const e = parts[i]!;
    if (e.length < 4) continue;
    out.add(e.slice(3));
    if (e[0] === 'R' || e[0] === 'C') i++; // skip the rename source
  }
  if (baseCommit) {
    const diff = await gitOut(['diff', '--name-only', '-z', baseCommit, 'HEAD'], { cwd: workDir });
    for (const p of diff.split('\0')) if (p) out.add(p);
  }
  const real = (() => { try { return realpathSync(top); } catch { return top; } })();
  return [...out].map((p) => join(real, p)).sort();
}
