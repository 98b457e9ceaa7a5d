// The projects table (migration 19) through the synchronous store, for the callers that are not on
// the asynchronous layer yet (src/store/sql/projects.ts has the rest; spawn_agent's check is there,
// assertProjectOpen): checkProject and the row a new job's project gets, inside JobService.create's
// and createSync's bodies and the workflow and debate services (mixed period: until step 7 of
// docs/store-plan.md); archivedProjects is read by `overseer status` (until step 8 moves the CLI's
// readers). A project's jobs carry its name in jobs.project; a row is made when its first job (or
// workflow) is created.
import type Database from 'better-sqlite3';
import type { ProjectRow } from '../store/sql/projects.js';

export type { ProjectRow };

export class ProjectStore {
  constructor(private readonly db: Database.Database) {}

  get(name: string): ProjectRow | undefined {
    return this.db.prepare('SELECT * FROM projects WHERE name = ?').get(name) as ProjectRow | undefined;
  }

  /** The row of `name`, made now if it has none. */
  ensure(name: string, now: number): void {
    this.db.prepare('INSERT OR IGNORE INTO projects (name, created_at) VALUES (?, ?)').run(name, now);
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
