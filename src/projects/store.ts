// The projects table (migration 19): a row per project ever used, holding its archive and flag
// state. A project's jobs carry its name in jobs.project; a row is made when its first job (or
// workflow) is created. SELECTs here also run on the CLI's read-only connection.
import type Database from 'better-sqlite3';

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

export class ProjectStore {
  constructor(private readonly db: Database.Database) {}

  get(name: string): ProjectRow | undefined {
    return this.db.prepare('SELECT * FROM projects WHERE name = ?').get(name) as ProjectRow | undefined;
  }

  /** The row of `name`, made now if it has none. */
  ensure(name: string, now: number): void {
    this.db.prepare('INSERT OR IGNORE INTO projects (name, created_at) VALUES (?, ?)').run(name, now);
  }

  update(name: string, f: { archived_at?: number | null; flagged?: number; note?: string | null }): void {
    const keys = Object.keys(f) as (keyof typeof f)[];
    if (keys.length === 0) return;
    this.db.prepare(`UPDATE projects SET ${keys.map((k) => `${k} = @${k}`).join(', ')} WHERE name = @__name`).run({ ...f, __name: name });
  }

  /** Whether any job or row names `name`. */
  exists(name: string): boolean {
    return !!this.get(name) || !!this.db.prepare('SELECT 1 FROM jobs WHERE project = ? LIMIT 1').get(name);
  }

  /** Every project (rows, and names jobs carry without a row), by name. */
  stats(): ProjectStats[] {
    const rows = this.db.prepare('SELECT * FROM projects').all() as ProjectRow[];
    const counts = this.db.prepare(`SELECT project, status, COUNT(*) AS n, TOTAL(cost_usd) AS cost, MAX(cost_unknown) AS unknown, MAX(updated_at) AS last
      FROM jobs WHERE project IS NOT NULL GROUP BY project, status`).all() as { project: string; status: string; n: number; cost: number; unknown: number; last: number }[];
    const out = new Map<string, ProjectStats>();
    const of = (name: string): ProjectStats => {
      let s = out.get(name);
      if (!s) out.set(name, (s = { name, archived_at: null, flagged: 0, note: null, created_at: null, jobs: 0, by_status: {}, cost_usd: 0, cost_unknown: 0, last_activity: null }));
      return s;
    };
    for (const r of rows) Object.assign(of(r.name), { archived_at: r.archived_at, flagged: r.flagged, note: r.note, created_at: r.created_at });
    for (const c of counts) {
      const s = of(c.project);
      s.jobs += c.n;
      s.by_status[c.status] = c.n;
      s.cost_usd += c.cost;
      s.cost_unknown = Math.max(s.cost_unknown, c.unknown ?? 0);
      s.last_activity = Math.max(s.last_activity ?? 0, c.last);
    }
    return [...out.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

/** Names of the archived projects; none on a database from before projects (read-only CLI on an old state). */
export function archivedProjects(db: Database.Database): string[] {
  try {
    return (db.prepare('SELECT name FROM projects WHERE archived_at IS NOT NULL ORDER BY name').all() as { name: string }[]).map((r) => r.name);
  } catch {
    return [];
  }
}
