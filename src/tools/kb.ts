// Knowledge base tools of the contract (docs/tools.md "Knowledge base", docs/kb.md): search_kb and
// report_learnings for everyone, list_kb and delete_kb_entry for the lead. Thin adapters
// over KnowledgeBase; results stay under the 20,000-character cap (snippets, not contents).
import type { KnowledgeBase } from '../kb/service.js';
import { defineTool, type ToolDef } from './registry.js';
import { DeleteKbEntryInput, ListKbInput, ReportLearningsInput, SearchKbInput } from '../contract/kb.js';

const BOTH = ['lead', 'agent'] as const;

export function kbTools(kb: KnowledgeBase): ToolDef[] {
  return [
    defineTool({
      name: 'search_kb', roles: BOTH, title: 'Search the knowledge base',
      description: 'Search what earlier agents learned (this project\'s entries and, with scope "all" or "global", the ones shared across projects). Returns entries ranked by relevance (FTS5 bm25, title matches count most): entry_id, title, snippet, tags, scope, source_job, score. Search before you start on something unfamiliar.',
      input: SearchKbInput, annotations: { readOnlyHint: true, idempotentHint: true },
      handler: async (i) => ({ entries: await kb.search(i.query, i.scope, i.limit) }),
    }),
    defineTool({
      name: 'report_learnings', roles: BOTH, title: 'Report learnings',
      description: 'Keep 1 to 5 things you learned that would save a future agent time (a non-obvious command, a quirk of the build or tests, a pitfall and its fix). Each learning: title (short headline), content (what, how and why; at least 20 characters), tags?, scope? ("project" = true only of this repository, "global" = useful anywhere). Each gets a result: stored (new entry_id), merged (it duplicated entry_id, new information was appended) or rejected (why: too short, looks like a secret, not worth keeping). Never include secrets, tokens or passwords.',
      input: ReportLearningsInput,
      handler: async (i, c) => ({
        results: await kb.report(i.learnings, { jobId: c.role === 'agent' ? c.jobId : null }),
      }),
    }),
    defineTool({
      name: 'list_kb', roles: ['lead'], title: 'List knowledge base entries',
      description: 'Knowledge base entries newest first (project, then global), optionally one scope or one tag: entry_id, title, tags, scope, source_job, merged_count, updated_at, preview. Pages with limit and next_cursor.',
      input: ListKbInput, annotations: { readOnlyHint: true, idempotentHint: true },
      handler: (i) => kb.list(i),
    }),
    defineTool({
      name: 'delete_kb_entry', roles: ['lead'], title: 'Delete a knowledge base entry',
      description: 'Delete one knowledge base entry by entry_id ("p-12" project, "g-3" global), e.g. one that is wrong or outdated.',
      input: DeleteKbEntryInput, annotations: { destructiveHint: true },
      handler: (i) => kb.delete(i.entry_id),
    }),
  ];
}
