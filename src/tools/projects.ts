// The lead's project and usage tools: list_projects, update_project (src/projects) and usage
// (src/money/usageReport.ts). Thin adapters; schemas in src/contract/projects.ts and usage.ts.
import type { Q } from '../store/sql/tx.js';
import type { ProjectService } from '../projects/service.js';
import { usageOf } from '../money/usageReport.js';
import { defineTool, type ToolDef } from './registry.js';
import { ListProjectsInput, UpdateProjectInput } from '../contract/projects.js';
import { UsageInput } from '../contract/usage.js';

export function projectTools(d: { projects: ProjectService; sql: Q; now: () => number }): ToolDef[] {
  return [
    defineTool({
      name: 'list_projects', roles: ['lead'], title: 'List projects',
      description: 'Every project: its jobs by status, cost (null with cost_lower_bound_usd when part is unpriced), flagged, archived, note and last activity.',
      input: ListProjectsInput, annotations: { readOnlyHint: true },
      handler: (i) => d.projects.list(i),
    }),
    defineTool({
      name: 'update_project', roles: ['lead'], title: 'Update a project',
      description: 'Archive or unarchive a project (archived: hidden from status, watch and list_agents unless named, and no new agents start in it), flag it, or set its note.',
      input: UpdateProjectInput, annotations: { idempotentHint: true, destructiveHint: false },
      handler: (i) => d.projects.update(i),
    }),
    defineTool({
      name: 'usage', roles: ['lead'], title: 'Usage report',
      description: 'What the crew cost: input, output, cache-read and cache-creation tokens, cost, runs and jobs, by model, provider, label, workflow, template, project, day or kind of run, optionally since a time and for one project. Codex and Claude side by side; an unpriced model has cost_usd null and marks the totals cost_unknown (a lower bound).',
      input: UsageInput, annotations: { readOnlyHint: true },
      handler: (i) => usageOf(d.sql, i, d.now()),
    }),
  ];
}
