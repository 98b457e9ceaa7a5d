// Zod input schema of list_overlaps (issue 13: the conflict guard, docs/worktrees.md), and the
// overlaps it returns.
import { z } from 'zod';

export const ListOverlapsInput = z.object({
  all: z.boolean().default(false).describe('true = also the closed overlaps (one of the two jobs ended); default false: only the open ones.'),
}).strict();
export type ListOverlapsInput = z.infer<typeof ListOverlapsInput>;

export interface OverlapView {
  jobs: { job_id: string; title: string; branch: string | null; status: string }[];
  files: string[];
  locks_conflict: boolean;
  detected_at: string;
  open: boolean;
}
