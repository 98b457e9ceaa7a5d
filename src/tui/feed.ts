// Where the watch's Floor comes from: src/floor/follow.ts (the hub's /api/floor/stream when a
// hub runs, else the state database read-only — SQLite's or PostgreSQL's — polled with a cheap
// change mark, switching as hubs come and go). On top of it the watch drops a floor that differs from the last one only
// in what the screen does not show (its time stamp, the uptime, elapsed times the screen
// computes itself), so nothing re-renders while nothing changed.
import type { Floor } from '../floor/types.js';
import { followFloor } from '../floor/follow.js';

export interface FeedOptions {
  home: string;
  /** The PostgreSQL database of the state (config databaseUrl), else SQLite's file in `home`. */
  databaseUrl?: string | undefined;
  /** The hub's cap on running agents (config maxAgents), for floors read from the database. */
  cap: number;
  /** Only this project's crew (src/projects). */
  project?: string;
  pollMs?: number;
  hubCheckMs?: number;
}

export interface FeedHandlers {
  /** A floor that differs (on screen) from the last one delivered. */
  floor(f: Floor): void;
  /** Where floors come from now, and a line for the status bar when that is unexpected. */
  state(source: 'hub' | 'database' | 'none', note: string | null): void;
}

/** Fields the screen does not show or computes itself: a change in them alone is no change. */
const IGNORED = new Set(['at', 'uptime_ms', 'elapsed_ms', 'last_event_at']);

/** What the screen shows of a floor, as a string to compare. */
export const floorSignature = (f: Floor): string => JSON.stringify(f, (k, v: unknown) => (IGNORED.has(k) ? undefined : v));

/** How often the database is asked whether it changed when no hub runs: one PRAGMA
 * data_version (microseconds) per poll, or on PostgreSQL one `pg_current_snapshot()` (a round
 * trip; figures in docs/decisions.md, "The CLI on PostgreSQL"). 100 ms, not follow.ts's 250 ms default, because the
 * screen must show a change within 250 ms and the read and the frame come on top of the wait
 * (measured with 250 ms: p50 218 ms, p99 469 ms; bench/watch.ts). */
export const DB_POLL_MS = 100;

/** Starts feeding floors; `stop()` ends it. */
export function startFeed(o: FeedOptions, h: FeedHandlers): { stop: () => void } {
  const ac = new AbortController();
  let last = '';
  void followFloor({ home: o.home, databaseUrl: o.databaseUrl, cap: o.cap, project: o.project, signal: ac.signal, pollMs: o.pollMs ?? DB_POLL_MS, hubCheckMs: o.hubCheckMs }, {
    floor(f) {
      const sig = floorSignature(f);
      if (sig === last) return;
      last = sig;
      h.floor(f);
    },
    source: (s, note) => h.state(s, note),
  }).catch((err: unknown) => h.state('none', `following the floor failed: ${(err as Error).message}; restart overseer watch`));
  return { stop: () => ac.abort() };
}
