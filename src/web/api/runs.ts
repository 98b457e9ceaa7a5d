// The Runs panel (docs/dispatch.md): dispatch runs with their counts, and one run's tasks.
//   GET  /api/web/runs              { runs: [{ run_id, title, status, note?, counts, cost_usd, created_at, ended_at? }] }
//   GET  /api/web/runs/<id>         the run view of get_run (every task with its status and job)
//   POST /api/web/runs/<id>/resume  resume_run: re-run what did not succeed
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { RunService } from '../../runs/runService.js';
import { PASS, methodNotAllowed, parseQuery } from './http.js';

export function runRoutes(d: { runs?: RunService }) {
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    const m = /^\/api\/web\/runs(?:\/([^/]+)(\/resume)?)?$/.exec(url.pathname);
    if (!m || !d.runs) return PASS;
    const [, id, resume] = m;
    if (resume) {
      if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
      return d.runs.resume(decodeURIComponent(id!));
    }
    if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
    if (id) return d.runs.view(decodeURIComponent(id));
    const q = parseQuery(url, z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }), ['limit']);
    return d.runs.list(q.limit);
  };
}
