// Checks of Overseer's own state: the configuration, the state directory, the SQLite state
// (opened read-only, never migrated) and a running hub (hub.json).
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig, resolveSettingsDir, resolveStateDir, settingsDirOf, type Config } from '../config.js';
import { MIGRATIONS } from '../store/migrations.js';
import { readHubInfo } from '../hubfiles/hubLock.js';
import { openReadOnly, type ReadOnlyState } from '../store/sql/readOnly.js';
import { firstLine, sizeText } from './io.js';
import type { Check, DoctorDeps } from './types.js';

export interface ConfigOutcome {
  check: Check;
  /** The validated configuration, when it is valid. */
  config?: Config;
  /** The state directory (from the config, else resolved from the environment alone). */
  home: string;
}

export function checkConfig(deps: Pick<DoctorDeps, 'env' | 'cwd'>): ConfigOutcome {
  const fallbackHome = (): string => resolveStateDir(deps.env, deps.cwd);
  try {
    const config = loadConfig(deps.env, deps.cwd);
    const file = join(settingsDirOf(config), 'config.json');
    const from = existsSync(file) ? `${file} and the environment` : 'the environment (no config.json)';
    return { check: { name: 'config', status: 'ok', detail: `valid, from ${from}` }, config, home: config.home };
  } catch (err) {
    const home = fallbackHome();
    return {
      check: {
        name: 'config',
        status: 'fail',
        detail: (err as Error).message.replace(/\s*\n\s*/g, '; '),
        fix: `correct the value named above in the environment or in ${join(resolveSettingsDir(deps.env, deps.cwd), 'config.json')}`,
      },
      home,
    };
  }
}

/** Can a file be created in the directory `dir`? Writes and removes a probe file (root ignores modes, so asking access() is not enough). */
function probeWrite(dir: string): string | undefined {
  const probe = join(dir, `.overseer-doctor-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(probe, '');
    rmSync(probe, { force: true });
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? firstLine((err as Error).message);
  }
}

type Kind = 'dir' | 'other' | 'missing';
function kindOf(p: string): Kind {
  try {
    return statSync(p).isDirectory() ? 'dir' : 'other';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'missing';
    return 'other';
  }
}

export function checkStateDir(home: string): Check {
  const name = 'state dir';
  const elsewhere = 'or set OVERSEER_HOME to a writable directory';
  const kind = kindOf(home);
  if (kind === 'dir') {
    const err = probeWrite(home);
    if (!err) return { name, status: 'ok', detail: `${home} (exists, writable)` };
    return { name, status: 'fail', detail: `${home} exists but is not writable (${err})`, fix: `make ${home} writable for this user (chown/chmod), ${elsewhere}` };
  }
  if (kind === 'other') return { name, status: 'fail', detail: `${home} exists but is not a directory`, fix: `remove or rename ${home}, ${elsewhere}` };
  // Missing: the nearest existing ancestor must be a directory we can create things in.
  let up = dirname(home);
  while (kindOf(up) === 'missing' && dirname(up) !== up) up = dirname(up);
  if (kindOf(up) !== 'dir') {
    return { name, status: 'fail', detail: `${home} does not exist and cannot be created: ${up} is a file, not a directory`, fix: `set OVERSEER_HOME to a directory outside ${up}, or move ${up} away` };
  }
  const err = probeWrite(up);
  if (err) return { name, status: 'fail', detail: `${home} does not exist and cannot be created: ${up} is not writable (${err})`, fix: `create ${home} yourself (mkdir -p ${home}) and make it writable, ${elsewhere}` };
  return { name, status: 'ok', detail: `${home} (does not exist yet; created on first run)` };
}

/** The newest schema version this overseer knows. */
export const KNOWN_SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/** The SQLite state file read-only through the layer (a PostgreSQL database is src/doctor/database.ts's). */
export async function checkStateDb(home: string, known = KNOWN_SCHEMA_VERSION, databaseUrl?: string): Promise<Check> {
  const name = 'state db';
  const file = join(home, 'state.db');
  if (databaseUrl) return { name, status: 'ok', detail: `the state is in the PostgreSQL database (the database check below); ${existsSync(file) ? `${file} is not used while databaseUrl is set` : `no ${file} is used`}` };
  if (!existsSync(file)) return { name, status: 'ok', detail: `no ${file} yet (created when the hub first starts; schema ${known})` };
  let s: ReadOnlyState | undefined;
  try {
    s = openReadOnly(file, 2000);
    const q = s.sql.db;
    const tables = new Set((await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'jobs')`.execute(q)).rows.map((r) => r.name));
    const version = tables.has('schema_migrations') ? Number((await sql<{ v: number }>`SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations`.execute(q)).rows[0]!.v) : 0;
    const jobs = tables.has('jobs') ? Number((await q.selectFrom('jobs').select((e) => e.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n) : 0;
    const count = `${jobs} job${jobs === 1 ? '' : 's'}, ${stateSize(file)}`;
    if (version > known) {
      return {
        name, status: 'fail',
        detail: `${file}: schema version ${version} is newer than this overseer knows (${known}); the hub will refuse to open it`,
        fix: 'upgrade overseer-mcp (npm i -g overseer-mcp@latest), or set OVERSEER_HOME to another directory',
      };
    }
    if (version < known) return { name, status: 'ok', detail: `${file}: schema version ${version}, ${count}; migrated to ${known} when the hub next starts` };
    return { name, status: 'ok', detail: `${file}: schema version ${version} (current), ${count}` };
  } catch (err) {
    const code = (err as { code?: string }).code;
    const msg = firstLine((err as Error).message);
    const damaged = code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
    return {
      name, status: 'fail',
      detail: `${file} cannot be read: ${msg}`,
      fix: damaged
        ? `move the damaged file aside (mv ${file} ${file}.bad); the hub creates a fresh one (job history is lost)`
        : `check that ${file} and its directory are readable by this user`,
    };
  } finally {
    await s?.close();
  }
}

/** The SQLite state's size on disk: the file and its write-ahead log (what `overseer gc` would shrink). */
export function stateSize(file: string): string {
  const size = (f: string): number => { try { return statSync(f).size; } catch { return 0; } };
  const db = size(file);
  const wal = size(`${file}-wal`);
  return `${sizeText(db + wal)} on disk (${sizeText(db)} + WAL ${sizeText(wal)})`;
}

export function checkHub(home: string, deps: Pick<DoctorDeps, 'pidAlive'>): Check {
  const name = 'hub';
  const info = readHubInfo(home);
  if (!info || typeof info.pid !== 'number') return { name, status: 'ok', detail: 'no hub running (one starts with the lead session)' };
  if (!deps.pidAlive(info.pid)) return { name, status: 'ok', detail: `no hub running (hub.json is left from pid ${info.pid}, which has exited; the next hub takes over)` };
  if (!info.url) return { name, status: 'ok', detail: `a hub is starting (pid ${info.pid})` };
  const extra = [info.version ? `overseer ${info.version}` : '', info.started_at ? `since ${info.started_at}` : ''].filter(Boolean).join(', ');
  return { name, status: 'ok', detail: `hub running: pid ${info.pid} at ${info.url}${extra ? ` (${extra})` : ''}` };
}
