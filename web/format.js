// Small text helpers for the page.
export function ago(ms) {
  if (ms === null || ms === undefined) return '';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86400)}d ${String(Math.floor((s % 86400) / 3600)).padStart(2, '0')}h`;
}

export const usd = (v, unknown) => (v === null && unknown ? 'unpriced' : `${unknown ? '≥ ' : ''}$${(v ?? 0).toFixed(4)}`);

export const tokens = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n ?? 0));

/** Local time of an ISO string or epoch ms: HH:MM:SS today, else the date too. */
export function when(t) {
  if (t === null || t === undefined) return '';
  const d = new Date(t);
  const time = d.toLocaleTimeString([], { hour12: false });
  return d.toDateString() === new Date().toDateString() ? time : `${d.toLocaleDateString()} ${time}`;
}

/** The colour class of a status (jobs, attempts, workflows, requests). */
export const tone = (status) => ({
  running: 'run', needs_input: 'need', frozen: 'frozen', queued: 'queue', waiting: 'queue', waiting_approval: 'need', pending: 'need',
  succeeded: 'ok', answered: 'ok', failed: 'bad', blocked: 'bad', timed_out: 'bad', cancelled: 'off', interrupted: 'off',
}[status] ?? 'off');

/** Every job of the floor's sections, the RUNNING tree flattened. */
export function floorJobs(floor) {
  const out = [];
  const walk = (jobs) => { for (const j of jobs) { out.push(j); walk(j.children ?? []); } };
  if (floor) { walk(floor.running); out.push(...floor.queued, ...floor.done); }
  return out;
}
