// The agent panel's routes: one job's summary, its readable transcript (paged, and streamed over
// SSE resumable by `Last-Event-ID: <attempt>:<byte offset>`), its changes per file, and the
// lead's actions on it taken by the person at the page.
//   GET  /api/web/jobs/<id>                           get_agent with its last 50 events
//   GET  /api/web/jobs/<id>/output?attempt=&after=    readable lines from a byte offset
//   GET  /api/web/jobs/<id>/output/stream[?attempt=]  SSE `event: lines`, `id: <attempt>:<offset>`
//   GET  /api/web/jobs/<id>/diff                      the job's changes, per file
//   POST /api/web/jobs/<id>/message|pause|resume|cancel
import type { IncomingMessage, ServerResponse } from 'node:http';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { z } from 'zod';
import type { Caller, HubContext } from '../../services/context.js';
import type { JobService } from '../../services/jobs.js';
import { renderLine } from '../../launch/claude/transcript.js';
import { diffOfJob } from '../../branches/jobDiff.js';
import { CancelInput, MessageText, PauseInput, ResumeInput } from '../../contract/agents.js';
import { header } from '../pages.js';
import { HttpError, PASS, methodNotAllowed, parseBody, parseQuery } from './http.js';
import { SSE_HEADERS, keepAlive, sseFrame } from '../../http/sse.js';
import { attemptsOf, lastAttempt } from '../../store/sql/jobs.js';

/** At most this much transcript per read. */
const OUTPUT_CHUNK = 256 * 1024;
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

// The lead's tools' own schemas (src/contract/agents.ts), the job id taken from the path.
const Bodies = {
  message: z.object({ text: MessageText }).strict(),
  pause: PauseInput.omit({ job_id: true }),
  resume: ResumeInput.omit({ job_id: true }),
  cancel: CancelInput.omit({ job_id: true }),
};

const OutputQuery = z.object({
  attempt: z.coerce.number().int('attempt is an attempt number (1, 2, …)').min(1, 'attempt is an attempt number (1, 2, …)').optional(),
  after: z.coerce.number().int('after is a byte offset from a previous answer (a whole number ≥ 0)').min(0, 'after is a byte offset from a previous answer (a whole number ≥ 0)').default(0),
});

export interface OutputChunk {
  attempt: number | null;
  /** Byte offset after the last whole line returned: pass it back as `after`. */
  offset: number;
  lines: string[];
  /** The job may still write (running, queued for a retry…). */
  live: boolean;
  /** The job's attempts so far (the page offers the earlier ones). */
  attempts: number;
}

export interface JobRoutes {
  route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<unknown>;
  closeStreams(): void;
}

