// list_overlaps (issue 13): a thin adapter over the conflict guard's record (src/branches/overlapView.ts).
import type { Q } from '../store/sql/tx.js';
import { listOverlaps } from '../branches/overlapView.js';
import { ListOverlapsInput } from '../contract/overlaps.js';
import { defineTool, type ToolDef } from './registry.js';

export function overlapTools(q: Q): ToolDef[] {
  return [
    defineTool({
      name: 'list_overlaps', roles: ['lead'], title: 'List branch overlaps',
      description: 'The conflict guard: pairs of live worktree agents whose branches change the same files (committed, uncommitted or locked for an edit), with their titles, branches, the files and since when. Both agents were told when it was found; merging their branches will likely conflict on those files.',
      input: ListOverlapsInput, annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      handler: (i) => listOverlaps(q, { all: i.all }),
    }),
  ];
}
