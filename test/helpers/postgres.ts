// THROWAWAY minimal version (h/p29layer) of the agreed interface; h/p29infra owns this file and
// its version replaces this one at merge. A PostgreSQL 15 for this test process, started once,
// lazily, as the `postgres` user on 127.0.0.1 (password auth), stopped at process exit; or the
// one OVERSEER_TEST_PG_URL names.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const BIN = '/usr/lib/postgresql/15/bin';
const PASSWORD = 'test-secret-pw';

let started: Promise<{ url: string; admin: string }> | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function asPostgres(args: string[]): void {
  const r = spawnSync('runuser', ['-u', 'postgres', '--', ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr}${r.stdout}`);
}

async function start(): Promise<{ url: string; admin: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'overseer-pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  const pw = join(dir, 'pw');
  writeFileSync(pw, PASSWORD + '\n');
  execFileSync('chown', ['-R', 'postgres', dir]);
  asPostgres([`${BIN}/initdb`, '-D', data, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${pw}`, '-E', 'UTF8', '--locale=C.UTF-8']);
  const port = await freePort();
  asPostgres([`${BIN}/pg_ctl`, '-D', data, '-w', '-l', join(dir, 'log'), '-o', `-h 127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c max_connections=200`, 'start']);
  process.on('exit', () => {
    spawnSync('runuser', ['-u', 'postgres', '--', `${BIN}/pg_ctl`, '-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`;
  return { url: admin, admin };
}

/** The PostgreSQL of this test process (its admin URL). */
export function postgres(): Promise<{ url: string; admin: string }> {
  const given = process.env.OVERSEER_TEST_PG_URL;
  if (given) return Promise.resolve({ url: given, admin: given });
  return (started ??= start());
}

let n = 0;
/** A new empty database for one test. */
export async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const { admin } = await postgres();
  const name = `t_${process.pid}_${++n}_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const u = new URL(admin);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
