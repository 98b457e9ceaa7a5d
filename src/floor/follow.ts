// The floor as it changes, for a process outside the hub (`overseer status --watch`, the watch's
// feed): from the running hub's /api/floor/stream (lead token) when one answers, else from the
// state database read-only (src/store/sql/readOnly.ts: SQLite's file, or PostgreSQL's database
// when `databaseUrl` is set), polled every 250 ms with `changeMark` — SQLite's `PRAGMA
// data_version`, PostgreSQL's current snapshot — so an unchanged database costs one cheap
// statement and no read. While reading the database it looks for a hub every second and switches
// to its stream; when the stream ends (the hub stopped) it goes back to the database.
// On PostgreSQL, once hubs relay their events (docs/store-plan.md §3.2), LISTEN on the crew's
// channel replaces the poll: a floor after each notification, and once at start and after a
// reconnect, when notifications may have been lost.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { changeMark, openStateReadOnly, type ReadOnlyState } from '../store/sql/readOnly.js';
import { hubAnswers, readHubInfo, type HubInfo } from '../hubfiles/hubLock.js';
import { readFloor } from './source.js';
import type { Floor } from './types.js';
import { readSse } from '../http/sse.js';

export interface FollowOptions {
  /** The state directory. */
  home: string;
  /** The PostgreSQL database the state is in (config databaseUrl), else SQLite's file in `home`. */
  databaseUrl?: string | undefined;
  /** The cap on running agents (config maxAgents), for floors read from the database. */
  cap: number;
  signal: AbortSignal;
  doneLimit?: number;
  /** Only this project (src/projects); without it, archived projects' jobs are left out. */
  project?: string;
  pollMs?: number;
  hubCheckMs?: number;
  /** A stream silent this long (no frame, no heartbeat) is taken as dead and opened again. */
  silentMs?: number;
}

export interface FollowHandlers {
  floor(f: Floor): void;
  /** Where floors come from now; `note` says why when it is not what one would expect. */
  source?(s: 'hub' | 'database' | 'none', note: string | null): void;
}

/** The query of a floor URL: `?done=N&project=X` as asked. */
const floorQuery = (o: { doneLimit?: number; project?: string }): string => {
  const q = new URLSearchParams();
  if (o.doneLimit !== undefined) q.set('done', String(o.doneLimit));
  if (o.project !== undefined) q.set('project', o.project);
  const s = q.toString();
  return s ? `?${s}` : '';
};

/** A refusal of the hub that retrying at once will not change (wrong token, a hub without the floor API). */
class Refused extends Error {}

const sleep = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => {
  if (signal.aborted) return resolve();
  const done = (): void => { clearTimeout(t); signal.removeEventListener('abort', done); resolve(); };
  const t = setTimeout(done, ms);
  signal.addEventListener('abort', done, { once: true });
});

/** Which hub: a restarted hub (another pid or start) is another hub. */
const hubKey = (i: HubInfo): string => `${i.pid}@${i.started_at}`;

/** The hub of `home` if one answers now, unless it is the one that refused us (`skip`). */
async function answeringHub(home: string, skip?: string): Promise<HubInfo | undefined> {
  const info = readHubInfo(home);
  if (!info?.url || (skip !== undefined && hubKey(info) === skip)) return undefined;
  return (await hubAnswers(info, 1000)) ? info : undefined;
}

function leadToken(home: string): string {
  const file = join(home, 'lead.token');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    throw new Refused(`cannot read the lead token ${file}: ${(err as Error).message}`);
  }
}

/** The hub's floor stream until it ends (resolves) or is refused (throws Refused). */
async function followHub(info: HubInfo, o: FollowOptions, h: FollowHandlers): Promise<void> {
  const token = leadToken(o.home);
  const url = new URL(`/api/floor/stream${floorQuery(o)}`, info.url);
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  o.signal.addEventListener('abort', stop, { once: true });
  let silence: NodeJS.Timeout | undefined;
  const alive = (): void => {
    clearTimeout(silence);
    silence = setTimeout(stop, o.silentMs ?? 45_000);
  };
  try {
    alive();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: ac.signal });
    if (res.status !== 200 || !res.body) {
      const text = await res.text().catch(() => '');
      throw new Refused(`the hub at ${url.origin} answered ${url.pathname} with HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
    }
    h.source?.('hub', null);
    await readSse(res.body, (ev) => { if (ev.event === 'floor') h.floor(JSON.parse(ev.data) as Floor); }, alive);
  } catch (err) {
    if (err instanceof Refused) throw err;
    // aborted (stopped, or silent too long) or the connection broke: the caller looks again
  } finally {
    clearTimeout(silence);
    o.signal.removeEventListener('abort', stop);
  }
}

/** The database until a hub answers (not the one that refused us) or the follow stops; closes `s`. */
async function followDatabase(s: ReadOnlyState, o: FollowOptions, h: FollowHandlers, note: string | null, refused: string | undefined): Promise<void> {
  h.source?.('database', note);
  try {
    let mark: string | undefined;
    let nextCheck = Date.now() + (o.hubCheckMs ?? 1000);
    while (!o.signal.aborted) {
      // The mark before the read: a change committed between the two is read now and seen again next time.
      const m = await changeMark(s.sql);
      if (m !== mark) {
        mark = m;
        h.floor(await readFloor(s.sql.db, { now: Date.now(), hub: null, cap: o.cap, source: 'database', doneLimit: o.doneLimit, project: o.project }));
      }
      if (Date.now() >= nextCheck) {
        nextCheck = Date.now() + (o.hubCheckMs ?? 1000);
        if (await answeringHub(o.home, refused)) return;
      }
      await sleep(o.pollMs ?? 250, o.signal);
    }
  } finally {
    await s.close();
  }
}

/** Calls `h.floor` with the floor now and after every change, until `o.signal` aborts. */
export async function followFloor(o: FollowOptions, h: FollowHandlers): Promise<void> {
  let note: string | null = null;
  // A hub that refused the stream (no lead token here, a hub without the floor API) is not
  // asked again: its database is read instead until another hub starts.
  let refused: string | undefined;
  while (!o.signal.aborted) {
    const info = await answeringHub(o.home, refused);
    if (info) {
      try {
        await followHub(info, o, h);
        note = 'the hub\'s stream ended';
        await sleep(o.pollMs ?? 250, o.signal); // a hub that ends streams at once is not asked in a tight loop
      } catch (err) {
        note = (err as Error).message;
        refused = hubKey(info);
      }
      continue;
    }
    const s = await openStateReadOnly(o);
    if (s) {
      await followDatabase(s, o, h, note, refused);
      note = null;
      continue;
    }
    h.source?.('none', `no hub and no state database in ${o.home} yet: waiting for one`);
    await sleep(o.hubCheckMs ?? 1000, o.signal);
  }
}

/** The floor once: the running hub's (GET /api/floor), else read from the database. */
export async function floorNow(o: Omit<FollowOptions, 'signal'>): Promise<Floor | undefined> {
  const info = await answeringHub(o.home);
  if (info) {
    const url = new URL(`/api/floor${floorQuery(o)}`, info.url);
    const res = await fetch(url, { headers: { authorization: `Bearer ${leadToken(o.home)}` }, signal: AbortSignal.timeout(30_000) });
    if (res.status === 200) return (await res.json()) as Floor;
  }
  const s = await openStateReadOnly(o);
  if (!s) return undefined;
  try {
    return await readFloor(s.sql.db, { now: Date.now(), hub: null, cap: o.cap, source: 'database', doneLimit: o.doneLimit, project: o.project });
  } finally {
    await s.close();
  }
}
