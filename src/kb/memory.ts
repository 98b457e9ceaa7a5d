// The `## Memory` section of a new agent's first message: the knowledge base entries most
// relevant to its prompt, whole, within a character budget. Relevance is the bm25 rank of
// an OR query over the prompt's distinctive terms, across both scopes. The section never
// breaks a spawn: any KB failure yields '' (the caller may log it).
import type { KnowledgeBase } from './service.js';
import { distinctiveTerms } from './text.js';

export const MEMORY_HEADER = '## Memory\n\n';
/** How many prompt terms the query uses. */
export const MEMORY_TERMS = 12;
/** How many candidates are considered for the budget. */
export const MEMORY_CANDIDATES = 12;

export interface MemoryItem {
  entry_id: string;
  title: string;
  content: string;
  source_job: string | null;
}

/** One entry as it appears in the section. */
export function renderMemoryItem(m: MemoryItem): string {
  const from = m.source_job ? `, from job ${m.source_job}` : '';
  return `### ${m.title} (${m.entry_id}${from})\n${m.content.trim()}`;
}

/**
 * The section for items already ranked best first: every item that fits the budget whole, in
 * rank order (a big one is skipped, smaller ones after it may still fit); when not even the
 * best one fits, the best one truncated. '' for no items or a budget too small for anything.
 */
export function renderMemory(items: readonly MemoryItem[], budgetChars: number): string {
  const blocks = items.map(renderMemoryItem);
  const chosen: string[] = [];
  let used = MEMORY_HEADER.length;
  for (const b of blocks) {
    const cost = b.length + (chosen.length ? 2 : 0);
    if (used + cost <= budgetChars) {
      chosen.push(b);
      used += cost;
    }
  }
  if (chosen.length === 0 && blocks.length > 0) {
    const room = budgetChars - MEMORY_HEADER.length - 1;
    const first = blocks[0]!;
    const heading = first.slice(0, first.indexOf('\n') + 1);
    if (room <= heading.length + 20) return '';
    chosen.push(`${first.slice(0, room)}…`);
  }
  return chosen.length ? `${MEMORY_HEADER}${chosen.join('\n\n')}` : '';
}

/** The prompt's terms the memory query uses (stop words stripped, the ~12 most distinctive). */
export function memoryTerms(prompt: string): string[] {
  return distinctiveTerms(prompt, MEMORY_TERMS);
}

/**
 * `## Memory` with the entries most relevant to `prompt` within `budgetChars`; '' when none is.
 * Read through the knowledge base's source (SQLite files or PostgreSQL); the runner awaits it
 * while it reads the rest of a launch's facts.
 */
export async function memorySection(kb: KnowledgeBase, prompt: string, budgetChars = 6000): Promise<string> {
  const terms = memoryTerms(prompt);
  if (terms.length === 0) return '';
  const items: (MemoryItem & { score: number })[] = [];
  for (const scope of ['project', 'global'] as const) {
    // One unreadable store (e.g. an unwritable global directory) must not hide the other.
    try {
      for (const h of await kb.searchTerms(terms, scope, MEMORY_CANDIDATES)) {
        items.push({ entry_id: h.entry_id, title: h.title, content: h.entry.content, source_job: h.source_job, score: h.score });
      }
    } catch {
      /* that scope contributes nothing */
    }
  }
  const ranked = items.sort((a, b) => b.score - a.score).slice(0, MEMORY_CANDIDATES);
  return renderMemory(ranked, budgetChars);
}
