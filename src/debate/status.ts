// The debates lines of `overseer status`: running debates with their round, and those that
// ended in the last day with their outcome. Read-only; an older database without the debates
// table has no lines.
import type { Db } from '../store/db.js';
import { DebateStore } from './store.js';
import { debateView } from './view.js';
import type { JobLookup } from './view.js';

export function debateStatusLines(db: Db, jobs: JobLookup, now: number, windowMs = 24 * 3600_000): string[] {
  try {
    const store = new DebateStore(db);
    const rows = store.list(undefined, 50).filter((d) => d.status === 'running' || (d.ended_at ?? d.updated_at) >= now - windowMs);
    if (!rows.length) return [];
    return ['debates:', ...rows.map((d) => {
      const v = debateView(d, store.turns(d.id), jobs);
      const where = d.status === 'running' ? `round ${v.round}/${v.max_rounds}${v.loops > 1 ? ` loop ${v.loop}/${v.loops}` : ''}` : `after ${v.round} round(s)`;
      return `  ${d.id}  ${d.status}  ${where}  ${v.sides.map((s) => s.provider).join(' vs ')}  $${v.cost_usd.toFixed(4)}  "${d.title.slice(0, 50)}"${d.error ? ` — ${d.error.slice(0, 100)}` : ''}`;
    })];
  } catch {
    return [];
  }
}
