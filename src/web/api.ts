// The dashboard's own API, under /api/web/ (after src/server/http.ts's Host, Origin, token or
// session-cookie + CSRF checks). The floor itself comes from /api/floor[/stream] and requests are
// answered through /api/requests (src/approvals/http.ts, channel "web"); this adds:
//   POST /api/web/login-code              lead token only → { url, expires_at } (`overseer dashboard`)
//   GET  /api/web/session                 session cookie → { csrf, expires_at, version }
//   GET  /api/web/jobs/<id>               get_agent with its last 50 events and its requests
//   GET  /api/web/jobs/<id>/output?attempt=&after=   readable transcript lines from a byte offset
//   GET  /api/web/jobs/<id>/output/stream SSE `event: lines`, `id: <attempt>:<offset>` (resumes from Last-Event-ID)
//   GET  /api/web/jobs/<id>/diff          the job's changes, per file
//   POST /api/web/jobs/<id>/message|pause|resume|cancel   the lead's tools, as the person at the page
// Errors: { error: { code, message } }; a refused call changes nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { Caller, HubContext } from '../services/context.js';
import type { JobService } from '../services/jobs.js';
import type { ApiHandler } from '../server/http.js';
import { OverseerError, errorMessage } from '../errors.js';
import { renderLine } from '../launch/claude/transcript.js';
import { diffOfJob } from '../git/jobDiff.js';
import type { WebAuth } from './auth.js';
import { header } from './pages.js';

const STATUS: Record<string, number> = { invalid_input: 400, forbidden: 403, not_found: 404, invalid_state: 409 };
const MAX_BODY = 256 * 1024;
/** At most this much transcript per read. */
const OUTPUT_CHUNK = 256 * 1024;

