// The state database as the CLI reads it: read-only (works whether or not a hub runs) — SQLite's
// file, or the PostgreSQL database of `databaseUrl` / OVERSEER_DATABASE_URL, never migrated
// (src/store/sql/readOnly.ts) — and job ids accepted by unique prefix ("7f3a" or "j-7f3a" for j-7f3a9c01).
import { loadConfig, type Config } from '../config.js';
import type { JobRow } from '../store/jobs.js';
import { getJob } from '../store/sql/jobs.js';
import { idsWithPrefix, nearbyIds } from '../store/sql/cli.js';
import { CliError, UsageError } from './errors.js';
import type { SqlDb } from '../store/sql/open.js';
import { openStateReadOnly } from '../store/sql/readOnly.js';

export interface State {
  /** The layer over the read-only state (src/store/sql): every CLI reader reads through it. */
  sql: SqlDb;
  home: string;
  /** The configuration the state was found with (budgets for `overseer status`). */
  config?: Config;
  close: () => Promise<void>;
}

export async function openState(): Promise<State> {
  const config = loadConfig();
  const { home } = config;
  const s = await openStateReadOnly(config);
  if (!s) throw new CliError(`No Overseer state at ${home} (no state.db). Run overseer from your project, or set OVERSEER_HOME.`);
  return { sql: s.sql, home, config, close: s.close };
}

/**
 * The job `ref` names: its exact id, or the one job whose id starts with it. Ambiguous is a
 * usage error listing the matches; unknown is a usage error naming recent ids.
 */
export async function resolveJob(s: Pick<State, 'sql'>, ref: string): Promise<JobRow> {
  const q = s.sql.db;
  const exact = await getJob(q, ref);
  if (exact) return exact;
  if (ref.trim() === '') throw new UsageError('The job id is empty: give a job id (or a unique prefix of one) from overseer status.');
  const hits = await idsWithPrefix(q, ref);
  if (hits.length === 1) return (await getJob(q, hits[0]!))!;
  if (hits.length > 1) throw new UsageError(`Job id prefix ${JSON.stringify(ref)} is ambiguous: it matches ${hits.join(', ')}${hits.length === 20 ? ', …' : ''}. Give more characters.`);
  const known = await nearbyIds(q, ref);
  throw new UsageError(`No job ${JSON.stringify(ref)}. ${known.length ? `Recent jobs: ${known.join(', ')}.` : 'There are no jobs yet.'} See overseer status.`);
}
