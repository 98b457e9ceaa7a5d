// list_overlaps (issue 13): a thin adapter over the conflict guard's record (src/branches/overlapView.ts).
import { z } from 'zod';
import type { Db } from '../store/db.js';
import { listOverlaps } from '../branches/overlapView.js';
import { defineTool, type ToolDef } from './registry.js';

export const ListOverlapsInput = z.object({
  all: z.boolean().default(false).describe('true = also the closed overlaps (one of the two jobs ended); default false: only the open ones.'),
}).strict();

export function overlapTools(db: Db): ToolDef[] {
  return [
    defineTool({
      name: 'list_overlaps', roles: ['lead'], title: 'List branch overlaps',
      description: 'The conflict guard: pairs of live worktree agents whose branches change the same files (committed, uncommitted or locked for an edit), with their titles, branches, the files and since when. Both agents were told when it was found; merging their branches will likely conflict on those files.',
      input: ListOverlapsInput, annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      handler: (i) => listOverlaps(db, { all: i.all }),
    }),
  ];
}
