// Zod input schema of the usage tool (docs/usage.md).
import { z } from 'zod';
import { USAGE_DIMENSIONS, type UsageDimension } from './usageDimensions.js';

export { USAGE_DIMENSIONS, type UsageDimension };

export const UsageInput = z.object({
  by: z.enum(USAGE_DIMENSIONS).optional()
    .describe('Group by one dimension: model, provider, label, workflow, template, project, day or kind (default: the whole report, every dimension).'),
  since: z.string().min(1).max(40).optional()
    .describe('Only runs since then: how long ago ("24h", "7d", "30m") or an ISO time ("2026-05-01T10:00Z") (default: all time).'),
  project: z.string().regex(/^[A-Za-z0-9._/-]{1,100}$/, 'project must be 1..100 letters, digits, "-", "_", "." or "/"').optional()
    .describe('Only the runs of this project\'s jobs (default: every project, and runs of no project).'),
}).strict();
export type UsageInput = z.infer<typeof UsageInput>;
