// `overseer doctor`'s check of a PostgreSQL database (databaseUrl / OVERSEER_DATABASE_URL): it
// connects without changing anything (src/store/sql/probe.ts) and says what it found and what
// stands in the way: a reachable database whose schema is this overseer's (or older, or none yet:
// a hub creates or upgrades it when it starts) is fine. It warns when the password travels
// unencrypted, and when a password reaches the hub (in the URL or PGPASSWORD) while children run
// unconfined: they could read it from the hub's environment. Without a URL there is nothing to
// check here (the "state db" check covers SQLite).
import { sql } from 'kysely';
import type { Config } from '../config.js';
import { confineStatus, probeBwrap } from '../confine/launcher.js';
import { probePostgres, type PgProbe } from '../store/sql/probe.js';
import { openSql } from '../store/sql/open.js';
import { liveHubs } from '../store/sql/hubs.js';
import { sizeText } from './io.js';
import type { Check, DoctorDeps } from './types.js';

const NAME = 'database';
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?)$/i;

/** Where the hub's database password is, if it has one a program could read from its environment. */
function passwordSource(url: URL, env: NodeJS.ProcessEnv): string | undefined {
  if (url.password) return 'in the URL';
  if (env.PGPASSWORD) return 'in PGPASSWORD';
  return undefined;
}

/** The warning when children would run unconfined with a database password in the hub's environment; undefined when not. */
function exposure(url: URL, config: Config, deps: Pick<DoctorDeps, 'env' | 'probeConfine'>): { detail: string; fix: string } | undefined {
  const where = passwordSource(url, deps.env);
  if (!where) return undefined;
  const c = confineStatus(config.confine, deps.probeConfine ?? probeBwrap);
  if (c.active) return undefined;
  return {
    detail: `the database password is ${where} and agents run unconfined (${c.reason}): a program an agent runs can read the hub's environment (/proc/<hub pid>/environ) and configuration, and with them the password — confinement is what hides them (docs/security.md)`,
    fix: 'run agents confined: install bubblewrap and allow unprivileged user namespaces, and leave OVERSEER_CONFINE at auto or require (docs/security.md); else give this crew a database role whose password opens nothing but this database',
  };
}

/**
 * The database's size (pg_database_size) and the live hubs the registry knows (id, host, how old
 * their heartbeat is), read without changing anything; what could not be read is said instead.
 */
async function sizeAndHubs(config: Config): Promise<string> {
  let layer;
  try {
    layer = await openSql(config, { migrate: false });
    const size = Number((await sql<{ n: string | number }>`SELECT pg_database_size(current_database()) AS n`.execute(layer.db)).rows[0]!.n);
    const hubs = await liveHubs(layer.db, layer.dialect).catch(() => undefined);
    const list = hubs === undefined ? 'live hubs: unknown (no hubs table yet)'
      : hubs.length ? `live hubs: ${hubs.map((h) => `${h.id} on ${h.host} (heartbeat ${Math.round(h.heartbeat_age_ms / 1000)} s ago)`).join(', ')}` : 'live hubs: none';
    return `; size ${sizeText(size)}; ${list}`;
  } catch (err) {
    return `; size and hubs unknown (${(err as Error).message.split('\n')[0]})`;
  } finally {
    await layer?.close();
  }
}

export async function checkDatabase(config: Config | undefined, deps: Pick<DoctorDeps, 'env' | 'probeConfine'>): Promise<Check | undefined> {
  const url = config?.databaseUrl;
  if (!config || !url) return undefined;
  let p: PgProbe;
  try {
    p = await probePostgres(url);
  } catch (err) {
    return { name: NAME, status: 'fail', detail: (err as Error).message, fix: 'correct the URL or the server as the message says, then run overseer doctor again' };
  }
  const parsed = new URL(url);
  const tls = p.tls.inUse ? `TLS ${p.tls.version ?? ''}`.trim() : 'no TLS';
  const schema = p.schema.applied === 0
    ? 'schema: none yet (a hub creates it when it starts; overseer status and the other readers need it)'
    : `schema: ${p.schema.applied} migration${p.schema.applied === 1 ? '' : 's'} applied${p.schema.pending.length ? `, ${p.schema.pending.length} to apply when a hub starts` : ' (current)'}`;
  const usage = p.schema.applied > 0 ? await sizeAndHubs(config) : '';
  const detail = `${p.shown}: PostgreSQL ${p.serverVersion}, connected in ${Math.round(p.connectMs)} ms, ${tls}${p.tls.sslmode ? ` (sslmode=${p.tls.sslmode})` : ''}; `
    + `${schema}${p.listen ? '' : '; LISTEN refused'}${p.advisoryLocks ? '' : '; advisory locks refused'}${usage}`;
  if (p.schema.unknown.length) {
    return { name: NAME, status: 'fail', detail: `${detail}; the database has migrations this overseer does not know (${p.schema.unknown.join(', ')}): a newer overseer uses it`, fix: 'upgrade overseer-mcp to the version the other hubs run' };
  }
  if (!p.listen || !p.advisoryLocks) {
    return { name: NAME, status: 'fail', detail, fix: 'hubs on one database need LISTEN/NOTIFY and advisory locks: connect as a role that may use them (an ordinary owner of the database may)' };
  }
  const warnings: { detail: string; fix: string }[] = [];
  if (!p.tls.inUse && !LOOPBACK.test(parsed.hostname)) {
    warnings.push({ detail: 'the password and the crew\'s state cross the network unencrypted', fix: 'add sslmode=verify-full&sslrootcert=<the server\'s CA file> to the URL' });
  }
  const exposed = exposure(parsed, config, deps);
  if (exposed) warnings.push(exposed);
  if (warnings.length) {
    return { name: NAME, status: 'warn', detail: `${detail}; ${warnings.map((w) => w.detail).join('; ')}`, fix: warnings.map((w) => w.fix).join('; and ') };
  }
  return { name: NAME, status: 'ok', detail };
}
