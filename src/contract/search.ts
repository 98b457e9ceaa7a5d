// Zod input schema of search_output (issue 11: search everything the agents said). Hard limits
// live here; the query syntax and `since` are checked by src/search (InvalidInputError naming
// the fix), so a bad query fails the call with a readable reason and changes nothing.
import { z } from 'zod';

/** How many hits search_output returns by default, and at most (src/search checks the same). */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export const MAX_SEARCH_QUERY_CHARS = 1000;

export const SearchOutputInput = z.object({
  query: z.string({ required_error: 'query is required: the words to search for, e.g. "connection refused"' })
    .min(1, 'query is empty: give words to search for, e.g. "connection refused"')
    .max(MAX_SEARCH_QUERY_CHARS, `query is longer than ${MAX_SEARCH_QUERY_CHARS} characters: search with the key words only`)
    .describe('Words to find (all of them, any order). "a phrase" = words together; word* = a word starting so (3+ letters); a OR b = either; -word = without it. Everything else is plain text, e.g. "connection refused" -jest, migrat*, sqlite OR postgres.'),
  job_id: z.string().min(1, 'job_id is empty: pass an id from spawn_agent or list_agents, or omit it').max(100).optional()
    .describe('Only this job\'s transcripts, all its attempts (default: every job you may see).'),
  label: z.string().min(1, 'label is empty: pass one of the labels given at spawn, or omit it').max(100).optional()
    .describe('Only jobs spawned with this label (default: any).'),
  since: z.string().min(1, 'since is empty: give "2h", "30m", "7d" or an ISO time, or omit it').max(64).optional()
    .describe('Only output written since then: how long ago ("30m", "2h", "7d", "1w") or an ISO time ("2026-05-01T10:00Z") (default: any time).'),
  limit: z.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(MAX_LIMIT, `limit must be at most ${MAX_LIMIT}`).default(DEFAULT_LIMIT)
    .describe(`Most results, newest first, 1..${MAX_LIMIT} (default ${DEFAULT_LIMIT}).`),
}).strict();
export type SearchOutputInput = z.infer<typeof SearchOutputInput>;

export interface SearchHit {
  job_id: string;
  title: string;
  attempt: number;
  /** ISO time the line was written. */
  at: string;
  kind: RowKind;
  tool?: string;
  /** The matching part, matches between « and », cuts marked … */
  snippet: string;
}

export interface SearchResult {
  results: SearchHit[];
  /** Matching rows, counted up to TOTAL_CAP, or for COUNT_BUDGET_MS after the results were found. */
  total_hint: number;
  /** Counting stopped there: at least total_hint rows match. */
  total_capped?: true;
  took_ms: number;
  /** Results left out to stay under the result size cap. */
  omitted?: number;
  /** Set while older transcripts are still being indexed. */
  indexing?: string;
}

export type RowKind = 'text' | 'tool_call' | 'tool_result';
