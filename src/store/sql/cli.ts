// What the CLI alone asks of the jobs table (src/cli/state.ts): job ids by prefix and the ids
// near an unknown one, over the layer on SQLite and PostgreSQL alike. Ids are compared in lower
// case, so a prefix matches the same jobs on both (SQLite's LIKE ignores ASCII case, PostgreSQL's
// does not).
import { sql } from 'kysely';
import type { Q } from './tx.js';
import type { BootstrapReport } from '../setup.js';

const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Ids starting with `prefix` (or with `j-<prefix>`), in creation order, at most `max`; % and _ match literally. */
export async function idsWithPrefix(q: Q, prefix: string, max = 20): Promise<string[]> {
  const p = prefix.toLowerCase();
  const pats = [`${likeEscape(p)}%`];
  if (!p.startsWith('j-')) pats.push(`j-${likeEscape(p)}%`);
  const rows = await q.selectFrom('jobs').select('id')
    .where((e) => e.or(pats.map((pat) => e(sql`lower(id)`, 'like', sql<string>`${pat} ESCAPE '\\'`))))
    .orderBy('seq').limit(max).execute();
  return rows.map((r) => r.id);
}

/** Ids close to an unknown one, for "no such job": the newest sharing its first four characters, then the newest. */
export async function nearbyIds(q: Q, id: string, max = 5): Promise<string[]> {
  const similar = await q.selectFrom('jobs').select('id').where(sql`lower(id)`, 'like', sql<string>`${`${likeEscape(id.slice(0, 4).toLowerCase())}%`} ESCAPE '\\'`).orderBy('seq', 'desc').limit(max).execute();
  const recent = await q.selectFrom('jobs').select('id').orderBy('seq', 'desc').limit(max).execute();
  return [...new Set([...similar, ...recent].map((r) => r.id))].slice(0, max);
}

/** Reads a table an older SQLite state may not have yet: `fallback` when the statement fails (the CLI opens old states read-only). */
async function orElse<T>(read: () => Promise<T>, fallback: T): Promise<T> {
  try {
    return await read();
  } catch {
    return fallback;
  }
}

/** Names of the archived projects, by name; none on a database from before projects. */
export function archivedProjectNames(q: Q): Promise<string[]> {
  return orElse(async () => (await q.selectFrom('projects').select('name').where('archived_at', 'is not', null).orderBy('name').execute()).map((r) => r.name), []);
}

export interface JobScriptCall { run_id: string; call: number; title: string; status: string }

/** The script run call each job carries (src/scripts): job id → its run and call; none on a database from before scripts. */
export function scriptCallsByJob(q: Q): Promise<Map<string, JobScriptCall>> {
  return orElse(async () => {
    const rows = (await sql<{ job_id: string; run_id: string; seq: number; title: string; status: string }>`SELECT c.job_id, c.run_id, c.seq, r.title, r.status
      FROM script_calls c JOIN runs r ON r.id = c.run_id WHERE c.job_id IS NOT NULL`.execute(q)).rows;
    return new Map(rows.map((r) => [r.job_id, { run_id: r.run_id, call: Number(r.seq), title: r.title, status: r.status }]));
  }, new Map());
}

/** The branch each job's branch was last merged into (docs/merge.md); none on a database from before merges. */
export function mergeTargetsByJob(q: Q): Promise<Map<string, string>> {
  return orElse(async () => {
    const rows = (await sql<{ job_id: string; target: string }>`SELECT job_id, target FROM job_merges ORDER BY id`.execute(q)).rows;
    return new Map(rows.map((r) => [r.job_id, r.target]));
  }, new Map());
}

/** The bootstrap report of every job that has one (src/store/setup.ts's shape); none on a database from before worktree setup. */
export function setupReportsByJob(q: Q): Promise<Map<string, BootstrapReport>> {
  return orElse(async () => {
    const rows = await q.selectFrom('job_setup').select(['job_id', 'report_json']).where('report_json', 'is not', null).execute();
    return new Map(rows.map((r) => [r.job_id, JSON.parse(r.report_json!) as BootstrapReport]));
  }, new Map());
}
