// The environment children inherit: the hub's own (so ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
// CLAUDE_CODE_MAX_RETRIES and the like pass through) minus the variables Claude Code sets for
// *its* session and MCP servers. When the hub runs under a lead claude, those describe the
// lead's session (its id, messaging socket, project dir) and would confuse each child.
import { join } from 'node:path';

const LEAD_SESSION_VARS = [
  'CLAUDECODE', 'CLAUDE_CODE_SESSION_ID', 'CLAUDE_CODE_ENTRYPOINT', 'CLAUDE_PROJECT_DIR', 'CLAUDE_PID',
  'CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS', 'CLAUDE_CODE_MESSAGING_SOCKET', 'CLAUDE_CODE_MESSAGING_TOKEN',
  'CLAUDE_CODE_CHILD_SESSION', 'CLAUDE_CODE_CHILD_NOTES_DIR', 'CLAUDE_CODE_SESSION_ATTENDED', 'CLAUDE_EFFORT',
  'AI_AGENT', 'OVERSEER_AGENT_ID', 'OVERSEER_TOKEN', 'OVERSEER_URL',
];

/**
 * The hub's database credentials never reach an agent (docs/security.md, "Database credentials"):
 * its URL (and the common alias DATABASE_URL) carries the password, and libpq's variables say
 * where to connect, as whom, with which password, password file, service file or TLS key. A child
 * that needs a database of its own is given one in its task, not the crew's.
 */
export const DATABASE_CREDENTIAL_VARS: readonly string[] = [
  'OVERSEER_DATABASE_URL', 'DATABASE_URL',
  'PGHOST', 'PGHOSTADDR', 'PGPORT', 'PGDATABASE', 'PGUSER', 'PGPASSWORD', 'PGPASSFILE', 'PGSERVICE', 'PGSERVICEFILE',
  'PGSSLMODE', 'PGSSLCERT', 'PGSSLKEY', 'PGSSLROOTCERT', 'PGSSLPASSWORD', 'PGSSLCRL', 'PGSSLCRLDIR', 'PGREQUIRESSL',
  'PGOPTIONS', 'PGAPPNAME', 'PGCONNECT_TIMEOUT', 'PGTARGETSESSIONATTRS', 'PGCHANNELBINDING', 'PGREQUIREAUTH',
  'PGGSSENCMODE', 'PGKRBSRVNAME', 'PGGSSLIB', 'PGREQUIREPEER', 'PGSYSCONFDIR',
];

const DROPPED = new Set([...LEAD_SESSION_VARS, ...DATABASE_CREDENTIAL_VARS]);

export function childEnvFrom(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !DROPPED.has(k)) out[k] = v;
  return out;
}

/** The query parameters of a database URL that name a file with a credential in it (libpq's and pg's names). */
const URL_FILE_PARAMS = ['sslkey', 'sslcert', 'passfile'];

/**
 * The files that hold the hub's database credentials, as the hub's environment and its database
 * URL(s) name them: `~/.pgpass` (libpq's default) or PGPASSFILE's file, PGSSLKEY / PGSSLCERT, and a
 * URL's `sslkey=` / `sslcert=` / `passfile=`. Confinement hides those that exist (src/confine/jail.ts).
 * Relative paths are left out: libpq resolves them against a working directory that is not the child's.
 */
export function databaseCredentialFiles(hubEnv: NodeJS.ProcessEnv, urls: readonly (string | undefined)[] = []): string[] {
  const files: string[] = [];
  if (hubEnv.HOME) files.push(join(hubEnv.HOME, '.pgpass'));
  for (const k of ['PGPASSFILE', 'PGSSLKEY', 'PGSSLCERT']) if (hubEnv[k]) files.push(hubEnv[k]!);
  for (const url of [...urls, hubEnv.OVERSEER_DATABASE_URL, hubEnv.DATABASE_URL]) {
    if (!url) continue;
    let params: URLSearchParams;
    try {
      params = new URL(url).searchParams;
    } catch {
      continue; // not a URL (a keyword/value string is not accepted as databaseUrl: src/store/sql/url.ts)
    }
    for (const p of URL_FILE_PARAMS) for (const v of params.getAll(p)) if (v) files.push(v);
  }
  return [...new Set(files.filter((f) => f.startsWith('/')))];
}
