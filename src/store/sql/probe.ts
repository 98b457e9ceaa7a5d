// What `overseer doctor` learns of a PostgreSQL database without changing it (no migration, no
// write): how long a connection takes, the server's version, whether this connection uses TLS
// against what the URL asked, the schema's migrations against this overseer's, and whether the
// role may LISTEN and take advisory locks (many hubs need both: docs/store-plan.md §3).
import pg from 'pg';
import { sqlTarget } from './url.js';
import { CONNECT_TIMEOUT_MS, openError } from './open.js';
import { PG_MIGRATIONS, PG_MIGRATION_TABLE } from './migrate.js';

export interface PgProbe {
  /** The URL with its password masked. */
  shown: string;
  connectMs: number;
  serverVersion: string;
  /** TLS on this connection (pg_stat_ssl), and the sslmode the URL asked for. */
  tls: { inUse: boolean; version: string | null; sslmode: string | null };
  /** Migrations the database has, that this overseer knows but the database lacks, and that this overseer does not know (a newer overseer ran them). */
  schema: { applied: number; pending: string[]; unknown: string[] };
  listen: boolean;
  advisoryLocks: boolean;
}

/** Probe the database at `url`; a connection that fails throws the same InvalidInputError a hub's start would (masked, with what to check). */
export async function probePostgres(url: string): Promise<PgProbe> {
  const target = sqlTarget({ home: '', databaseUrl: url });
  if (target.dialect !== 'postgres') throw new Error('probePostgres needs a PostgreSQL URL');
  const client = new pg.Client({ connectionString: target.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  client.on('error', () => undefined);
  const t0 = performance.now();
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw openError(target.url, target.shown, err);
  }
  const connectMs = performance.now() - t0;
  try {
    const one = async <T>(text: string): Promise<T | undefined> => (await client.query(text)).rows[0] as T | undefined;
    const serverVersion = (await one<{ server_version: string }>('SHOW server_version'))?.server_version ?? '?';
    const ssl = await one<{ ssl: boolean; version: string | null }>('SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
    const sslmode = new URL(target.url).searchParams.get('sslmode');
    const has = await one<{ t: string | null }>(`SELECT to_regclass('${PG_MIGRATION_TABLE}')::text AS t`);
    const applied = has?.t ? ((await client.query(`SELECT name FROM ${PG_MIGRATION_TABLE}`)).rows as { name: string }[]).map((r) => r.name) : [];
    const known = Object.keys(PG_MIGRATIONS);
    let listen = true;
    try {
      await client.query('LISTEN overseer_doctor');
      await client.query('UNLISTEN overseer_doctor');
    } catch {
      listen = false;
    }
    let advisoryLocks = true;
    try {
      const got = await one<{ ok: boolean }>('SELECT pg_try_advisory_lock(7, 0) AS ok');
      if (got?.ok) await client.query('SELECT pg_advisory_unlock(7, 0)');
    } catch {
      advisoryLocks = false;
    }
    return {
      shown: target.shown, connectMs, serverVersion,
      tls: { inUse: ssl?.ssl ?? false, version: ssl?.version ?? null, sslmode },
      schema: { applied: applied.length, pending: known.filter((k) => !applied.includes(k)), unknown: applied.filter((a) => !known.includes(a)) },
      listen, advisoryLocks,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}
