// The Runs panel (docs/dispatch.md, docs/scripts.md): dispatch runs and script runs with their
// counts, one run whole, and the person's verbs on it — through the lead's own tools (cancel_run,
// pause_run, resume_run: the same validation and rules as the lead's calls), the run id from the path.
//   GET  /api/web/runs                          { runs: [{ run_id, kind, title, status, counts, cost_usd, … }] }
//   GET  /api/web/runs/<id>                     get_run's view (a script run: calls and log; a dispatch run: tasks)
//   POST /api/web/runs/<id>/resume              resume_run: re-run what did not succeed
//   POST /api/web/runs/<id>/cancel              cancel_run (either kind)
//   POST /api/web/runs/<id>/pause  {paused?}    pause_run (script runs): no new call starts / calls start again
//   POST /api/web/runs/<id>/calls/<seq>/cancel  cancel_run { call }: one call of a script run
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { RunService } from '../../runs/runService.js';
import type { HubContext } from '../../services/context.js';
import type { ToolDef } from '../../tools/registry.js';
import { scriptCallCounts, scriptRunView } from '../../scripts/view.js';
import { HttpError, PASS, methodNotAllowed, parseBody, parseQuery } from './http.js';

const REASON = 'by the person from the dashboard';

/** A lead tool called as the lead tools are: its schema checks the arguments, its handler acts. */
function leadTool(tools: readonly ToolDef[]): (name: string, args: Record<string, unknown>) => Promise<Record<string, any>> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return async (name, args) => {
    const t = byName.get(name);
    if (!t) throw new HttpError(501, 'not_available', `this hub has no ${name} tool: update Overseer and restart the hub`);
    const parsed = t.input.safeParse(args);
    if (!parsed.success) throw new HttpError(400, 'invalid_input', parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '));
    const ac = new AbortController();
    return (await t.handler(parsed.data, { role: 'lead' }, { signal: ac.signal, progress: () => undefined })) as Record<string, any>;
  };
}

export function runRoutes(d: { ctx: HubContext; services: { runs?: RunService; tools?: readonly ToolDef[] } }) {
  const tool = leadTool(d.services.tools ?? []);
  const script = async (id: string): Promise<Record<string, any> | undefined> => scriptRunView(d.ctx.sql.db, id);
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    const m = /^\/api\/web\/runs(?:\/([^/]+)(?:\/(resume|cancel|pause)|\/calls\/(\d+)\/cancel)?)?$/.exec(url.pathname);
    const runs = d.services.runs;
    if (!m || !runs) return PASS;
    const [, rawId, verb, seq] = m;
    const id = rawId ? decodeURIComponent(rawId) : undefined;
    if (verb || seq) {
      if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
      if (seq) return tool('cancel_run', { run_id: id, call: Number(seq), reason: `call cancelled ${REASON}` });
      if (verb === 'cancel') return tool('cancel_run', { run_id: id, reason: `cancelled ${REASON}` });
      if (verb === 'pause') {
        const b = await parseBody(req, z.object({ paused: z.boolean().optional() }).strict());
        return tool('pause_run', { run_id: id, ...b });
      }
      return tool('resume_run', { run_id: id });
    }
    if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
    if (id) return (await script(id)) ?? await runs.view(id);
    const q = parseQuery(url, z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }), ['limit']);
    return {
      runs: await Promise.all((await runs.list(q.limit)).runs.map(async (r) => {
        const s = await script(r.run_id as string);
        if (!s) return { kind: 'dispatch', ...r };
        const { calls, log: _log, result: _result, ...rest } = s;
        return { ...rest, paused: s.paused === true, counts: scriptCallCounts(calls as { status: string }[]) };
      })),
    };
  };
}
