// The dashboard's own API, under /api/web/ (after src/server/http.ts's Host, Origin and token or
// session-cookie + CSRF checks: a cookie stands for the lead here, and every non-GET request
// carries the session's CSRF token from the page's own origin). The floor itself comes from
// /api/floor[/stream], requests are listed and answered through /api/requests
// (src/approvals/http.ts, channel "web"), transcript search is /api/search (src/search/http.ts).
// This adds, one module per panel (src/web/api/*.ts, each listing its routes):
//   POST /api/web/login-code    lead token only → { url, expires_at } (`overseer dashboard`)
//   POST /api/web/revoke        lead token only: a new key, every session ends
//   GET  /api/web/session       session cookie → { csrf, expires_at, version }
//   /api/web/jobs/<id>[/…]      jobs.ts: summary, output (paged, streamed), diff, message/pause/resume/cancel
//   /api/web/workflows[/<id>[/cancel|resume]]   workflows.ts
//   /api/web/debates[/<id>[/cancel]]             debates.ts
//   /api/web/notes, /api/web/note?key=          notes.ts
//   /api/web/locks                              locks.ts
//   /api/web/kb[/<id>[/delete]]                 kb.ts: browse, search, add, edit, delete
//   /api/web/usage, /timeline, /graph           history.ts
//   /api/web/runs[/<id>[/resume|cancel|pause|calls/<seq>/cancel]]  runs.ts: dispatch and script runs
//   /api/web/schedules[/<id>[/cancel]]          schedules.ts: list_schedules, cancel_schedule
// Every GET is read-only; every POST body is validated with zod. Errors: { error: { code,
// message } }; a refused call changes nothing. Lead-equivalent callers only: an agent's token
// gets 403.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Caller, HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { LockService } from '../services/locks.js';
import type { NoteService } from '../services/notes.js';
import type { WorkflowService } from '../workflow/service.js';
import type { KnowledgeBase } from '../kb/service.js';
import type { ApiHandler } from '../http/api.js';
import type { WebAuth } from './auth.js';
import { header } from './pages.js';
import { HttpError, PASS, answer, fail, methodNotAllowed } from './api/http.js';
import { jobRoutes } from './api/jobs.js';
import { spawnRoutes } from './api/spawn.js';
import { workflowRoutes } from './api/workflows.js';
import { debateRoutes } from './api/debates.js';
import type { DebateService } from '../debate/index.js';
import { noteRoutes } from './api/notes.js';
import { lockRoutes } from './api/locks.js';
import { kbRoutes } from './api/kb.js';
import { historyRoutes } from './api/history.js';
import { runRoutes } from './api/runs.js';
import type { RunService } from '../runs/runService.js';
import type { ToolDef } from '../tools/registry.js';
import { scheduleRoutes } from './api/schedules.js';
import type { Schedules } from '../runs/schedules.js';

export type { OutputChunk } from './api/jobs.js';

/** The hub's services the panels read and act through (never their tables directly). */
export interface WebServices {
  workflows: WorkflowService;
  notes: NoteService;
  locks: LockService;
  kb: KnowledgeBase;
  /** Dispatch runs (src/runs), for the Runs panel. */
  runs?: RunService;
  /** The lead's tools: the Runs panel's verbs go through them (cancel_run, pause_run, resume_run). */
  tools?: readonly ToolDef[];
  /** Debates (src/debate); the panel is left out without them. */
  debates?: DebateService;
  /** Schedules (src/runs/schedules.ts), for the Schedules panel. */
  schedules?: Schedules;
}

export interface WebApiDeps {
  ctx: HubContext;
  jobs: JobService;
  services: WebServices;
  auth: WebAuth;
  /** The hub's URL (for login links). */
  url: () => string;
  version: string;
  /** A new key: every session cookie stops working. */
  revoke(): void;
}

type Route = (req: IncomingMessage, res: ServerResponse, url: URL) => Promise<unknown>;

export function webApi(d: WebApiDeps): ApiHandler & { closeStreams(): void } {
  const jobs = jobRoutes(d);
  const routes: Route[] = [
    jobs.route,
    spawnRoutes(d),
    workflowRoutes(d.services),
    noteRoutes({ ctx: d.ctx, notes: d.services.notes }),
    lockRoutes({ ctx: d.ctx, locks: d.services.locks }),
    kbRoutes(d.services),
    historyRoutes(d),
    runRoutes({ ctx: d.ctx, services: d.services }),
    ...(d.services.debates ? [debateRoutes({ debates: d.services.debates, notes: d.services.notes })] : []),
    scheduleRoutes(d.services),
  ];

  const own: Route = async (req, _res, url) => {
    const p = url.pathname;
    if (p === '/api/web/login-code') {
      if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', p);
      if (!header(req, 'authorization')) throw new HttpError(403, 'forbidden', 'a login code takes the lead token (run overseer dashboard), not a dashboard session');
      const c = d.auth.mintCode();
      return { url: `${d.url().replace(/\/mcp$/, '')}/login?code=${c.code}`, expires_at: new Date(c.expiresAt).toISOString() };
    }
    if (p === '/api/web/revoke') {
      if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', p);
      if (!header(req, 'authorization')) throw new HttpError(403, 'forbidden', 'revoking sessions takes the lead token (overseer dashboard --revoke)');
      d.revoke();
      return { revoked: true };
    }
    if (p === '/api/web/session') {
      const s = d.auth.session(req.headers.cookie);
      if (!s) throw new HttpError(401, 'unauthorized', 'no dashboard session: run overseer dashboard for a login link');
      return { csrf: d.auth.csrf(s), expires_at: new Date(s.expiresAt).toISOString(), version: d.version };
    }
    return PASS;
  };

  const handler = async (caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    if (!url.pathname.startsWith('/api/web/')) return false;
    if (caller.role !== 'lead') return fail(res, 403, 'forbidden', 'the dashboard API is the person\'s: an agent cannot use it');
    return answer(res, async () => {
      for (const r of [own, ...routes]) {
        const v = await r(req, res, url);
        if (v !== PASS) return v;
      }
      throw new HttpError(404, 'not_found', `no dashboard route ${req.method} ${url.pathname}`);
    });
  };
  return Object.assign(handler, { closeStreams: () => jobs.closeStreams() });
}
