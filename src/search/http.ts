// Transcript search over the hub's HTTP endpoint, for the dashboard's search box (mounted under
// /api/ by src/server/http.ts, after its Host, Origin and token checks). Scoped like the tool:
// the lead (token or dashboard session) searches every job, an agent's token its own subtree.
//   GET /api/search?q=<query>[&job=<id>][&label=<l>][&since=2h][&limit=20]  → SearchResult
// Errors: { error: { code, message } } with 400 (bad query or parameter), 403, 404, 405.
import type { ServerResponse } from 'node:http';
import type { ApiHandler } from '../http/api.js';
import { OverseerError } from '../errors.js';
import { MAX_LIMIT, type SearchOptions, type TranscriptSearch } from './service.js';

const STATUS: Record<string, number> = { invalid_input: 400, forbidden: 403, not_found: 404 };
const PARAMS = new Set(['q', 'job', 'label', 'since', 'limit']);

function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
  return true;
}
const fail = (res: ServerResponse, status: number, code: string, message: string): true => send(res, status, { error: { code, message } });

export function searchApi(search: TranscriptSearch): ApiHandler {
  return async (caller, req, res, url) => {
    if (!/^\/api\/search\/?$/.test(url.pathname)) return false;
    if (req.method !== 'GET') return fail(res, 405, 'method_not_allowed', `GET ${url.pathname}?q=… (search is read-only)`);
    const unknown = [...url.searchParams.keys()].filter((k) => !PARAMS.has(k));
    if (unknown.length) return fail(res, 400, 'invalid_input', `unknown parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')}: use q, job, label, since, limit`);
    const q = url.searchParams.get('q');
    if (q === null || q.trim() === '') return fail(res, 400, 'invalid_input', 'q is required: the words to search for, e.g. ?q=connection+refused');
    if (q.length > 1000) return fail(res, 400, 'invalid_input', 'q is longer than 1000 characters: search with the key words only');
    const rawLimit = url.searchParams.get('limit');
    const limit = rawLimit === null ? undefined : Number(rawLimit);
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= MAX_LIMIT)) {
      return fail(res, 400, 'invalid_input', `limit must be a whole number from 1 to ${MAX_LIMIT}, got ${JSON.stringify(rawLimit)}`);
    }
    const o: SearchOptions = { query: q };
    const job = url.searchParams.get('job');
    const label = url.searchParams.get('label');
    const since = url.searchParams.get('since');
    if (job !== null) o.job_id = job;
    if (label !== null) o.label = label;
    if (since !== null) o.since = since;
    if (limit !== undefined) o.limit = limit;
    try {
      return send(res, 200, await search.search(o, caller));
    } catch (err) {
      if (err instanceof OverseerError && STATUS[err.code]) return fail(res, STATUS[err.code]!, err.code, err.message);
      throw err;
    }
  };
}
