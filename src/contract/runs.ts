// Zod input schemas of the run tools (docs/dispatch.md): lead only.
import { z } from 'zod';

const runId = z.string().min(1, 'run_id is empty: pass an id returned by dispatch or list_runs').max(100);

export const DispatchInput = z.object({
  file: z.string().min(1).max(4096).optional()
    .describe('Path of a dispatch file (.toml, .yaml or .yml); relative to the project. Give file or content.'),
  content: z.string().min(1).max(2_000_000).optional()
    .describe('The dispatch file\'s text, instead of a file (then format is required). Give file or content.'),
  format: z.enum(['toml', 'yaml']).optional().describe('"toml" or "yaml" (default: from the file\'s extension).'),
  title: z.string().trim().min(1).max(200).optional().describe('Name of the run (default: the file\'s title, or its name).'),
}).strict();
export type DispatchInput = z.infer<typeof DispatchInput>;

export const GetRunInput = z.object({
  run_id: runId.describe('Id of the run (or a unique prefix), from run_script, dispatch or list_runs.'),
  wait_s: z.number().min(0).max(3600, 'wait_s must be at most 3600 (an hour); call get_run again to wait longer').optional()
    .describe('Block until the run ends or this many seconds pass (0..3600), then answer; progress is sent meanwhile (default: answer at once).'),
}).strict();

export const ListRunsInput = z.object({
  limit: z.number().int().min(1).max(200).default(50).describe('Most runs, newest first (default 50).'),
}).strict();

export const ResumeRunInput = z.object({
  run_id: runId.describe('Id of the ended run to resume, from dispatch or list_runs.'),
}).strict();
