// The Knowledge base panel: browse (newest first, by scope or tag), search, and the person's
// add / edit / delete. Adding goes through the same triage as report_learnings and `overseer kb
// add` (shape, secrets, duplicates merged); an edit must pass the same shape and secret checks.
//   GET  /api/web/kb[?scope=&tag=&q=&cursor=]   list_kb, or search_kb with q
//   GET  /api/web/kb/<entry_id>                 the whole entry
//   POST /api/web/kb                            { title, content, tags?, scope? } → stored | merged (400: rejected, with the reason)
//   POST /api/web/kb/<entry_id>                 { title?, content?, tags? } → the entry as changed
//   POST /api/web/kb/<entry_id>/delete          {} → { deleted, title }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { KnowledgeBase } from '../../kb/service.js';
import { LearningSchema, ListKbInput, MAX_QUERY_CHARS } from '../../contract/kb.js';
import { HttpError, PASS, methodNotAllowed, parseBody, parseQuery } from './http.js';

// list_kb's own fields (src/contract/kb.ts), and a search text as long as search_kb's query.
const ListQuery = ListKbInput.pick({ scope: true, tag: true, cursor: true }).extend({
  q: z.string().max(MAX_QUERY_CHARS, `q is longer than ${MAX_QUERY_CHARS} characters: search with the key words only`).optional(),
});
const AddBody = LearningSchema;
const EditBody = LearningSchema.omit({ scope: true }).partial().strict()
  .refine((b) => b.title !== undefined || b.content !== undefined || b.tags !== undefined, 'nothing to change: send title, content or tags');
const DeleteBody = z.object({}).strict();

export function kbRoutes(d: { kb: KnowledgeBase }) {
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    const m = /^\/api\/web\/kb(?:\/([^/]+)(\/delete)?)?\/?$/.exec(url.pathname);
    if (!m) return PASS;
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    if (req.method === 'GET') {
      if (m[2]) throw methodNotAllowed(req, 'POST', url.pathname);
      if (id) {
        const e = await d.kb.get(id);
        if (!e) throw new HttpError(404, 'not_found', `no knowledge base entry ${JSON.stringify(id)}: it may have been deleted`);
        return { ...e, created_at: new Date(e.created_at).toISOString(), updated_at: new Date(e.updated_at).toISOString() };
      }
      const q = parseQuery(url, ListQuery, ['scope', 'tag', 'q', 'cursor']);
      if (q.q?.trim()) return { hits: await d.kb.search(q.q, q.scope, 50) };
      return d.kb.list({ scope: q.scope, tag: q.tag, cursor: q.cursor, limit: 100 });
    }
    if (req.method !== 'POST') throw methodNotAllowed(req, 'GET or POST', url.pathname);
    if (!id) {
      const b = await parseBody(req, AddBody);
      const [r] = await d.kb.report([b], { jobId: null });
      if (r!.status === 'rejected') throw new HttpError(400, 'invalid_input', `not stored: ${r!.reason}`);
      return r;
    }
    if (m[2]) {
      await parseBody(req, DeleteBody);
      return d.kb.delete(id);
    }
    const b = await parseBody(req, EditBody);
    const e = await d.kb.edit(id, b);
    return { ...e, created_at: new Date(e.created_at).toISOString(), updated_at: new Date(e.updated_at).toISOString() };
  };
}
