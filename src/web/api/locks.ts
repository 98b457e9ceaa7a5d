// The Locks panel: who holds which file (with why, since when, until when) and who waits for
// which files behind whom — the lock service's list and its wait rows, with job titles.
//   GET /api/web/locks   { locks: [{ path, holder, holder_title, reason, acquired_at, expires_at, waiters: [{ job_id, title }] }],
//                          waits: [{ id, job_id, title, paths, reason, since, blocked_by: [{ path, holder, holder_title }] }] }
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { HubContext } from '../../services/context.js';
import type { LockService } from '../../services/locks.js';
import { isoTime } from '../../clock.js';
import { PASS, methodNotAllowed, parseQuery } from './http.js';
import { titlesOf } from '../../store/sql/jobs.js';
import { isLead, leadHub } from '../../domain/lead.js';

export function lockRoutes(d: { ctx: HubContext; locks: LockService }) {
  return async (req: IncomingMessage, _res: ServerResponse, url: URL): Promise<unknown> => {
    if (url.pathname !== '/api/web/locks') return PASS;
    if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
    parseQuery(url, z.object({}), []);
    const held = (await d.locks.list({})).locks; // expires what is past its TTL first
    const waits = (await d.locks.waiting()).map((w) => ({ ...w, paths: JSON.parse(w.paths_json) as string[] }));
    const byPath = new Map(held.map((l) => [l.path, l.holder]));
    const titles = await titlesOf(d.ctx.sql.db, [...held.map((l) => l.holder), ...waits.map((w) => w.holder)].filter((h) => !isLead(h)));
    const titleOf = (holder: string): string | null => (holder === 'lead' ? 'the lead' : isLead(holder) ? `the lead on hub ${leadHub(holder) ?? '?'}` : titles.get(holder) ?? null);
    return {
      locks: held.map((l) => ({
        path: l.path, holder: l.holder, holder_title: titleOf(l.holder), reason: l.reason, acquired_at: l.acquired_at, expires_at: l.expires_at,
        waiters: waits.filter((w) => w.paths.includes(l.path)).map((w) => ({ job_id: w.holder, title: titleOf(w.holder) })),
      })),
      waits: waits.map((w) => ({
        id: w.id, job_id: w.holder, title: titleOf(w.holder), paths: w.paths, reason: w.reason, since: isoTime(w.created_at),
        blocked_by: w.paths.filter((p) => byPath.has(p) && byPath.get(p) !== w.holder).map((p) => ({ path: p, holder: byPath.get(p)!, holder_title: titleOf(byPath.get(p)!) })),
      })),
    };
  };
}
