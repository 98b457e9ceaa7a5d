// The projects table (migration 19) and what a project's jobs add up to, over the layer (issue 29
// step 3). A row per project ever used holds its archive and flag state; names that jobs carry
// without a row are projects too. The same statements on SQLite and PostgreSQL: the row is made
// with INSERT … ON CONFLICT DO NOTHING (SQLite's INSERT OR IGNORE), and the cost is
// COALESCE(SUM(…), 0) (SQLite's TOTAL).
import { sql } from 'kysely';
import type { Q } from './tx.js';

export interface ProjectRow {
  name: string;
  archived_at: number | null;
  flagged: number;
  note: string | null;
  created_at: number;
}

/** One project as list_projects shows it: its row (if any) and what its jobs add up to. */
export interface ProjectStats {
  name: string;
  archived_at: number | null;
  flagged: number;
  note: string | null;
  created_at: number | null;
  jobs: number;
  /** Jobs per status, only statuses with at least one. */
  by_status: Record<string, number>;
  cost_usd: number;
  cost_unknown: number;
  /** The latest change of any of its jobs (epoch ms), null without jobs. */
  last_activity: number | null;
}

export interface ProjectChange { archived?: boolean | undefined; flagged?: boolean | undefined; note?: string | null | undefined }

export async function getProject(q: Q, name: string): Promise<ProjectRow | undefined> {
  return q.selectFrom('projects').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Whether any job or row names `name`. */
export async function projectExists(q: Q, name: string): Promise<boolean> {
  if (await getProject(q, name)) return true;
  return !!(await q.selectFrom('jobs').select('id').where('project', '=', name).limit(1).executeTakeFirst());
}

/** The row of `name`, made now if it has none (a project's first job or workflow). */
export async function ensureProject(q: Q, name: string, now: number): Promise<void> {
  await q.insertInto('projects').values({ name, created_at: now }).onConflict((oc) => oc.column('name').doNothing()).execute();
}

/**
 * Apply a change to the project's row, making the row first when it has none. Archiving an
 * archived project keeps the time it was archived (COALESCE in the UPDATE: no read, so no
 * transaction — the row's insert is idempotent and the update one statement).
 */
export async function changeProject(q: Q, name: string, c: ProjectChange, now: number): Promise<void> {
  await ensureProject(q, name, now);
  await q.updateTable('projects').set((eb) => ({
    ...(c.archived === undefined ? {} : { archived_at: c.archived ? eb.fn.coalesce('archived_at', eb.val(now)) : null }),
    ...(c.flagged === undefined ? {} : { flagged: c.flagged ? 1 : 0 }),
    ...(c.note === undefined ? {} : { note: c.note }),
  })).where('name', '=', name).execute();
}

/** Every project (rows, and names jobs carry without a row), by name (byte order). */
export async function projectStats(q: Q): Promise<ProjectStats[]> {
  const rows = await q.selectFrom('projects').selectAll().execute();
  const counts = await q.selectFrom('jobs')
    .select(['project', 'status'])
    .select((eb) => [
      eb.fn.countAll<number>().as('n'),
      sql<number>`COALESCE(SUM(cost_usd), 0)`.as('cost'),
      eb.fn.max('cost_unknown').as('unknown'),
      eb.fn.max('updated_at').as('last'),
    ])
    .where('project', 'is not', null).groupBy(['project', 'status']).execute();
  const out = new Map<string, ProjectStats>();
  const of = (name: string): ProjectStats => {
    let s = out.get(name);
    if (!s) out.set(name, (s = { name, archived_at: null, flagged: 0, note: null, created_at: null, jobs: 0, by_status: {}, cost_usd: 0, cost_unknown: 0, last_activity: null }));
    return s;
  };
  for (const r of rows) Object.assign(of(r.name), { archived_at: r.archived_at, flagged: r.flagged, note: r.note, created_at: r.created_at });
  for (const c of counts) {
    const s = of(c.project!);
    const n = Number(c.n);
    s.jobs += n;
    s.by_status[c.status] = n;
    s.cost_usd += Number(c.cost);
    s.cost_unknown = Math.max(s.cost_unknown, c.unknown ?? 0);
    s.last_activity = Math.max(s.last_activity ?? 0, c.last);
  }
  return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
