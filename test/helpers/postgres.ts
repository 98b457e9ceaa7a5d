// Real PostgreSQL for the tests (issue 29). One cluster per test process, started lazily on first use
// (test/helpers/pgCluster.ts: temp dir, 127.0.0.1 on a free port, stopped and removed at exit), or the
// server env OVERSEER_TEST_PG_URL names (a superuser URL). A test takes its own database and role:
//   const db = await freshDatabase(); t.after(() => db.drop()); ... connect to db.url ...
// postgresTls() starts a separate cluster that accepts only TLS, for the transport tests.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startCluster } from './pgCluster.js';
import { serverCertificates, type Certificates } from './pgTls.js';

export interface Postgres {
  /** A URL for an ordinary (non-superuser) role `overseer_test` on the database `overseer_test`. */
  url: string;
  /** The superuser URL (database `postgres`): create and drop databases and roles with it. */
  admin: string;
}

let shared: Promise<Postgres> | undefined;

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

function withCredentials(base: string, user: string, password: string, database: string): string {
  const u = new URL(base);
  u.username = user;
  u.password = encodeURIComponent(password);
  u.pathname = `/${database}`;
  return u.toString();
}

/** A database owned by a new login role with a random password, on the server `admin` names. */
async function createOwned(admin: string, name: string): Promise<{ url: string; password: string }> {
  const password = randomBytes(18).toString('base64url');
  await withClient(admin, async (c) => {
    await c.query(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
    // TEMPLATE template0: an empty database whatever the server's template1 holds.
    await c.query(`CREATE DATABASE ${name} OWNER ${name} TEMPLATE template0`);
    await c.query(`REVOKE ALL ON DATABASE ${name} FROM PUBLIC`);
  });
  return { url: withCredentials(admin, name, password, name), password };
}

async function dropOwned(admin: string, name: string): Promise<void> {
  await withClient(admin, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS ${name}`);
  });
}

async function startShared(): Promise<Postgres> {
  const given = process.env.OVERSEER_TEST_PG_URL;
  const admin = given ?? (await startCluster()).admin;
  // On a given server the fixed name would clash between test processes: suffix the pid.
  const name = given ? `overseer_test_${process.pid}` : 'overseer_test';
  if (given) await dropOwned(admin, name);
  const { url } = await createOwned(admin, name);
  if (given) process.once('beforeExit', () => { void dropOwned(admin, name).catch(() => undefined); });
  return { url, admin };
}

/** The PostgreSQL of this test process: started once, on first use; stopped when the process exits. */
export function postgres(): Promise<Postgres> {
  shared ??= startShared();
  return shared;
}

let n = 0;
/** A new empty database for one test, owned by its own role (a password login): it sees only its own. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const { admin } = await postgres();
  const name = `t_${process.pid}_${++n}_${randomBytes(3).toString('hex')}`;
  const { url } = await createOwned(admin, name);
  return { url, drop: () => dropOwned(admin, name) };
}

export interface TlsPostgres extends Postgres {
  /** The certificates the server presents (ca: the CA that signed its certificate, for sslrootcert). */
  certs: Certificates;
}

/**
 * A separate cluster that accepts only TLS connections (hostssl in pg_hba.conf, plain TCP rejected),
 * its certificate for `localhost` and 127.0.0.1 signed by a CA made here. `url`/`admin` carry no
 * sslmode: the caller adds `?sslmode=verify-full&sslrootcert=<certs.ca>` (or what it is testing).
 */
export async function postgresTls(): Promise<TlsPostgres> {
  let certs: Certificates | undefined;
  const cluster = await startCluster({
    settings: { ssl: 'on', ssl_cert_file: 'server.crt', ssl_key_file: 'server.key' },
    prepare(data) {
      certs = serverCertificates(data);
      const hba = ['local all all scram-sha-256', 'hostssl all all 127.0.0.1/32 scram-sha-256', 'hostnossl all all 0.0.0.0/0 reject', ''].join('\n');
      writeFileSync(join(data, 'pg_hba.conf'), hba); // pgCluster hands data/ to the server's user next
    },
  });
  if (!certs) throw new Error('postgresTls: the certificates were not made');
  const sslAdmin = `${cluster.admin}?sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.ca)}`;
  const { url } = await createOwned(sslAdmin, 'overseer_test');
  const plain = (u: string): string => { const x = new URL(u); x.search = ''; return x.toString(); };
  return { url: plain(url), admin: cluster.admin, certs };
}
