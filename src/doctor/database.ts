// `overseer doctor`'s check of a PostgreSQL database (databaseUrl / OVERSEER_DATABASE_URL): it
// connects without changing anything (src/store/sql/probe.ts) and says what it found and what
// stands in the way. Without a URL there is nothing to check here (the "state db" check covers
// SQLite).
import type { Config } from '../config.js';
import { probePostgres, type PgProbe } from '../store/sql/probe.js';
import type { Check } from './types.js';

const NAME = 'database';
const LOOPBACK = /^(localhost|127\.\d+\.\d+\.\d+|\[?::1\]?)$/i;

export async function checkDatabase(config: Config | undefined): Promise<Check | undefined> {
  const url = config?.databaseUrl;
  if (!url) return undefined;
  let p: PgProbe;
  try {
    p = await probePostgres(url);
  } catch (err) {
    return { name: NAME, status: 'fail', detail: (err as Error).message, fix: 'correct the URL or the server as the message says, then run overseer doctor again' };
  }
  const host = new URL(url).hostname;
  const tls = p.tls.inUse ? `TLS ${p.tls.version ?? ''}`.trim() : 'no TLS';
  const detail = `${p.shown}: PostgreSQL ${p.serverVersion}, connected in ${Math.round(p.connectMs)} ms, ${tls}${p.tls.sslmode ? ` (sslmode=${p.tls.sslmode})` : ''}; `
    + `schema: ${p.schema.applied} migration${p.schema.applied === 1 ? '' : 's'} applied${p.schema.pending.length ? `, ${p.schema.pending.length} to apply when a hub starts` : ''}`
    + `${p.listen ? '' : '; LISTEN refused'}${p.advisoryLocks ? '' : '; advisory locks refused'}`;
  if (p.schema.unknown.length) {
    return { name: NAME, status: 'fail', detail: `${detail}; the database has migrations this overseer does not know (${p.schema.unknown.join(', ')}): a newer overseer uses it`, fix: 'upgrade overseer-mcp to the version the other hubs run' };
  }
  if (!p.listen || !p.advisoryLocks) {
    return { name: NAME, status: 'fail', detail, fix: 'hubs on one database need LISTEN/NOTIFY and advisory locks: connect as a role that may use them (an ordinary owner of the database may)' };
  }
  if (!p.tls.inUse && !LOOPBACK.test(host)) {
    return { name: NAME, status: 'warn', detail: `${detail}; the password and the crew's state cross the network unencrypted`, fix: 'add sslmode=verify-full&sslrootcert=<the server\'s CA file> to the URL' };
  }
  return {
    name: NAME, status: 'fail',
    detail: `${detail}; this version of Overseer cannot keep its state there yet: a hub refuses to start with the URL set`,
    fix: 'unset OVERSEER_DATABASE_URL (and databaseUrl in config.json) to keep the state in SQLite; the PostgreSQL store is being built (docs/store-plan.md)',
  };
}
