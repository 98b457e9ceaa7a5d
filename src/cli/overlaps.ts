// `overseer overlaps [--all] [--json]`: the conflict guard's overlaps (docs/worktrees.md), read
// from the state database (read-only: works with or without a running hub).
import { listOverlaps, overlapsText } from '../branches/overlapView.js';
import { CliError } from './errors.js';
import { openState } from './state.js';

export async function runOverlaps(o: { all?: boolean; json?: boolean }): Promise<void> {
  const s = await openState();
  const layer = s.sql;
  try {
    let v: Awaited<ReturnType<typeof listOverlaps>>;
    try {
      v = await listOverlaps(layer.db, { all: o.all });
    } catch (err) {
      throw new CliError(`The state at ${s.home} has no overlaps table yet (${(err as Error).message}): a hub of this version adds it when it starts.`);
    }
    process.stdout.write(o.json ? `${JSON.stringify(v, null, 2)}\n` : overlapsText(v));
  } finally {
    await s.close();
  }
}
