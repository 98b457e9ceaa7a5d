// The `events` table as people and the lead read it: what the hub decided about a job and when
// (spawned, started, permission decisions with the rule that decided, lock denials and
// violations, reconciles, messages, retries, the end). Used by `overseer events` and by
// get_agent's optional `events` field; every entry is bounded.
import { latestEvents } from '../store/sql/events.js';
import type { Q } from '../store/sql/tx.js';
import { isoTime } from '../clock.js';

export interface EventView {
  id: number;
  job_id: string;
  at: string;
  kind: string;
  data: unknown;
}

export interface EventRow {
  id: number;
  job_id?: string;
  at: number;
  kind: string;
  data_json: string | null;
}

const DATA_CAP = 1000;

/** A row as the view; `data` is the parsed JSON, or a capped string when it is large. */
export function toEventView(r: EventRow, jobId?: string): EventView {
  let data: unknown = null;
  if (r.data_json !== null) {
    if (r.data_json.length > DATA_CAP) data = `${r.data_json.slice(0, DATA_CAP)}… (${r.data_json.length - DATA_CAP} more characters)`;
    else {
      try {
        data = JSON.parse(r.data_json) as unknown;
      } catch {
        data = r.data_json;
      }
    }
  }
  return { id: r.id, job_id: r.job_id ?? jobId ?? '', at: isoTime(r.at), kind: r.kind, data };
}

/** The most recent `limit` events (of one job, or of all), oldest first. */
export async function recentEvents(q: Q, o: { jobId?: string | undefined; limit: number }): Promise<EventView[]> {
  return (await latestEvents(q, o)).reverse().map((r) => toEventView(r));
}

/** `key=value` pairs of an event's data, for one line of text. */
export function eventDetails(data: unknown): string {
  if (data === null || data === undefined) return '';
  if (typeof data !== 'object' || Array.isArray(data)) return JSON.stringify(data);
  return Object.entries(data as Record<string, unknown>)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? (/\s/.test(v) ? JSON.stringify(v) : v) : JSON.stringify(v)}`)
    .join(' ');
}
