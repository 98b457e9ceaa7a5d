// The state database as the CLI reads it: read-only (works whether or not a hub runs), and job
// ids accepted by unique prefix ("7f3a" or "j-7f3a" for j-7f3a9c01).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { loadConfig, type Config } from '../config.js';
import { JobStore, type JobRow } from '../store/jobs.js';
import { CliError, UsageError } from './errors.js';
import { sqlOver, type SqlDb } from '../store/sql/open.js';

export interface State {
  /** The layer over the read-only handle (src/store/sql): what the CLI's readers move onto (docs/store-plan.md step 8). */
  sql: SqlDb;
  /** mixed period: until step 8 — the synchronous readers not yet moved. */
  store: JobStore;
  db: Database.Database;
  home: string;
  /** The configuration the state was found with (budgets for `overseer status`). */
  config?: Config;
  close: () => void;
}

export function openState(): State {
  const config = loadConfig();
  const { home } = config;
  const file = join(home, 'state.db');
  if (!existsSync(file)) throw new CliError(`No Overseer state at ${home} (no state.db). Run overseer from your project, or set OVERSEER_HOME.`);
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const sql = sqlOver(db);
  return { sql, store: new JobStore(db), db, home, config, close: () => { void sql.close(); db.close(); } };
}

const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Ids starting with `prefix` (or with `j-<prefix>`), at most `max`. */
export function idsWithPrefix(db: Database.Database, prefix: string, max = 20): string[] {
  const pats = [`${likeEscape(prefix)}%`];
  if (!prefix.startsWith('j-')) pats.push(`j-${likeEscape(prefix)}%`);
  const sql = `SELECT id FROM jobs WHERE ${pats.map(() => "id LIKE ? ESCAPE '\\'").join(' OR ')} ORDER BY seq LIMIT ?`;
  return (db.prepare(sql).all(...pats, max) as { id: string }[]).map((r) => r.id);
}

/**
 * The job `ref` names: its exact id, or the one job whose id starts with it. Ambiguous is a
 * usage error listing the matches; unknown is a usage error naming recent ids.
 */
export function resolveJob(s: State, ref: string): JobRow {
  const exact = s.store.get(ref);
  if (exact) return exact;
  if (ref.trim() === '') throw new UsageError('The job id is empty: give a job id (or a unique prefix of one) from overseer status.');
  const hits = idsWithPrefix(s.db, ref);
  if (hits.length === 1) return s.store.get(hits[0]!)!;
  if (hits.length > 1) throw new UsageError(`Job id prefix ${JSON.stringify(ref)} is ambiguous: it matches ${hits.join(', ')}${hits.length === 20 ? ', …' : ''}. Give more characters.`);
  const known = s.store.nearbyIds(ref);
  throw new UsageError(`No job ${JSON.stringify(ref)}. ${known.length ? `Recent jobs: ${known.join(', ')}.` : 'There are no jobs yet.'} See overseer status.`);
}
