// How a provider limit is said on the floor (status, watch, the dashboard), to the lead
// (wait_for_agents' attention) and to the person (notifications): one line such as
// "claude: rate limited until 16:40 — 5 agents waiting". Pure: rows and `now` in.
import type { LimitRow } from './store.js';
import { endpointLabel } from './account.js';

/** A provider limit in force, as the floor shows it (Floor.limits). */
export interface FloorLimit {
  provider: string;
  /** The account's endpoint host (api.anthropic.com, 127.0.0.1:4242) and its key hash: which account it is. */
  endpoint: string;
  key_hash: string;
  /** open: nothing new starts until `until`; half_open: one attempt probes. */
  phase: 'open' | 'half_open';
  kind: string | null;
  status: number | null;
  /** The provider's words. */
  reason: string | null;
  opened_at: number | null;
  /** When the next probe may go (the server's retry-after or reset time, or the backoff); null when probing. */
  until: number | null;
  basis: string | null;
  /** Limit answers seen since it opened. */
  hits: number;
  /** Agents held by it: queued jobs of this provider, and running ones paused where they met it. */
  waiting: number;
  paused: string[];
  /** The sentence: "claude: rate limited until 16:40 — 5 agents waiting". */
  line: string;
}

const KIND_WORDS: Record<string, string> = { rate_limit: 'rate limited', overloaded: 'overloaded', usage_limit: 'usage limit reached' };

/** A clock time in this machine's zone: hh:mm, with seconds when it is less than ten minutes away. */
export function clock(at: number, now: number): string {
  const d = new Date(at);
  const two = (n: number): string => String(n).padStart(2, '0');
  const hm = `${two(d.getHours())}:${two(d.getMinutes())}`;
  const day = new Date(now).toDateString() === d.toDateString() ? '' : ` ${d.toISOString().slice(0, 10)}`;
  return `${hm}${at - now < 600_000 ? `:${two(d.getSeconds())}` : ''}${day}`;
}

/** "claude: rate limited until 16:40 — 5 agents waiting" (or "… — probing with one request — …"). */
export function limitLine(provider: string, kind: string | null, phase: string, until: number | null, waiting: number, now: number): string {
  const what = KIND_WORDS[kind ?? ''] ?? 'limited';
  const when = phase === 'open' && until !== null && until > now ? ` until ${clock(until, now)}` : ' — probing with one request';
  return `${provider}: ${what}${when} — ${waiting} agent${waiting === 1 ? '' : 's'} waiting`;
}

/** The floor's view of a limiter row; `queued`: this provider's queued jobs. */
export function floorLimit(r: LimitRow, queued: number, now: number): FloorLimit {
  const paused = parsePaused(r.paused_json);
  const phase = r.phase === 'open' && r.until_at !== null && r.until_at <= now ? 'half_open' : (r.phase as 'open' | 'half_open');
  const waiting = queued + paused.length;
  return {
    provider: r.provider, endpoint: endpointLabel(r.endpoint), key_hash: r.key_hash, phase, kind: r.kind, status: r.status, reason: r.reason,
    opened_at: r.opened_at, until: phase === 'open' ? r.until_at : null, basis: r.basis, hits: r.hits, waiting, paused,
    line: limitLine(r.provider, r.kind, phase, r.until_at, waiting, now),
  };
}

function parsePaused(json: string): string[] {
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}
