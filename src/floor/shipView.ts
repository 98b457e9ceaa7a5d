// READY TO SHIP as the floor shows it, from the rows src/floor/ship.ts reads. Pure (`now`
// injected), like the rest of the floor model.
//   checks: `passed` (it has completion checks and succeeded), `failed` (it failed on them:
//   failure_class check_failed), `not_run` (it has none).
//   overlaps: the conflict guard's pairs (table overlaps, open or cleared since) with another
//   branch that is still live or not merged — a merged or dismissed-and-gone branch is no risk.
import type { ShipRows } from './ship.js';
import type { SendBackRow } from '../store/sql/sendBacks.js';
import type { ShipItem } from './types.js';

const LIVE = new Set(['queued', 'waiting', 'running', 'frozen', 'needs_input']);

function list(json: string | null | undefined): string[] {
  try {
    const v = JSON.parse(json ?? '[]') as unknown;
    return Array.isArray(v) ? v.map(String) : [];
  } catch {
    return [];
  }
}

const line = (s: string | null): string | null => {
  const l = (s ?? '').split('\n').map((x) => x.replace(/\s+/g, ' ').trim()).find(Boolean);
  return l ? (l.length > 200 ? `${l.slice(0, 199)}…` : l) : null;
};

/** A lane row's send-back: sendable only from a failed merge on record (not while asked, merged or stopped). */
function sendBackOf(r: SendBackRow | undefined): ShipItem['send_back'] {
  if (!r) return null;
  return { round: r.round, max: r.max_rounds, status: r.status, reason: r.reason, sendable: r.status === 'failed', request_id: r.request_id };
}

/** The lane, oldest first (the order the jobs were created in: the read's order). */
export function shipItems(rows: ShipRows | undefined, now: number): ShipItem[] {
  if (!rows) return [];
  const jobs = rows.jobs;
  const lane = new Map(jobs.map((j) => [j.id, j]));
  const others = new Map(rows.others.map((o) => [o.id, o]));
  /** Is the other side of an overlap still a branch that could collide? */
  const risky = (id: string): boolean => {
    if (lane.has(id)) return true;
    const o = others.get(id);
    return !!o && (LIVE.has(o.status) || Number(o.merged) === 0);
  };
  const titleOf = (id: string): string => lane.get(id)?.title ?? others.get(id)?.title ?? id;
  const sendBacks = new Map((rows.sendBacks ?? []).map((r) => [r.job_id, r]));
  return jobs.map((j): ShipItem => {
    const shared = new Map<string, Set<string>>();
    for (const r of rows.overlaps) {
      const other = r.job_a === j.id ? r.job_b : r.job_b === j.id ? r.job_a : null;
      if (!other || other === j.id || !risky(other)) continue;
      const s = shared.get(other) ?? new Set<string>();
      s.add(r.file);
      shared.set(other, s);
    }
    const checkNames = list(j.checks_json);
    const failed = j.status === 'failed' && j.failure_class === 'check_failed';
    return {
      job_id: j.id, title: j.title, status: j.status, branch: j.branch!, repo_root: j.repo_root!, diff_stat: j.diff_stat,
      checks: failed ? 'failed' : checkNames.length ? 'passed' : 'not_run',
      check_names: checkNames, check_detail: failed ? line(j.error) : null,
      overlaps: [...shared].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, files]) => ({ job_id: id, title: titleOf(id), files: [...files].sort() })),
      ended_at: j.ended_at, age_ms: j.ended_at === null ? null : Math.max(0, now - j.ended_at), project: j.project ?? null,
      command: `overseer merge ${j.id}`,
      send_back: sendBackOf(sendBacks.get(j.id)),
      role: j.role && j.role !== 'implementer' ? j.role : null,
    };
  });
}
