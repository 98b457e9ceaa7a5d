// search_output (issue 11): a thin adapter over src/search for the lead and agents. Read-only;
// an agent searches only its own and its descendants' transcripts.
import type { TranscriptSearch } from '../search/index.js';
import { defineTool, type ToolDef } from './registry.js';
import { SearchOutputInput } from '../contract/search.js';

export function searchTools(search: TranscriptSearch): ToolDef[] {
  return [
    defineTool({
      name: 'search_output', roles: ['lead', 'agent'], title: 'Search what the agents said',
      description: 'Full-text search over every agent\'s transcripts (Claude and Codex, all attempts): its text, its tool calls (tool name and input) and the tools\' results. Newest first: job_id, title, attempt, at, kind (text | tool_call | tool_result), tool, snippet (matches in «»); total_hint counts the matches (total_capped: at least that many). Use it to find which agent hit an error, ran a command or mentioned a file, then read_agent_output for the context. An agent sees only its own output and its sub-agents\'.',
      input: SearchOutputInput, annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      handler: (i, c) => search.search(i, c),
    }),
  ];
}
