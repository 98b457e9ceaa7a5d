// The rows of a dispatch run (the runs and run_tasks tables of migration 20), read and written
// through the layer (src/store/sql/runs.ts); here what the run engine reads out of them.
import type { RunRules } from './file.js';
import type { RunRow } from '../store/sql/runs.js';

export type { RunRow, RunStatus, RunTaskRow, TaskState } from '../store/sql/runs.js';

export function rulesOf(r: RunRow): RunRules {
  return JSON.parse(r.rules_json) as RunRules;
}
