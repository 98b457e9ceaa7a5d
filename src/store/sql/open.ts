// Opens the state database as one asynchronous Kysely layer over either dialect (issue 29):
// SQLite (the default) on the state file through the synchronous store's openDb — the same WAL,
// busy timeout and migrations — and PostgreSQL through a pg Pool, connected and migrated before
// openSql returns, so a wrong URL fails here with the URL (password masked) and what to check.
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { openDb, type Db } from '../db.js';
import { ImmediateSqliteDialect } from './sqlite.js';
import { InvalidInputError } from '../../errors.js';
import { sqlTarget, scrub } from './url.js';
import { migratePostgres, PG_MIGRATIONS, PG_MIGRATION_TABLE } from './migrate.js';
import { registerSqlite } from './tx.js';
import type { Schema } from './schema.js';

export type SqlDialect = 'sqlite' | 'postgres';

export interface SqlDb {
  db: Kysely<Schema>;
  dialect: SqlDialect;
  /** Closes the connection (SQLite) or ends the pool (PostgreSQL). */
  close(): Promise<void>;
}

/** Longest wait for a PostgreSQL connection before the open fails (ms). */
export const CONNECT_TIMEOUT_MS = 10_000;
const PG_INT8 = 20;

/** BIGINT (int8) as a JS number: the schema's integers are ms timestamps, counts and ids, all far below 2^53. */
function int8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`BIGINT ${text} is beyond a JS number's exact range`);
  return n;
}

const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === PG_INT8 && format !== 'binary' ? int8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** The layer over a SQLite connection opened elsewhere (the CLI's read-only handle, a test's file);
 * close leaves the connection open for its opener to close. */
export function sqlOver(sqlite: Db): SqlDb {
  const db = new Kysely<Schema>({ dialect: new ImmediateSqliteDialect(sqlite, false) });
  registerSqlite(db, sqlite);
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

export interface OpenSqlOptions {
  /** false: never migrate (a CLI reader): PostgreSQL's schema must be there and current, else
   * the open fails saying to start a hub once (src/store/sql/readOnly.ts). SQLite's read-only
   * open is readOnly.ts's own, so false there is a mistake. Default true. */
  migrate?: boolean;
}

export async function openSql(config: { home: string; databaseUrl?: string | undefined }, o: OpenSqlOptions = {}): Promise<SqlDb> {
  const target = sqlTarget(config);
  const migrate = o.migrate ?? true;
  if (target.dialect === 'sqlite') {
    if (!migrate) throw new Error('openSql({ migrate: false }) is for PostgreSQL; open a SQLite state read-only with openReadOnly (src/store/sql/readOnly.ts)');
    const raw = openDb(target.file);
    const db = new Kysely<Schema>({ dialect: new ImmediateSqliteDialect(raw, true) });
    registerSqlite(db, raw);
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  const pool = new pg.Pool({ connectionString: target.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, types: pgTypes });
  // An idle client whose connection broke is dropped by the pool; the next query opens a new one
  // or fails with the reason. Without a listener the 'error' event would end the process.
  pool.on('error', () => undefined);
  // A client checked out of the pool (a transaction awaiting between its statements) has no pool
  // listener: the server ending its connection (restart, pg_terminate_backend, a dropped network)
  // emitted 'error' with nobody listening and ended the hub. Its pending and next queries fail
  // with the reason instead, the transaction rolls back, and the pool drops the client.
  pool.on('connect', (client) => void client.on('error', () => undefined));
  try {
    const client = await pool.connect();
    try {
      await client.query('SELECT 1');
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw openError(target.url, target.shown, err);
  }
  const db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool }) });
  try {
    if (migrate) await migratePostgres(db as Kysely<unknown>);
    else await requireSchema(db, target.shown);
  } catch (err) {
    await db.destroy().catch(() => undefined);
    if (!migrate && err instanceof InvalidInputError) throw err;
    throw new InvalidInputError(`cannot ${migrate ? 'migrate' : 'read'} the database ${target.shown}: ${scrub((err as Error).message, target.url)}`);
  }
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

const START_HUB = 'start a hub of this version on it once (overseer serve, or the lead\'s overseer mcp, with the same databaseUrl / OVERSEER_DATABASE_URL)';

/** A reader's open (no migration): the schema is there and has every migration this overseer
 * knows, else an InvalidInputError saying a hub creates or upgrades it. Newer is fine to read. */
async function requireSchema(db: Kysely<Schema>, shown: string): Promise<void> {
  const has = (await sql<{ t: string | null }>`SELECT to_regclass(${PG_MIGRATION_TABLE})::text AS t`.execute(db)).rows[0]?.t;
  if (!has) throw new InvalidInputError(`the database ${shown} has no Overseer schema yet (a reader never creates it): ${START_HUB} to create it`);
  const applied = new Set((await sql<{ name: string }>`SELECT name FROM ${sql.table(PG_MIGRATION_TABLE)}`.execute(db)).rows.map((r) => r.name));
  const missing = Object.keys(PG_MIGRATIONS).filter((k) => !applied.has(k));
  if (missing.length) throw new InvalidInputError(`the database ${shown} has an older Overseer schema (without ${missing.join(', ')}; a reader never migrates): ${START_HUB} to upgrade it`);
}

const CHECK = 'Check: the host and port are reachable from here, the user name and password (percent-encoded in the URL), that the database exists (createdb), and the TLS parameters (sslmode, sslrootcert) match the server';

/** Why a PostgreSQL connection failed, said for the person who set the URL; never with the password. */
export function openError(url: string, shown: string, err: unknown): InvalidInputError {
  const e = err as { code?: string; message?: string };
  const msg = scrub(e.message ?? String(err), url);
  const hint = hintFor(e.code, msg);
  return new InvalidInputError(`cannot open the database ${shown} (databaseUrl / OVERSEER_DATABASE_URL): ${msg}${e.code ? ` [${e.code}]` : ''}. ${hint ? `${hint}. ` : ''}${CHECK}.`);
}

function hintFor(code: string | undefined, msg: string): string | undefined {
  if (code === '28000' && /no encryption/.test(msg)) return 'The server accepts this connection only over TLS: add sslmode=verify-full&sslrootcert=<its CA file> to the URL';
  switch (code) {
    case 'ECONNREFUSED': return 'Nothing accepts connections at that host and port: is PostgreSQL running, listening on TCP there (listen_addresses, port)?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN': return 'The host name does not resolve: fix the host in the URL';
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH': return 'The host does not answer: check the address and any firewall between here and it';
    case '28P01':
    case '28000': return 'The server refused these credentials: check the user name and password, and pg_hba.conf on the server';
    case '3D000': return 'That database does not exist on the server: create it (createdb) or fix its name in the URL';
    case '53300': return 'The server has no connection slots left (max_connections)';
  }
  if (/timeout/i.test(msg)) return `No connection within ${CONNECT_TIMEOUT_MS / 1000} s: check the host, port and firewall`;
  if (/does not support SSL/i.test(msg)) return 'The server does not accept TLS: remove sslmode from the URL (or sslmode=disable), or turn ssl on in the server';
  if (/ssl|tls|certificate/i.test(msg) || (code ?? '').includes('CERT')) return 'The TLS handshake failed: check sslmode and sslrootcert in the URL against the server\'s certificate';
  return undefined;
}
