// "Since you last looked": a lead that stopped waiting (the person pressed Esc during
// wait_for_agents, or the lead moved on) never heard what happened meanwhile. The next Overseer
// tool result of the lead carries a short digest of the jobs that ended, the requests that opened
// and the warnings raised since its last delivered result, leaving out what a result already
// showed it. Kept in memory: a hub that restarts starts a new look.
import type { HubContext } from '../services/context.js';
import type { CallScope } from '../contract/call.js';
import { isoTime } from '../clock.js';
import { digestBetween } from '../store/sql/digest.js';

/** At most this many lines per kind; the rest is counted. */
const MAX_ITEMS = 8;

export interface Digest {
  since: string;
  ended?: { job_id: string; title: string; status: string; failure_class?: string; line: string }[];
  requests?: { request_id: string; job_id: string; kind: string; summary: string }[];
  warnings?: { job_id: string; warning: string; detail: string }[];
  /** Items left out to keep the digest short: see list_agents / list_requests. */
  more?: number;
}

/** Ids a result showed the lead: job_id at the top, in done[] / agents[], and attention items. */
export function idsShown(value: unknown): Set<string> {
  const ids = new Set<string>();
  const take = (o: unknown): void => {
    if (!o || typeof o !== 'object') return;
    const r = o as Record<string, unknown>;
    if (typeof r.job_id === 'string') ids.add(r.job_id);
    if (typeof r.request_id === 'string') ids.add(r.request_id);
  };
  take(value);
  if (value && typeof value === 'object') {
    const r = value as Record<string, unknown>;
    for (const k of ['done', 'agents', 'attention', 'requests']) if (Array.isArray(r[k])) for (const x of r[k] as unknown[]) take(x);
  }
  return ids;
}

const firstLine = (s: string | null): string => (s ?? '').split('\n').find((l) => l.trim())?.trim().slice(0, 160) ?? '';

export class LeadDigest {
  /** Start of the lead's last delivered call: everything before it was shown or digested. */
  private cursor?: number;
  /** id → when a delivered result showed it. */
  private readonly shown = new Map<string, number>();

  constructor(private readonly ctx: HubContext) {}

  /** The scope of one lead tool call (src/contract/call.ts). */
  scope(): CallScope {
    const start = this.ctx.clock.now();
    const since = this.cursor;
    let showed = new Set<string>();
    return {
      decorate: (value) => {
        showed = idsShown(value);
        if (since === undefined || !value || typeof value !== 'object' || Array.isArray(value)) return value;
        return this.digest(since, start, showed).then((d) => d ? { ...(value as object), since_you_last_looked: d } : value);
      },
      end: (delivered) => {
        if (!delivered) return;
        const now = this.ctx.clock.now();
        for (const id of showed) this.shown.set(id, now);
        this.cursor = Math.max(this.cursor ?? 0, start);
        for (const [id, at] of this.shown) if (at < this.cursor - 3_600_000) this.shown.delete(id);
      },
    };
  }

  /** What happened in [since, until) that no delivered result showed after it happened. */
  async digest(since: number, until: number, showing: Set<string>): Promise<Digest | undefined> {
    const unseen = (id: string, at: number): boolean => !showing.has(id) && !((this.shown.get(id) ?? -1) >= at);
    // One statement, one snapshot: what ended, opened and was raised in [since, until).
    const rows = await digestBetween(this.ctx.sql.db, since, until);
    const ended = rows.ended.filter((j) => unseen(j.id, j.ended_at!));
    const requests = rows.requests.filter((r) => unseen(r.id, r.created_at));
    const warnings = rows.warnings;
    if (!ended.length && !requests.length && !warnings.length) return undefined;
    const more = Math.max(0, ended.length - MAX_ITEMS) + Math.max(0, requests.length - MAX_ITEMS) + Math.max(0, warnings.length - MAX_ITEMS);
    return {
      since: isoTime(since),
      ...(ended.length ? {
        ended: ended.slice(-MAX_ITEMS).map((j) => ({
          job_id: j.id, title: j.title, status: j.status, ...(j.failure_class ? { failure_class: j.failure_class } : {}),
          line: j.status === 'succeeded' ? firstLine(j.result) : firstLine(j.error),
        })),
      } : {}),
      ...(requests.length ? { requests: requests.slice(0, MAX_ITEMS).map((r) => ({ request_id: r.id, job_id: r.job_id, kind: r.kind, summary: r.summary.slice(0, 200) })) } : {}),
      ...(warnings.length ? { warnings: warnings.slice(0, MAX_ITEMS).map((w) => ({ job_id: w.job_id, warning: w.kind, detail: w.detail })) } : {}),
      ...(more ? { more } : {}),
    };
  }
}
