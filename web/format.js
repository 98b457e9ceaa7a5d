// Small text helpers for the page.
export function ago(ms) {
  if (ms === null || ms === undefined) return '';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export const usd = (v, unknown) => (unknown ? `≥ $${v.toFixed(4)}` : `$${v.toFixed(4)}`);

export const tokens = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n));

/** The colour class of a status. */
export const tone = (status) => ({
  running: 'run', needs_input: 'need', frozen: 'frozen', queued: 'queue', waiting: 'queue',
  succeeded: 'ok', failed: 'bad', cancelled: 'off', interrupted: 'off',
}[status] ?? 'off');
