// The Debates panel: every debate with its outcome, and one debate whole — each round's
// positions and verdicts, the post-action, review and response, the final note — and cancel.
//   GET  /api/web/debates[?status=&limit=]   list_debates
//   GET  /api/web/debates/<id>               get_debate + the final note
//   POST /api/web/debates/<id>/cancel        {}
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Caller } from '../../services/context.js';
import type { NoteService } from '../../services/notes.js';
import type { DebateService } from '../../debate/index.js';
import { ListDebatesInput } from '../../contract/debates.js';
import { PASS, methodNotAllowed, parseBody, parseQuery } from './http.js';

const lead: Caller = { role: 'lead' };
const ListQuery = ListDebatesInput.extend({ limit: z.coerce.number().int().min(1).max(100).default(50) });
const CancelBody = z.object({}).strict();

export function debateRoutes(d: { debates: DebateService; notes: NoteService }) {
  const detail = async (id: string) => {
    const debate = await d.debates.get(id);
    return { debate, final: (await d.notes.get(debate.notes.final))?.value ?? null };
  };
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    const m = /^\/api\/web\/debates(?:\/([^/]+)(?:\/(cancel))?)?\/?$/.exec(url.pathname);
    if (!m) return PASS;
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    if (!m[2]) {
      if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
      return id ? detail(id) : d.debates.list(parseQuery(url, ListQuery, ['status', 'limit']));
    }
    if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
    await parseBody(req, CancelBody);
    await d.debates.cancel(id!, lead);
    return detail(id!);
  };
}