export function jobRoutes(d: { ctx: HubContext; jobs: JobService }): JobRoutes {
  const open = new Set<ServerResponse>();
  const lead: Caller = { role: 'lead' };

  /** Whole lines of a job's transcript after byte `after`, rendered readable. */
  const output = async (jobId: string, attemptN: number | undefined, after: number): Promise<OutputChunk> => {
    const j = await d.jobs.job(jobId);
    const attempts = await attemptsOf(d.ctx.sql.db, j.id);
    const a = attemptN === undefined ? attempts.at(-1) : attempts.find((x) => x.n === attemptN);
    const live = !ENDED.has(j.status);
    const base = { attempts: attempts.length };
    if (attemptN !== undefined && !a && attempts.length) throw new HttpError(404, 'not_found', `job ${j.id} has no attempt ${attemptN} (it has ${attempts.length})`);
    if (!a || !existsSync(a.transcript)) return { ...base, attempt: a?.n ?? null, offset: 0, lines: [], live };
    const isLast = a.n === attempts.at(-1)?.n;
    const size = statSync(a.transcript).size;
    if (after >= size) return { ...base, attempt: a.n, offset: Math.min(after, size), lines: [], live: live && isLast };
    const len = Math.min(OUTPUT_CHUNK, size - after);
    const buf = Buffer.alloc(len);
    const fd = openSync(a.transcript, 'r');
    try { readSync(fd, buf, 0, len, after); } finally { closeSync(fd); }
    const end = buf.lastIndexOf(0x0a);
    if (end < 0) return { ...base, attempt: a.n, offset: after, lines: [], live };
    const lines = buf.subarray(0, end).toString('utf8').split('\n').map((l) => renderLine(l, { timestamps: true, maxFieldChars: 4000 })).filter(Boolean);
    return { ...base, attempt: a.n, offset: after + end + 1, lines, live: live && isLast };
  };

  /** SSE of a job's output: every 250 ms while open, frames only when lines were added. */
  const stream = (req: IncomingMessage, res: ServerResponse, jobId: string, pinned: number | undefined): true => {
    const last = /^(\d+):(\d+)$/.exec(header(req, 'last-event-id') ?? '');
    let attempt = last ? Number(last[1]) : pinned;
    let offset = last ? Number(last[2]) : 0;
    res.writeHead(200, SSE_HEADERS);
    res.write(sseFrame({ retry: 1000 }));
    open.add(res);
    let first = true;
    /** A tick reads through the layer: one at a time (a tick due while one runs is skipped), so frames stay in order. */
    let busy = false;
    const tick = async (): Promise<void> => {
      if (busy || res.writableEnded) return;
      busy = true;
      let c: OutputChunk;
      try {
        const latest = (await lastAttempt(d.ctx.sql.db, jobId))?.n;
        c = await output(jobId, attempt ?? latest, offset);
        // An earlier attempt read to its end: go on with the latest one from its start (unless the page pinned one).
        if (pinned === undefined && !c.lines.length && latest !== undefined && c.attempt !== null && c.attempt < latest) {
          attempt = latest;
          offset = 0;
          c = await output(jobId, latest, 0);
        }
      } catch {
        res.end();
        return;
      } finally {
        busy = false;
      }
      if (res.writableEnded) return;
      attempt = c.attempt ?? attempt;
      offset = c.offset;
      if (c.lines.length || first) res.write(sseFrame({ event: 'lines', data: JSON.stringify(c), id: `${c.attempt ?? 0}:${c.offset}` }));
      first = false;
    };
    void tick();
    const t = setInterval(() => void tick(), 250);
    keepAlive(res, 15_000);
    res.once('close', () => { clearInterval(t); open.delete(res); });
    return true;
  };

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<unknown> => {
    const m = /^\/api\/web\/jobs\/([^/]+)(?:\/(output\/stream|output|diff|message|pause|resume|cancel))?$/.exec(url.pathname);
    if (!m) return PASS;
    const id = decodeURIComponent(m[1]!);
    const what = m[2];
    if (!what || what === 'output' || what === 'output/stream' || what === 'diff') {
      if (req.method !== 'GET') throw methodNotAllowed(req, 'GET', url.pathname);
      const j = await d.jobs.job(id);
      if (!what) return d.jobs.get(j.id, lead, { events: 50 });
      if (what === 'diff') return diffOfJob(j);
      const q = parseQuery(url, OutputQuery, what === 'output' ? ['attempt', 'after'] : ['attempt']);
      if (what === 'output/stream') return stream(req, res, j.id, q.attempt);
      return output(j.id, q.attempt, q.after);
    }
    if (req.method !== 'POST') throw methodNotAllowed(req, 'POST', url.pathname);
    switch (what) {
      case 'message': {
        const b = await parseBody(req, Bodies.message);
        return d.jobs.message((await d.jobs.job(id)).id, b.text, lead);
      }
      case 'pause': {
        const b = await parseBody(req, Bodies.pause);
        return d.jobs.pause({ job_id: (await d.jobs.job(id)).id, mode: b.mode }, lead);
      }
      case 'resume': {
        const b = await parseBody(req, Bodies.resume);
        return d.jobs.resume({ job_id: (await d.jobs.job(id)).id, ...(b.message ? { message: b.message } : {}) }, lead);
      }
      default: {
        const b = await parseBody(req, Bodies.cancel);
        const j = await d.jobs.job(id);
        if (ENDED.has(j.status)) throw new HttpError(409, 'invalid_state', `job ${j.id} had already ended (${j.status}): nothing to cancel`);
        return d.jobs.cancel({ job_id: j.id, reason: b.reason ?? 'cancelled from the dashboard', cascade: b.cascade }, lead);
      }
    }
  };
  return { route, closeStreams: () => { for (const r of open) r.end(); open.clear(); } };
}
