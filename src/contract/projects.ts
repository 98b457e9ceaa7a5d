// Zod input schemas of the project tools (docs/projects.md), and the project they return (ProjectView).
import { z } from 'zod';

const name = () => z.string().regex(/^[A-Za-z0-9._/-]{1,100}$/, 'name must be a project name: 1..100 letters, digits, "-", "_", "." or "/"');

export const ListProjectsInput = z.object({
  archived: z.boolean().optional().describe('true = only archived projects, false = only active ones (default: both).'),
  flagged: z.boolean().optional().describe('true = only flagged projects, false = only unflagged ones (default: both).'),
}).strict();
export type ListProjectsInput = z.infer<typeof ListProjectsInput>;

export const UpdateProjectInput = z.object({
  name: name().describe('The project, as given to spawn_agent { project }.'),
  archived: z.boolean().optional().describe('true = archive it (hidden from status, watch and list_agents unless named; no new agents start in it); false = unarchive it.'),
  flagged: z.boolean().optional().describe('true = flag it (marked in list_projects and overseer projects), false = clear the flag.'),
  note: z.string().max(2000, 'note must be at most 2000 characters').nullable().optional().describe('A short note kept with the project; null clears it.'),
}).strict();
export type UpdateProjectInput = z.infer<typeof UpdateProjectInput>;

export interface ProjectView {
  name: string;
  archived: boolean;
  archived_at: string | null;
  flagged: boolean;
  note: string | null;
  jobs: number;
  by_status: Record<string, number>;
  /** null when some of its spending could not be priced and nothing could (see cost_lower_bound_usd). */
  cost_usd: number | null;
  /** Set when part of its spending is unpriced: what the priced part came to (a lower bound). */
  cost_lower_bound_usd?: number;
  last_activity: string | null;
  created_at: string | null;
}
