// Debate tools (docs/debates.md): lead only.
import type { DebateService } from '../debate/index.js';
import { defineTool, type ToolDef } from './registry.js';
import { CancelDebateInput, GetDebateInput, ListDebatesInput, StartDebateInput } from '../contract/debates.js';

export function debateTools(d: DebateService): ToolDef[] {
  return [
    defineTool({
      name: 'start_debate', roles: ['lead'], title: 'Start a debate',
      description: 'Get a second opinion: two sides (claude or codex) answer the task independently each round, then see each other\'s previous answers and give a verdict (agree/disagree/partial), until both agree (consensus) or max_rounds (disagreement). Optionally one side then runs post_action (e.g. "implement what you agreed") and, with verify, the other reviews it. Returns at once; read the result with get_debate or the note debate/<id>/final.',
      input: StartDebateInput, annotations: { openWorldHint: true },
      handler: (i, c) => d.start(i, c),
    }),
    defineTool({
      name: 'get_debate', roles: ['lead'], title: 'Get a debate',
      description: 'status (running, consensus, disagreement, failed, cancelled), every round\'s positions and verdicts, the post-action turns, cost, and the notes that hold the full texts.',
      input: GetDebateInput, annotations: { readOnlyHint: true },
      handler: (i) => d.get(i.debate_id),
    }),
    defineTool({
      name: 'list_debates', roles: ['lead'], title: 'List debates',
      description: 'Debates, newest first, optionally by status.',
      input: ListDebatesInput, annotations: { readOnlyHint: true },
      handler: (i) => d.list(i),
    }),
    defineTool({
      name: 'cancel_debate', roles: ['lead'], title: 'Cancel a debate',
      description: 'Stop a running debate: its running turns are cancelled (a worktree\'s branch stays).',
      input: CancelDebateInput, annotations: { destructiveHint: true, idempotentHint: true },
      handler: (i, c) => d.cancel(i.debate_id, c),
    }),
  ];
}
