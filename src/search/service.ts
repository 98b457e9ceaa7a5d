// search_output (and `overseer search`, and GET /api/search): what the agents said, newest
// first, with the job, attempt, time, kind and a snippet. The lead searches every job; an agent
// only its own transcripts and its descendants' — every filter is intersected with that set
// before the index is asked, so nothing outside it can show up, be counted, or be told apart
// from "no such job". Results stay under the 20,000-character tool result cap.
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { Q } from '../store/sql/tx.js';
import type { Caller } from '../services/context.js';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../errors.js';
import { truncate } from '../launch/textCap.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type SearchHit, type SearchResult } from '../contract/search.js';
import { parseQuery, parseSince } from './query.js';
import { ROWS_PER_MS } from './store.js';
import type { TranscriptIndex } from './sqlIndex.js';

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
export { MAX_TOKEN_JOBS } from './sqlIndex.js';
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
  /** `q`: the layer (the hub's database); `index`: its dialect's transcript index. */
  constructor(private readonly q: Q, private readonly index: TranscriptIndex, private readonly deps: SearchDeps) {}

  async search(o: SearchOptions, caller: Caller): Promise<SearchResult> {
    const t0 = performance.now();
    parseQuery(o.query);
    const limit = o.limit ?? DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new InvalidInputError(`limit ${limit} is not valid: give a whole number from 1 to ${MAX_LIMIT}.`);
    const sinceMs = o.since === undefined ? undefined : parseSince(o.since, this.deps.now());
    const jobs = await this.jobsFor(o, caller);
    const done = (results: SearchHit[], total: { n: number; complete: boolean }, omitted = 0): SearchResult => ({
      results,
      total_hint: total.n,
      ...(total.complete ? {} : { total_capped: true as const }),
      took_ms: Math.round((performance.now() - t0) * 10) / 10,
      ...(omitted ? { omitted } : {}),
      ...(this.deps.catchingUp?.() ? { indexing: 'older transcripts are still being indexed: results may miss some of them for a while' } : {}),
    });
    if (jobs && jobs.length === 0) return done([], { n: 0, complete: true });

    const { hits, total } = await this.index.search(this.q, {
      query: o.query,
      ...(jobs ? { jobIds: jobs } : {}),
      minId: sinceMs === undefined ? 0 : Math.max(0, sinceMs) * ROWS_PER_MS,
      limit,
      cap: TOTAL_CAP,
      budgetMs: this.deps.countBudgetMs ?? COUNT_BUDGET_MS,
      snippetTokens: SNIPPET_TOKENS,
    });
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
  private async jobsFor(o: SearchOptions, caller: Caller): Promise<string[] | undefined> {
    let jobs: string[] | undefined;
    if (caller.role === 'agent') jobs = [caller.jobId, ...await this.descendants(caller.jobId)];
    if (o.job_id !== undefined) {
      if (jobs) {
        // Not "no such job": an agent learns nothing about jobs outside its subtree.
        if (!jobs.includes(o.job_id)) throw new ForbiddenError(`job_id ${JSON.stringify(o.job_id)} is not in your subtree: an agent searches only its own output and that of the agents it spawned (and theirs). Omit job_id to search all of them.`);
      } else if (!await this.q.selectFrom('jobs').select('id').where('id', '=', o.job_id).executeTakeFirst()) {
        const near = await this.nearbyIds(o.job_id);
        throw new NotFoundError(`No job ${JSON.stringify(o.job_id)}.${near.length ? ` Known job ids: ${near.join(', ')}.` : ' No jobs exist yet.'} Use list_agents to see them, or omit job_id.`);
      }
      jobs = [o.job_id];
    }
    if (o.label !== undefined) {
      const labelled = new Set(await this.withLabel(o.label));
      jobs = jobs ? jobs.filter((j) => labelled.has(j)) : [...labelled];
    }
    return jobs;
  }

  /** Every job under `id` (not itself). */
  private async descendants(id: string): Promise<string[]> {
    return (await sql<{ id: string }>`WITH RECURSIVE d(id) AS (SELECT id FROM jobs WHERE parent_id = ${id}
        UNION ALL SELECT j.id FROM jobs j JOIN d ON j.parent_id = d.id) SELECT id FROM d`.execute(this.q)).rows.map((r) => r.id);
  }

  /** For "no such job": ids sharing its first characters, then the newest. */
  private async nearbyIds(id: string, max = 5): Promise<string[]> {
    const similar = await this.q.selectFrom('jobs').select('id').where('id', 'like', `${id.slice(0, 4)}%`).orderBy('seq', 'desc').limit(max).execute();
    const recent = await this.q.selectFrom('jobs').select('id').orderBy('seq', 'desc').limit(max).execute();
    return [...new Set([...similar, ...recent].map((r) => r.id))].slice(0, max);
  }

  private async withLabel(label: string): Promise<string[]> {
    // LIKE narrows to the rows that mention it at all (the same text on both databases); the
    // parsed labels decide exactly.
    const like = `%${JSON.stringify(label).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.q.selectFrom('jobs').select(['id', sql<string>`labels_json`.as('labels_json')]).where(sql<boolean>`labels_json LIKE ${like} ESCAPE '\\'`).execute();
    return rows.filter((r) => (JSON.parse(r.labels_json) as string[]).includes(label)).map((r) => r.id);
  }
}
