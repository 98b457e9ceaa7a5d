// Taking over an agent (docs/attach.md): thin adapters over src/takeover/service.ts. Lead only:
// attach_agent hands out the agent's token for the person's interactive session.
import type { TakeoverService } from '../takeover/service.js';
import { defineTool, type ToolDef } from './registry.js';
import { AttachInput, DetachInput } from '../contract/takeover.js';

export function takeoverTools(t: TakeoverService): ToolDef[] {
  return [
    defineTool({
      name: 'attach_agent', roles: ['lead'], title: 'Take over an agent',
      description: 'For overseer attach: stop the job keeping its session (as pause_agent mode stop; an ended job stays as it is), mark it taken over by a person, and return the interactive command (claude --resume / codex resume with the job\'s MCP config, hook settings and a fresh agent token) to run in its work tree. End it with detach_agent.',
      input: AttachInput, annotations: { destructiveHint: false },
      handler: (i) => t.attach(i.job_id),
    }),
    defineTool({
      name: 'detach_agent', roles: ['lead'], title: 'End a takeover',
      description: 'The person is done with a job taken over by attach_agent: then "resume" hands it back (it continues headless on the same session), "finish" settles it with result and outcome, "leave" leaves it stopped. The person\'s token stops working and its locks are released.',
      input: DetachInput,
      handler: (i) => t.detach(i),
    }),
  ];
}
