// The floor over the hub's HTTP endpoint (mounted under /api/ by src/server/http.ts, after its
// Host, Origin and bearer-token checks). Lead token only: the floor shows every agent's work,
// and an agent has no business reading the others'.
//   GET /api/floor[?done=N][&project=X] → the Floor as JSON (N: how many ended jobs DONE keeps, 0..200;
//                                     X: only that project's, else without archived projects' jobs)
//   GET /api/floor/stream[?done=N]  → text/event-stream: `event: floor` + `data: <Floor JSON>` at
//                                     once, then after every change on the bus; `: ping` every 15 s
//   POST /api/floor/ready/<job>/ship     → READY TO SHIP's ship: the merge result (`merged` true, or false
//                                     with its reason: conflict, checks failed on the merged result);
//                                     a job whose checks failed, or not in the lane: 409, nothing merged
//   POST /api/floor/ready/<job>/dismiss  → takes it out of the lane, its branch kept (src/floor/ship.ts)
//   POST /api/floor/ready/<job>/send-back → its last failed merge back to its agent (the send_back tool's code)
//   GET  /api/floor/brief        → the crew brief (src/brief): {text|null, set_by, set_at, version}
//   POST /api/floor/brief {text} → the person sets it (src/contract/brief.ts SetBriefInput; 400, nothing
//                                     changed, on bad input): {…, sent_to: the running agents told}
//   POST /api/floor/brief/clear  → the person clears it
// One feed per hub serves every stream: it subscribes to the bus while a stream is open, builds
// the floor once per frame for all of them, and sends frames at most every `minGapMs` (50 ms)
// — a change inside the gap is sent at its end (trailing edge), never dropped. A stream that
// cannot keep up gets only the newest frame when it drains. Errors: { error: { code, message } }.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { SqlDb } from '../store/sql/open.js';
import type { Caller } from '../services/context.js';
import type { Bus, BusEvents } from '../services/bus.js';
import type { Logger } from '../log.js';
import type { ApiHandler } from '../http/api.js';
import { readFloor } from './source.js';
import type { FloorHubInfo } from './model.js';
import type { Floor } from './types.js';
import { PROJECT_NAME } from '../contract/projectNames.js';
import { SSE_HEADERS, sseComment, sseFrame } from '../http/sse.js';
import type { ShipLane } from './ship.js';
import type { BriefService } from '../brief/service.js';
import { BodyError, readBody } from '../http/body.js';
import { OverseerError } from '../errors.js';
import { watchWorkers, WORKER_WATCH_MS } from './workerWatch.js';

const PING = sseComment('ping');

/** Bus events after which the floor may have changed. */
export const FLOOR_EVENTS: readonly (keyof BusEvents)[] = ['job', 'request', 'message', 'lock', 'progress', 'warning', 'workflow', 'note', 'overlap', 'limit', 'run', 'brief'];

export interface FloorApiOptions {
  /** The hub's layer (both databases); the floor stops reading it at `close()`, before the hub closes it. */
  sql: SqlDb;
  bus: Bus;
  now: () => number;
  cap: number;
  hub: () => FloorHubInfo;
  log: Logger;
  /** READY TO SHIP's verbs (ship, dismiss): the merge queue's own code. */
  ship: ShipLane;
  /** The crew brief: the person reads and sets it here (the dashboard, `overseer brief`). */
  brief: BriefService;
  /** Least time between two frames of a stream (default 50 ms). */
  minGapMs?: number;
  /** Comment line sent on idle streams (default 15 s). */
  heartbeatMs?: number;
  /** How often an open stream checks whether a worker's lease ran out (src/floor/workerWatch.ts; default 5 s). */
  workersEveryMs?: number;
}

export interface FloorApi {
  /** The /api/floor routes (false: not a floor route). */
  handle: ApiHandler;
  /** The floor now, as the API serves it. */
  read(doneLimit?: number, project?: string): Promise<Floor>;
  /** Open streams. */
  streams(): number;
  /** End every stream and stop listening (the hub is stopping). */
  close(): void;
}

interface Stream {
  res: ServerResponse;
  doneLimit: number | undefined;
  /** Only this project's floor (src/projects). */
  project: string | undefined;
  /** The newest frame not yet written because the socket was full. */
  pending?: string;
  blocked: boolean;
}

const send = (res: ServerResponse, status: number, body: unknown): true => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
  return true;
};
const fail = (res: ServerResponse, status: number, code: string, message: string): true => send(res, status, { error: { code, message } });
const VERB_STATUS: Readonly<Record<string, number>> = { invalid_input: 400, not_found: 404, invalid_state: 409, conflict: 409 };

