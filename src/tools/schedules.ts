// The lead's schedule tools: list_schedules and cancel_schedule (docs/schedules.md). Thin
// adapters over src/runs/schedules.ts; schemas in src/contract/schedules.ts.
import type { Schedules } from '../runs/schedules.js';
import { defineTool, type ToolDef } from './registry.js';
import { CancelScheduleInput, ListSchedulesInput } from '../contract/schedules.js';

export function scheduleTools(schedules: Schedules): ToolDef[] {
  return [
    defineTool({
      name: 'list_schedules', roles: ['lead'], title: 'List schedules',
      description: 'Schedules made by spawn_agent with at, every_s or cron: how each repeats, its next run (next_run_at), runs so far, its current job, and why it ended (stop_reason). With schedule_id: that one with its latest runs.',
      input: ListSchedulesInput, annotations: { readOnlyHint: true },
      handler: (i) => schedules.list(i),
    }),
    defineTool({
      name: 'cancel_schedule', roles: ['lead'], title: 'Cancel a schedule',
      description: 'Stop a schedule: no further run is queued, and a run still waiting for its time is cancelled; a run already going goes on (cancel_agent stops it).',
      input: CancelScheduleInput, annotations: { destructiveHint: true, idempotentHint: true },
      handler: (i) => schedules.cancel(i),
    }),
  ];
}
