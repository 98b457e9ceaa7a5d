// The Usage, Timeline and Graph panels: what the crew cost (every attempt and every run the hub
// made itself), when each attempt ran, and how jobs hang together (dependencies, parents).
//   GET /api/web/usage[?since=2h|ISO][&tz=<minutes>]   usageReport (tz: Date#getTimezoneOffset of the page, for days)
//   GET /api/web/timeline[?limit=100]                  { now, jobs: [{ …job, attempts: [...] }] } of the most recent jobs, oldest first
//   GET /api/web/graph[?limit=100]                     { nodes, edges: [{ from, to, kind: 'dep' | 'parent' }] }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { HubContext } from '../../services/context.js';
import { usageReport } from '../../money/usageReport.js';
import { parseSince } from '../../search/query.js';
import { depsTouching, historyJobsByIds, recentHistory, type HistoryJob } from '../../store/sql/history.js';
import { attemptsOfJobs } from '../../store/sql/jobs.js';
import { snapshot, type Q } from '../../store/sql/tx.js';
import { isoTime } from '../../clock.js';
import { PASS, methodNotAllowed, parseQuery } from './http.js';

const Limit = z.coerce.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(500, 'limit must be at most 500').default(100);
const UsageQuery = z.object({
  since: z.string().max(40).optional(),
  tz: z.coerce.number().int('tz is minutes (Date#getTimezoneOffset)').min(-900).max(900).optional(),
});

const iso = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));

const node = (j: HistoryJob) => ({
  job_id: j.id, title: j.title, status: j.status, parent_id: j.parent_id, depth: j.depth, provider: j.provider, model: j.model,
  workflow_id: j.workflow_id, phase: j.phase, cycle: j.cycle, failure_class: j.failure_class,
  created_at: isoTime(j.created_at), started_at: iso(j.started_at), ended_at: iso(j.ended_at),
});

export function historyRoutes(d: { ctx: HubContext }) {
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    const p = url.pathname;
    if (p !== '/api/web/usage' && p !== '/api/web/timeline' && p !== '/api/web/graph') return PASS;
    if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', p);
    const now = d.ctx.clock.now();
    if (p === '/api/web/usage') {
      const q = parseQuery(url, UsageQuery, ['since', 'tz']);
      return usageReport(d.ctx.sql.db, { sinceMs: q.since === undefined ? undefined : parseSince(q.since, now), tzOffsetMin: q.tz });
    }
    const { limit } = parseQuery(url, z.object({ limit: Limit }), ['limit']);
    return snapshot(d.ctx.sql.db, (r) => (p === '/api/web/timeline' ? timeline(r, limit, now) : graph(r, limit)));
  };
}

/** The most recent jobs, oldest first, each with its attempts. */
async function timeline(r: Q, limit: number, now: number): Promise<unknown> {
  const jobs = await recentHistory(r, limit);
  const byJob = await attemptsOfJobs(r, jobs.map((j) => j.id));
  return {
    now: isoTime(now),
    jobs: jobs.map((j) => ({
      ...node(j),
      attempts: (byJob.get(j.id) ?? []).map((a) => ({
        n: a.n, kind: a.kind, status: a.status, started_at: isoTime(a.started_at), ended_at: iso(a.ended_at), failure_class: a.failure_class, turns: a.turns, cost_usd: a.cost_usd,
      })),
    })),
  };
}

/** The graph: the window's jobs plus the far ends of their edges (a dependency or parent older
 * than the window), so no edge points at nothing. */
async function graph(r: Q, limit: number): Promise<unknown> {
  const jobs = await recentHistory(r, limit);
  const ids = new Set(jobs.map((j) => j.id));
  const deps = await depsTouching(r, [...ids]);
  const outside = new Set<string>();
  for (const e of deps) for (const x of [e.job_id, e.dep_id]) if (!ids.has(x)) outside.add(x);
  for (const j of jobs) if (j.parent_id && !ids.has(j.parent_id)) outside.add(j.parent_id);
  const all = [...await historyJobsByIds(r, [...outside]), ...jobs];
  const known = new Set(all.map((j) => j.id));
  return {
    nodes: all.map(node),
    edges: [
      ...all.filter((j) => j.parent_id && known.has(j.parent_id)).map((j) => ({ from: j.parent_id!, to: j.id, kind: 'parent' as const })),
      ...deps.filter((e) => known.has(e.job_id) && known.has(e.dep_id)).map((e) => ({ from: e.dep_id, to: e.job_id, kind: 'dep' as const })),
    ],
  };
}
