// `overseer debates [--status s] [--json]` and `overseer debate <id> [--json]`: debates from
// the state database, read-only (works with or without a running hub). A debate id may be given
// by a unique prefix ("3f2a" or "d-3f2a"). Exit 2 for an unknown or ambiguous id.
import { DEBATE_STATUSES, type DebateRow, type DebateStatus, type DebateView } from '../debate/index.js';
import { readDebateView } from '../debate/view.js';
import { debateIdsWithPrefix, getDebate, listDebates, recentDebateIds } from '../store/sql/debates.js';
import type { Q } from '../store/sql/tx.js';
import { intOption } from './args.js';
import { CliError, UsageError } from './errors.js';
import { openState } from './state.js';

async function withDebates<T>(f: (q: Q) => Promise<T>): Promise<T> {
  const s = await openState();
  try {
    const has = await s.sql.db.selectFrom('debates').select('id').limit(1).execute().then(() => true, () => false);
    if (!has) throw new CliError(`The state at ${s.home} has no debates yet: a hub of this version adds them when it starts (overseer mcp or overseer serve).`);
    return await f(s.sql.db);
  } finally {
    await s.close();
  }
}

export async function runDebates(o: { status?: string; limit?: string; json?: boolean }): Promise<void> {
  if (o.status !== undefined && !DEBATE_STATUSES.includes(o.status as DebateStatus)) throw new UsageError(`--status ${JSON.stringify(o.status)} is not a debate status: use one of ${DEBATE_STATUSES.join(', ')}.`);
  const limit = intOption('limit', o.limit, 1, 1000) ?? 20;
  const views = await withDebates(async (q) => Promise.all((await listDebates(q, o.status as DebateStatus | undefined, limit)).map((d) => readDebateView(q, d))));
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ debates: views }, null, 2)}\n`);
    return;
  }
  if (!views.length) {
    process.stdout.write(`No debates${o.status ? ` with status ${o.status}` : ''}.\n`);
    return;
  }
  const lines = views.map((v) => `${v.debate_id}  ${v.status.padEnd(12)}  ${sidesText(v).padEnd(24)}  round ${v.round}/${v.max_rounds}${v.loops > 1 ? ` loop ${v.loop}/${v.loops}` : ''}  $${v.cost_usd.toFixed(2)}  ${v.title}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

export async function runDebate(ref: string, o: { json?: boolean }): Promise<void> {
  const v = await withDebates(async (q) => {
    const d = (await getDebate(q, ref)) ?? (await getDebate(q, `d-${ref}`)) ?? (await byPrefix(q, ref));
    return readDebateView(q, d);
  });
  process.stdout.write(o.json ? `${JSON.stringify(v, null, 2)}\n` : render(v));
}

async function byPrefix(q: Q, ref: string): Promise<DebateRow> {
  const p = ref.startsWith('d-') ? ref : `d-${ref}`;
  const hits = await debateIdsWithPrefix(q, p);
  if (hits.length === 1) return (await getDebate(q, hits[0]!))!;
  if (hits.length > 1) throw new UsageError(`Debate id prefix ${JSON.stringify(ref)} is ambiguous: it matches ${hits.join(', ')}. Give more characters.`);
  const recent = await recentDebateIds(q);
  throw new UsageError(`No debate ${JSON.stringify(ref)}. ${recent.length ? `Recent debates: ${recent.join(', ')}.` : 'There are no debates yet.'} See overseer debates.`);
}

const sidesText = (v: DebateView): string => v.sides.map((s) => `${s.provider}${s.model ? `:${s.model}` : ''}`).join(' vs ');
const oneLine = (s: string | null | undefined, n = 300): string => {
  const t = (s ?? '').replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n)}…` : t;
};

/** A debate as text: header, each round's positions and verdicts, the post-action turns. */
export function render(v: DebateView): string {
  const out = [
    `${v.debate_id}  ${v.title}`,
    `status: ${v.status}${v.error ? ` — ${v.error}` : ''}`,
    `sides: A ${sidesText({ ...v, sides: [v.sides[0]!] })}, B ${sidesText({ ...v, sides: [v.sides[1]!] })}; rounds ${v.round}/${v.max_rounds}${v.loops > 1 ? `; loop ${v.loop}/${v.loops}` : ''}; cost $${v.cost_usd.toFixed(4)}`,
  ];
  if (v.post_action) out.push(`post-action (side ${v.post_action_side}${v.verify ? ', verified' : ''}): ${oneLine(v.post_action, 200)}`);
  if (v.branch) out.push(`branch: ${v.branch}`);
  for (const r of v.rounds) {
    out.push('', `${v.loops > 1 ? `loop ${r.loop} ` : ''}round ${r.round}`);
    for (const t of r.turns) out.push(`  ${t.side} ${t.verdict ? `[${t.verdict}] ` : ''}${t.status === 'done' ? oneLine(t.position) : `(${t.status}${t.error ? `: ${t.error}` : ''})`}  ${t.job_id}`);
  }
  for (const p of v.post) out.push('', `${v.loops > 1 ? `loop ${p.loop} ` : ''}${p.kind.replace('_', '-')} by ${p.side}${p.verdict ? ` [${p.verdict}]` : ''}: ${p.status === 'done' ? oneLine(p.text) : `(${p.status}${p.error ? `: ${p.error}` : ''})`}  ${p.job_id}`);
  out.push('', `notes: ${v.notes.final}, ${v.notes.rounds}round-<n>`);
  return `${out.join('\n')}\n`;
}
