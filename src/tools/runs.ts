// Run tools (docs/dispatch.md): batch dispatch from a file, lead only.
import type { RunService } from '../runs/runService.js';
import { defineTool, type ToolDef } from './registry.js';
import { DispatchInput, GetRunInput, ListRunsInput, ResumeRunInput } from '../contract/runs.js';

export function runTools(r: RunService): ToolDef[] {
  return [
    defineTool({
      name: 'dispatch', roles: ['lead'], title: 'Dispatch a file of tasks',
      description: 'Start a run of a dispatch file (TOML [[task]] entries or a YAML tasks: list, docs/dispatch.md): every problem of the file is reported with its line before anything starts; then each task gets a job once its depends_on tasks succeeded, within the run\'s concurrency, budget_usd and timeout_s. Returns run_id and the tasks with their job ids; follow with get_run or wait_for_agents.',
      input: DispatchInput, annotations: { openWorldHint: true },
      handler: (i) => r.dispatch(i),
    }),
    defineTool({
      name: 'get_run', roles: ['lead'], title: 'Get a run',
      description: 'A dispatch run: status (running, succeeded, failed, stopped, timed_out), note (why it stopped), counts, cost and every task with its status and job id.',
      input: GetRunInput, annotations: { readOnlyHint: true },
      handler: (i) => r.view(i.run_id),
    }),
    defineTool({
      name: 'list_runs', roles: ['lead'], title: 'List runs',
      description: 'Dispatch runs, newest first, with status and counts per task status.',
      input: ListRunsInput, annotations: { readOnlyHint: true },
      handler: (i) => r.list(i.limit),
    }),
    defineTool({
      name: 'resume_run', roles: ['lead'], title: 'Resume a run',
      description: 'Re-run what did not succeed in an ended run: a failed job continues its session with a message saying why it failed; tasks that never started get new jobs; succeeded tasks are kept.',
      input: ResumeRunInput,
      handler: (i) => r.resume(i.run_id),
    }),
  ];
}
