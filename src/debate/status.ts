// The debates lines of `overseer status`: running debates with their round, and those that
// ended in the last day with their outcome. Read-only; an older database without the debates
// table has no lines.
import { listDebates } from '../store/sql/debates.js';
import type { Q } from '../store/sql/tx.js';
import { readDebateView } from './view.js';

export async function debateStatusLines(q: Q, now: number, windowMs = 24 * 3600_000): Promise<string[]> {
  try {
    const rows = (await listDebates(q, undefined, 50)).filter((d) => d.status === 'running' || (d.ended_at ?? d.updated_at) >= now - windowMs);
    if (!rows.length) return [];
    const views = await Promise.all(rows.map((d) => readDebateView(q, d)));
    return ['debates:', ...rows.map((d, i) => {
      const v = views[i]!;
      const where = d.status === 'running' ? `round ${v.round}/${v.max_rounds}${v.loops > 1 ? ` loop ${v.loop}/${v.loops}` : ''}` : `after ${v.round} round(s)`;
      return `  ${d.id}  ${d.status}  ${where}  ${v.sides.map((s) => s.provider).join(' vs ')}  $${v.cost_usd.toFixed(4)}  "${d.title.slice(0, 50)}"${d.error ? ` — ${d.error.slice(0, 100)}` : ''}`;
    })];
  } catch {
    return [];
  }
}