/** A frame: the whole floor, with its id (`<feed>.<n>`) for Last-Event-ID. */
export const frameOf = (f: Floor, id?: string): string => sseFrame({ event: 'floor', data: JSON.stringify(f), ...(id ? { id } : {}) });

export function floorApi(o: FloorApiOptions): FloorApi {
  const minGap = o.minGapMs ?? 50;
  const streams = new Set<Stream>();
  let detach: (() => void)[] = [];
  let timer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let lastSent = -Infinity;
  // Every frame is the whole floor, so resuming is resynchronising: a client that reconnects (its
  // Last-Event-ID names the last frame it had) gets the floor as it is now, first thing — never a
  // replay it must merge, and never nothing (changes made while no stream was open had no frame).
  const feed = randomBytes(4).toString('hex');
  let seq = 0;
  const currentId = (): string => `${feed}.${seq}`;
  let closed = false;
  /** Changes seen (a stream's first read compares before and after). */
  let changes = 0;
  /** Streams still reading their first frame: not in `streams` yet, but listening already. */
  let opening = 0;
  /** No stream open nor opening: the bus may be let go. */
  const idle = (): boolean => streams.size === 0 && opening === 0;

  const read = (doneLimit?: number, project?: string): Promise<Floor> => readFloor(o.sql.db, { now: o.now(), hub: o.hub(), cap: o.cap, source: 'hub', doneLimit, ...(project !== undefined ? { project } : {}) });

  const write = (s: Stream, frame: string): void => {
    if (s.blocked) { s.pending = frame; return; }
    if (!s.res.write(frame)) s.blocked = true;
  };

  /** One frame to every stream; streams asking for another DONE length get their own build.
   * The timer stays set while the floor is read, so changes meanwhile wait for the next frame —
   * which the end of the read schedules: no later change may come to send it. */
  const flush = async (): Promise<void> => {
    if (closed || streams.size === 0) {
      timer = undefined;
      return;
    }
    const seen = changes;
    lastSent = performance.now();
    seq++;
    const id = currentId();
    const frames = new Map<string, Promise<string>>();
    try {
      for (const s of [...streams]) {
        const key = `${s.doneLimit ?? ''}|${s.project ?? ''}`;
        let frame = frames.get(key);
        if (frame === undefined) {
          frame = read(s.doneLimit, s.project).then((f) => frameOf(f, id));
          frames.set(key, frame);
        }
        const text = await frame;
        if (!closed && streams.has(s)) write(s, text);
      }
    } catch (err) {
      // A read still in flight when the hub stopped (close(), then the database closes) is no error.
      if (!closed) o.log.error({ err }, 'could not build the floor for its streams');
    } finally {
      timer = undefined;
      if (changes !== seen) schedule();
    }
  };

  /** A frame now if the last one is older than the gap, else at the gap's end; one at a time. */
  const schedule = (): void => {
    if (timer || closed) return;
    timer = setTimeout(() => void flush(), Math.max(0, lastSent + minGap - performance.now()));
  };

  /** A change: the next frame shows it. */
  const changed = (): void => {
    changes++;
    schedule();
  };

  const attach = (): void => {
    detach = [...FLOOR_EVENTS.map((e) => o.bus.on(e, changed, { remote: true, resync: changed })), watchWorkers(o.sql, o.workersEveryMs ?? WORKER_WATCH_MS, changed, o.log)];
    heartbeat = setInterval(() => { for (const s of streams) if (!s.blocked) s.res.write(PING); }, o.heartbeatMs ?? 15_000);
    heartbeat.unref();
  };

  const release = (): void => {
    for (const off of detach) off();
    detach = [];
    clearInterval(heartbeat);
    heartbeat = undefined;
    clearTimeout(timer);
    timer = undefined;
  };

  const open = async (req: IncomingMessage, res: ServerResponse, doneLimit: number | undefined, project: string | undefined): Promise<void> => {
    // Listening before the first read (an await): a change during it is sent as the next frame.
    // Counted as opening meanwhile: another stream closing during this read must not let the bus go.
    if (detach.length === 0) attach();
    const before = changes;
    let first: string;
    opening++;
    try {
      const id = currentId();
      first = frameOf(await read(doneLimit, project), id);
    } catch (err) {
      opening--;
      if (idle()) release();
      o.log.error({ err }, 'could not build the floor');
      fail(res, 500, 'internal', `could not read the floor: ${(err as Error).message}`);
      return;
    }
    opening--;
    if (closed || res.destroyed) {
      if (idle()) release();
      return;
    }
    req.socket.setNoDelay(true);
    req.socket.setTimeout(0);
    res.writeHead(200, SSE_HEADERS);
    const s: Stream = { res, doneLimit, project, blocked: false };
    streams.add(s);
    write(s, first);
    if (changes !== before) changed();
    res.on('drain', () => {
      s.blocked = false;
      const p = s.pending;
      s.pending = undefined;
      if (p !== undefined) write(s, p);
    });
    res.once('close', () => {
      streams.delete(s);
      if (idle()) release();
    });
  };

  /** A verb on a READY TO SHIP row; the services' typed errors become their status, nothing changed. */
  const verb = async (res: ServerResponse, what: 'ship' | 'dismiss' | 'send-back', jobId: string): Promise<true> => {
    try {
      return send(res, 200, what === 'ship' ? await o.ship.ship(jobId) : what === 'dismiss' ? await o.ship.dismiss(jobId) : await o.ship.sendBack(jobId));
    } catch (err) {
      if (err instanceof OverseerError && VERB_STATUS[err.code]) return fail(res, VERB_STATUS[err.code]!, err.code, err.message);
      throw err;
    }
  };

  /** The crew brief's routes: set and cleared by the person (the lead token or a dashboard session). */
  const brief = async (caller: Caller, req: IncomingMessage, res: ServerResponse, what: string | undefined): Promise<true> => {
    if (caller.role !== 'lead') return fail(res, 403, 'forbidden', 'the crew brief is set by the lead and the person only (the lead token or a dashboard session): an agent cannot change it');
    if (closed) return fail(res, 503, 'unavailable', 'the hub is stopping');
    try {
      if (what === 'clear') {
        if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', 'POST /api/floor/brief/clear');
        return send(res, 200, await o.brief.clear('person', caller));
      }
      if (req.method === 'GET') return send(res, 200, await o.brief.get());
      if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', 'GET or POST /api/floor/brief');
      return send(res, 200, await o.brief.set(await readBody(req, { limit: 256 * 1024 }), 'person', caller));
    } catch (err) {
      if (err instanceof BodyError) return fail(res, err.status, 'invalid_input', err.message);
      if (err instanceof OverseerError && VERB_STATUS[err.code]) return fail(res, VERB_STATUS[err.code]!, err.code, err.message);
      throw err;
    }
  };

  const handle: ApiHandler = async (caller: Caller, req, res, url) => {
    const b = /^\/api\/floor\/brief(?:\/(clear))?\/?$/.exec(url.pathname);
    if (b) return brief(caller, req, res, b[1]);
    const v = /^\/api\/floor\/ready\/([^/]+)\/(ship|dismiss|send-back)\/?$/.exec(url.pathname);
    if (v) {
      if (caller.role !== 'lead') return fail(res, 403, 'forbidden', 'READY TO SHIP\'s verbs take the lead token (<state>/lead.token) or a dashboard session: an agent cannot merge the crew\'s branches from here');
      if (req.method !== 'POST') return fail(res, 405, 'method_not_allowed', `POST ${url.pathname}`);
      if (closed) return fail(res, 503, 'unavailable', 'the hub is stopping');
      return verb(res, v[2] as 'ship' | 'dismiss' | 'send-back', decodeURIComponent(v[1]!));
    }
    const m = /^\/api\/floor(\/stream)?\/?$/.exec(url.pathname);
    if (!m) return false;
    if (caller.role !== 'lead') return fail(res, 403, 'forbidden', 'the floor API takes the lead token (<state>/lead.token): an agent cannot read the floor of the crew');
    if (req.method !== 'GET') return fail(res, 405, 'method_not_allowed', `GET ${url.pathname} (the floor is read-only)`);
    const raw = url.searchParams.get('done');
    const doneLimit = raw === null ? undefined : Number(raw);
    if (doneLimit !== undefined && !(Number.isInteger(doneLimit) && doneLimit >= 0 && doneLimit <= 200)) {
      return fail(res, 400, 'invalid_input', `done must be a whole number of ended jobs from 0 to 200, got ${JSON.stringify(raw)}`);
    }
    const project = url.searchParams.get('project') ?? undefined;
    if (project !== undefined && !PROJECT_NAME.test(project)) {
      return fail(res, 400, 'invalid_input', `project must be a project name (1..100 letters, digits, "-", "_", "." or "/"), got ${JSON.stringify(project.slice(0, 120))}`);
    }
    if (closed) return fail(res, 503, 'unavailable', 'the hub is stopping');
    if (!m[1]) return send(res, 200, await read(doneLimit, project));
    await open(req, res, doneLimit, project);
    return true;
  };

  return {
    handle,
    read,
    streams: () => streams.size,
    close: () => {
      closed = true;
      release();
      for (const s of streams) s.res.end();
      streams.clear();
    },
  };
}
