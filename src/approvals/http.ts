// The person's channel to requests over the hub's HTTP endpoint (mounted under /api/ by
// src/server/http.ts, after its Host, Origin and bearer-token checks). Lead token only: it is
// what the person's CLI reads from <state>/lead.token, and what the later terminal view and
// dashboard reuse. Answers are recorded as the person's: answered_by "person (<channel>)".
//   GET  /api/requests[?status=pending|answered|timed_out|cancelled|all]  → { requests, late }
//   GET  /api/requests/<id>                                                → { request }
//   POST /api/requests/<id>/respond  { decision? | answer?, comment?, channel, confirmation? }
// Errors: { error: { code, message } } with 400 (bad input), 403, 404, 405, 409 (too late: the
// request closed; the body also carries the closed request and the answer is kept as late).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Caller } from '../services/context.js';
import { OverseerError } from '../errors.js';
import { BodyError, readBody } from '../http/body.js';
import { TooLateError, type RequestService } from './service.js';
import { ListRequestsInput, RespondInput } from '../contract/coord.js';

const MAX_BODY = 1024 * 1024;

/** respond's own fields (src/contract/coord.ts; the request id is in the path), and how the person answered. */
export const PersonAnswerBody = RespondInput.omit({ request_id: true }).extend({
  channel: z.enum(['cli', 'web'], { message: 'channel must be "cli" or "web"' }),
  /** How the person confirmed a person-only answer: on a terminal (tty), with an explicit flag, or in the dashboard's confirm dialog (page). */
  confirmation: z.enum(['tty', 'flag', 'page']).optional(),
}).strict();
export type PersonAnswerBody = z.infer<typeof PersonAnswerBody>;

const ListQuery = z.enum(ListRequestsInput.shape.status.removeDefault().options, { message: 'status must be pending, answered, timed_out, cancelled or all' });

const STATUS: Record<string, number> = { invalid_input: 400, forbidden: 403, not_found: 404, invalid_state: 409 };

function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
  return true;
}

const fail = (res: ServerResponse, status: number, code: string, message: string, extra: object = {}): true => send(res, status, { error: { code, message }, ...extra });

/** Who answered, as recorded: the channel, and a flag when no terminal confirmed it. */
export const personLabel = (b: Pick<PersonAnswerBody, 'channel' | 'confirmation'>): string =>
  `person (${b.channel}${b.confirmation === 'flag' ? ', --as-person' : ''})`;

export function personApi(requests: RequestService): (caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL) => Promise<boolean> {
  return async (caller, req, res, url) => {
    const m = /^\/api\/requests(?:\/([^/]+)(\/respond)?)?$/.exec(url.pathname);
    if (!m) return false;
    if (caller.role !== 'lead') return fail(res, 403, 'forbidden', 'the requests API takes the lead token (<state>/lead.token); an agent cannot answer requests');
    const [, rawId, respond] = m;
    const id = rawId === undefined ? undefined : decodeURIComponent(rawId);
    try {
      if (!id) {
        if (req.method !== 'GET') return fail(res, 405, 'method_not_allowed', 'GET /api/requests lists requests');
        const status = ListQuery.safeParse(url.searchParams.get('status') ?? 'pending');
        if (!status.success) return fail(res, 400, 'invalid_input', status.error.issues[0]!.message);
        return send(res, 200, { requests: await requests.views(await requests.listed(status.data, 200)), late: await requests.withLateAnswers(10) });
      }
      if (!respond) {
        if (req.method !== 'GET') return fail(res, 405, 'method_not_allowed', `GET /api/requests/${id} shows a request; POST /api/requests/${id}/respond answers it`);
        return send(res, 200, { request: await requests.view(await requests.get(id)) });
      }
      if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', `POST a JSON answer to /api/requests/${id}/respond`);
      let raw: unknown;
      try {
        raw = await readBody(req, { limit: MAX_BODY, empty: {} });
      } catch (err) {
        if (err instanceof BodyError) return fail(res, err.status, 'invalid_input', err.message);
        throw err;
      }
      const b = PersonAnswerBody.safeParse(raw);
      if (!b.success) return fail(res, 400, 'invalid_input', b.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
      const r = await requests.get(id);
      if (r.who === 'person' && r.status === 'pending' && !b.data.confirmation) {
        return fail(res, 400, 'invalid_input', `request ${id} is for the person only: the answer must say how the person confirmed it (confirmation "tty", "flag" or "page")`);
      }
      const { decision, answer, comment } = b.data;
      return send(res, 200, { request: await requests.answerAsPerson(id, { decision, answer, comment }, personLabel(b.data), { leadSeen: true }) });
    } catch (err) {
      if (err instanceof TooLateError) return fail(res, 409, 'too_late', err.message, { request: err.request });
      if (err instanceof OverseerError && STATUS[err.code]) return fail(res, STATUS[err.code]!, err.code, err.message);
      throw err;
    }
  };
}
