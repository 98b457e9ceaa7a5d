// search_output (and `overseer search`, and GET /api/search): what the agents said, newest
// first, with the job, attempt, time, kind and a snippet. The lead searches every job; an agent
// only its own transcripts and its descendants' — every filter is intersected with that set
// before the index is asked, so nothing outside it can show up, be counted, or be told apart
// from "no such job". Results stay under the 20,000-character tool result cap.
import { performance } from 'node:perf_hooks';
import type { Db } from '../store/db.js';
import { JobStore } from '../store/jobs.js';
import type { Caller } from '../services/context.js';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.js';
import { truncate } from '../launch/textCap.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type SearchHit, type SearchResult } from '../contract/search.js';
import type { RowKind } from './extract.js';
import { ftsExpression, parseSince } from './query.js';
import { jobToken, ROWS_PER_MS, searchPass, type HitQuery } from './store.js';

export type { SearchHit, SearchResult };

export interface SearchOptions {
  query: string;
  job_id?: string;
  label?: string;
  /** How long ago (`2h`) or an ISO time. */
  since?: string;
  limit?: number;
}

// The limits of search_output's contract (src/contract/search.ts).
export { DEFAULT_LIMIT, MAX_LIMIT };
export const TOTAL_CAP = 1000;
/** Longest the count behind total_hint may take. */
export const COUNT_BUDGET_MS = 3;
/** Up to this many jobs are filtered inside FTS5 (job tokens); more by a join on the matches. */
export const MAX_TOKEN_JOBS = 64;
const SNIPPET_TOKENS = 16;
const SNIPPET_CHARS = 400;
const TITLE_CHARS = 120;
/** JSON (as okResult prints it) of the results, below the 20,000-character cap with room for the rest. */
const RESULTS_BUDGET = 18_500;

export interface SearchDeps {
  now: () => number;
  /** Is the index still catching up on older transcripts? */
  catchingUp?: () => boolean;
  /** Longest the count behind total_hint may take (default COUNT_BUDGET_MS). */
  countBudgetMs?: number;
}

export class TranscriptSearch {
  private readonly store: JobStore;

  constructor(private readonly db: Db, private readonly deps: SearchDeps) {
    this.store = new JobStore(db);
  }

  search(o: SearchOptions, caller: Caller): SearchResult {
    const t0 = performance.now();
    const expr = ftsExpression(o.query);
    const limit = o.limit ?? DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new InvalidInputError(`limit ${limit} is not valid: give a whole number from 1 to ${MAX_LIMIT}.`);
    const sinceMs = o.since === undefined ? undefined : parseSince(o.since, this.deps.now());
    const jobs = this.jobsFor(o, caller);
    const done = (results: SearchHit[], total: { n: number; complete: boolean }, omitted = 0): SearchResult => ({
      results,
      total_hint: total.n,
      ...(total.complete ? {} : { total_capped: true as const }),
      took_ms: Math.round((performance.now() - t0) * 10) / 10,
      ...(omitted ? { omitted } : {}),
      ...(this.deps.catchingUp?.() ? { indexing: 'older transcripts are still being indexed: results may miss some of them for a while' } : {}),
    });
    if (jobs && jobs.length === 0) return done([], { n: 0, complete: true });

    const useTokens = jobs !== undefined && jobs.length <= MAX_TOKEN_JOBS;
    const match = `body : (${expr})${useTokens ? ` AND job : (${jobs.map((j) => `"${jobToken(j)}"`).join(' OR ')})` : ''}`;
    const q: HitQuery = {
      match,
      minId: sinceMs === undefined ? 0 : Math.max(0, sinceMs) * ROWS_PER_MS,
      ...(jobs && !useTokens ? { jobIds: jobs } : {}),
      limit,
      snippetTokens: SNIPPET_TOKENS,
    };
    const { hits, total } = this.ask(() => searchPass(this.db, q, TOTAL_CAP, this.deps.countBudgetMs ?? COUNT_BUDGET_MS));
    const results: SearchHit[] = [];
    let size = 0;
    for (const h of hits) {
      const hit: SearchHit = {
        job_id: h.job_id,
        title: truncate(h.title ?? '', TITLE_CHARS),
        attempt: h.attempt,
        at: new Date(h.at).toISOString(),
        kind: h.kind,
        ...(h.tool ? { tool: h.tool } : {}),
        snippet: truncate((h.snip ?? '').replace(/\s+/g, ' ').trim(), SNIPPET_CHARS),
      };
      const len = JSON.stringify(hit, null, 1).length + 2;
      if (size + len > RESULTS_BUDGET) break;
      results.push(hit);
      size += len;
    }
    return done(results, total, hits.length - results.length);
  }

  /**
   * The jobs the search may look at (undefined: all): the caller's subtree for an agent,
   * intersected with `job_id` and `label`.
   */
  private jobsFor(o: SearchOptions, caller: Caller): string[] | undefined {
    let jobs: string[] | undefined;
    if (caller.role === 'agent') jobs = [caller.jobId, ...this.store.descendants(caller.jobId).map((d) => d.id)];
    if (o.job_id !== undefined) {
      if (jobs) {
        // Not "no such job": an agent learns nothing about jobs outside its subtree.
        if (!jobs.includes(o.job_id)) throw new ForbiddenError(`job_id ${JSON.stringify(o.job_id)} is not in your subtree: an agent searches only its own output and that of the agents it spawned (and theirs). Omit job_id to search all of them.`);
      } else if (!this.store.get(o.job_id)) {
        const near = this.store.nearbyIds(o.job_id);
        throw new NotFoundError(`No job ${JSON.stringify(o.job_id)}.${near.length ? ` Known job ids: ${near.join(', ')}.` : ' No jobs exist yet.'} Use list_agents to see them, or omit job_id.`);
      }
      jobs = [o.job_id];
    }
    if (o.label !== undefined) {
      const labelled = new Set(this.withLabel(o.label));
      jobs = jobs ? jobs.filter((j) => labelled.has(j)) : [...labelled];
    }
    return jobs;
  }

  private withLabel(label: string): string[] {
    // LIKE narrows to the rows that mention it at all; json_each decides exactly.
    const like = `%${JSON.stringify(label).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return (this.db.prepare(`SELECT id FROM jobs WHERE labels_json LIKE ? ESCAPE '\\'
        AND EXISTS (SELECT 1 FROM json_each(jobs.labels_json) WHERE value = ?)`).all(like, label) as { id: string }[]).map((r) => r.id);
  }

  /** An FTS5 refusal the sanitiser did not foresee is still a bad query, never a SQL error. */
  private ask<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      if (/fts5|MATCH|syntax error/i.test(msg)) throw new InvalidInputError(`the index could not read this query (${msg}): search with plain words, "phrases", word*, OR and -word.`);
      throw err;
    }
  }
}