const send = (res: ServerResponse, status: number, body: unknown): true => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
  return true;
};
const fail = (res: ServerResponse, status: number, code: string, message: string): true => send(res, status, { error: { code, message } });

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) throw new SyntaxError(`the body is over ${MAX_BODY} bytes`);
    chunks.push(c as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

const Bodies = {
  message: z.object({ text: z.string().min(1, 'text is empty: write the message').max(20_000) }).strict(),
  pause: z.object({ mode: z.enum(['freeze', 'stop']).default('freeze') }).strict(),
  resume: z.object({ message: z.string().min(1).max(20_000).optional() }).strict(),
  cancel: z.object({ reason: z.string().max(2000).optional(), cascade: z.boolean().default(true) }).strict(),
};

export interface OutputChunk {
  attempt: number | null;
  /** Byte offset after the last whole line returned: pass it back as `after`. */
  offset: number;
  lines: string[];
  /** The job may still write (running, queued for a retry…). */
  live: boolean;
}

export interface WebApiDeps {
  ctx: HubContext;
  jobs: JobService;
  auth: WebAuth;
  /** The hub's URL (for login links). */
  url: () => string;
  version: string;
  /** A new key: every session cookie stops working. */
  revoke(): void;
}

export function webApi(d: WebApiDeps): ApiHandler & { closeStreams(): void } {
  const open = new Set<ServerResponse>();
  const lead: Caller = { role: 'lead' };

  /** Whole lines of a job's transcript after byte `after`, rendered readable. */
  const output = (jobId: string, attemptN: number | undefined, after: number): OutputChunk => {
    const j = d.jobs.job(jobId);
    const attempts = d.ctx.store.attempts(j.id);
    const a = attemptN === undefined ? attempts.at(-1) : attempts.find((x) => x.n === attemptN);
    const live = !['succeeded', 'failed', 'cancelled', 'interrupted'].includes(j.status);
    if (!a || !existsSync(a.transcript)) return { attempt: a?.n ?? null, offset: 0, lines: [], live };
    const size = statSync(a.transcript).size;
    if (after >= size) return { attempt: a.n, offset: Math.min(after, size), lines: [], live: live && a.n === attempts.at(-1)?.n };
    const len = Math.min(OUTPUT_CHUNK, size - after);
    const buf = Buffer.alloc(len);
    const fd = openSync(a.transcript, 'r');
    try { readSync(fd, buf, 0, len, after); } finally { closeSync(fd); }
    const end = buf.lastIndexOf(0x0a);
    if (end < 0) return { attempt: a.n, offset: after, lines: [], live };
    const lines = buf.subarray(0, end).toString('utf8').split('\n').map((l) => renderLine(l, { timestamps: true, maxFieldChars: 4000 })).filter(Boolean);
    return { attempt: a.n, offset: after + end + 1, lines, live: live && a.n === attempts.at(-1)?.n };
  };

  /** SSE of a job's output: every 250 ms while open, frames only when lines were added. */
  const stream = (req: IncomingMessage, res: ServerResponse, jobId: string): void => {
    const last = /^(\d+):(\d+)$/.exec(header(req, 'last-event-id') ?? '');
    let attempt = last ? Number(last[1]) : undefined;
    let offset = last ? Number(last[2]) : 0;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive' });
    res.write('retry: 1000\n\n');
    open.add(res);
    const tick = (): void => {
      let c: OutputChunk;
      try {
        const latest = d.ctx.store.attempts(jobId).at(-1)?.n;
        c = output(jobId, attempt ?? latest, offset);
        // An earlier attempt read to its end: go on with the latest one from its start.
        if (!c.lines.length && latest !== undefined && c.attempt !== null && c.attempt < latest) {
          attempt = latest;
          offset = 0;
          c = output(jobId, latest, 0);
        }
      } catch {
        res.end();
        return;
      }
      const first = attempt === undefined;
      attempt = c.attempt ?? attempt;
      offset = c.offset;
      if (c.lines.length || first) res.write(`id: ${c.attempt ?? 0}:${c.offset}\nevent: lines\ndata: ${JSON.stringify(c)}\n\n`);
    };
    tick();
    const t = setInterval(tick, 250);
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    res.once('close', () => { clearInterval(t); clearInterval(ping); open.delete(res); });
  };

  const handler = async (caller: Caller, req: IncomingMessage, res: ServerResponse, url: URL): Promise<boolean> => {
    const p = url.pathname;
    if (!p.startsWith('/api/web/')) return false;
    if (caller.role !== 'lead') return fail(res, 403, 'forbidden', 'the dashboard API is the person\'s: an agent cannot use it');
    try {
      if (p === '/api/web/login-code') {
        if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', 'POST /api/web/login-code');
        if (!header(req, 'authorization')) return fail(res, 403, 'forbidden', 'a login code takes the lead token (run overseer dashboard), not a dashboard session');
        const c = d.auth.mintCode();
        return send(res, 200, { url: `${d.url().replace(/\/mcp$/, '')}/login?code=${c.code}`, expires_at: new Date(c.expiresAt).toISOString() });
      }
      if (p === '/api/web/revoke') {
        if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', 'POST /api/web/revoke');
        if (!header(req, 'authorization')) return fail(res, 403, 'forbidden', 'revoking sessions takes the lead token (overseer dashboard --revoke)');
        d.revoke();
        return send(res, 200, { revoked: true });
      }
      if (p === '/api/web/session') {
        const s = d.auth.session(req.headers.cookie);
        if (!s) return fail(res, 401, 'unauthorized', 'no dashboard session: run overseer dashboard for a login link');
        return send(res, 200, { csrf: d.auth.csrf(s), expires_at: new Date(s.expiresAt).toISOString(), version: d.version });
      }
      const m = /^\/api\/web\/jobs\/([^/]+)(?:\/(output\/stream|output|diff|message|pause|resume|cancel))?$/.exec(p);
      if (!m) return fail(res, 404, 'not_found', `no dashboard route ${req.method} ${p}`);
      const id = decodeURIComponent(m[1]!);
      const what = m[2];
      if (!what || what === 'output' || what === 'output/stream' || what === 'diff') {
        if (req.method !== 'GET') return fail(res, 405, 'method_not_allowed', `GET ${p}`);
        const j = d.jobs.job(id);
        if (!what) return send(res, 200, d.jobs.get(j.id, lead, { events: 50 }));
        if (what === 'diff') return send(res, 200, await diffOfJob(j));
        if (what === 'output/stream') { stream(req, res, j.id); return true; }
        const n = url.searchParams.get('attempt');
        const after = Number(url.searchParams.get('after') ?? '0');
        if (!Number.isInteger(after) || after < 0) return fail(res, 400, 'invalid_input', 'after is a byte offset from a previous answer (a whole number ≥ 0)');
        return send(res, 200, output(j.id, n === null ? undefined : Number(n), after));
      }
      if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', `POST ${p}`);
      let raw: unknown;
      try { raw = await readBody(req); } catch (err) { return fail(res, 400, 'invalid_input', `the body is not JSON: ${errorMessage(err)}`); }
      const schema = Bodies[what as keyof typeof Bodies];
      const b = schema.safeParse(raw);
      if (!b.success) return fail(res, 400, 'invalid_input', b.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
      const body = b.data as Record<string, unknown>;
      const j = d.jobs.job(id);
      switch (what) {
        case 'message': return send(res, 200, d.jobs.message(j.id, body.text as string, lead));
        case 'pause': return send(res, 200, await d.jobs.pause({ job_id: j.id, mode: body.mode as 'freeze' | 'stop' }, lead));
        case 'resume': return send(res, 200, await d.jobs.resume({ job_id: j.id, ...(body.message ? { message: body.message as string } : {}) }, lead));
        default: {
          const before = j.status;
          const r = await d.jobs.cancel({ job_id: j.id, reason: (body.reason as string | undefined) ?? 'cancelled from the dashboard', cascade: body.cascade as boolean }, lead);
          if (['succeeded', 'failed', 'cancelled', 'interrupted'].includes(before)) return fail(res, 409, 'invalid_state', `job ${j.id} had already ended (${before}): nothing to cancel`);
          return send(res, 200, r);
        }
      }
    } catch (err) {
      if (err instanceof OverseerError && STATUS[err.code]) return fail(res, STATUS[err.code]!, err.code, err.message);
      throw err;
    }
  };
  return Object.assign(handler, { closeStreams: () => { for (const r of open) r.end(); open.clear(); } });
}
