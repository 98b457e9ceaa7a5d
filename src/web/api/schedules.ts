// The Schedules panel (docs/schedules.md): every schedule with how it repeats and its next run,
// one schedule with its occurrences, and cancel — the same service calls as list_schedules and
// cancel_schedule (same validation, same messages).
//   GET  /api/web/schedules[?status=&limit=]   list_schedules
//   GET  /api/web/schedules/<id>               list_schedules { schedule_id }: that one with its latest occurrences
//   POST /api/web/schedules/<id>/cancel        { reason? } → cancel_schedule
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { Schedules } from '../../runs/schedules.js';
import { CancelScheduleInput, ListSchedulesInput } from '../../contract/schedules.js';
import { HttpError, PASS, methodNotAllowed, parseBody, parseQuery } from './http.js';

const ListQuery = ListSchedulesInput.pick({ status: true }).extend({ limit: z.coerce.number().int().min(1).max(100).default(50) });
const CancelBody = CancelScheduleInput.pick({ reason: true }).strict();

export function scheduleRoutes(d: { schedules?: Schedules }) {
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    const m = /^\/api\/web\/schedules(?:\/([^/]+)(?:\/(cancel))?)?\/?$/.exec(url.pathname);
    if (!m || !d.schedules) return PASS;
    const id = m[1] === undefined ? undefined : decodeURIComponent(m[1]);
    if (!m[2]) {
      if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
      if (id) return { schedule: (await d.schedules.list({ schedule_id: id, limit: 1 })).schedules[0] };
      return d.schedules.list(parseQuery(url, ListQuery, ['status', 'limit']));
    }
    if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
    const body = await parseBody(req, CancelBody);
    const input = CancelScheduleInput.safeParse({ schedule_id: id, ...body });
    if (!input.success) throw new HttpError(400, 'invalid_input', input.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
    return { schedule: await d.schedules.cancel(input.data) };
  };
}
