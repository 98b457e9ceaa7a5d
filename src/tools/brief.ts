// The crew brief's lead tools (issue 31 point 6): thin adapters over src/brief/service.ts. Lead
// only: an agent is not offered them, and the service refuses an agent caller besides.
import type { BriefService } from '../brief/service.js';
import { ClearBriefInput, GetBriefInput, SetBriefInput } from '../contract/brief.js';
import { defineTool, type ToolDef } from './registry.js';

export function briefTools(brief: BriefService): ToolDef[] {
  return [
    defineTool({
      name: 'set_brief', roles: ['lead'], title: 'Set the crew brief',
      description: 'Set the crew brief: one standing text (conventions, the goal, what not to touch) that every agent spawned afterwards gets in its first prompt, and that every agent running now gets once, as a message from the lead. Replaces the earlier brief. Returns the brief and sent_to (the running agents told). Only the lead and the person (`overseer brief set`, the dashboard) set it.',
      input: SetBriefInput, annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      handler: (i, c) => brief.set(i, 'lead', c),
    }),
    defineTool({
      name: 'get_brief', roles: ['lead'], title: 'Show the crew brief',
      description: 'The crew brief now: text (null when none), who set it (lead or person), when, and its version.',
      input: GetBriefInput, annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      handler: () => brief.get(),
    }),
    defineTool({
      name: 'clear_brief', roles: ['lead'], title: 'Clear the crew brief',
      description: 'Remove the crew brief: new agents get none, and every running agent is told once that it no longer holds. Clearing when there is none changes nothing.',
      input: ClearBriefInput, annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      handler: (_i, c) => brief.clear('lead', c),
    }),
  ];
}
