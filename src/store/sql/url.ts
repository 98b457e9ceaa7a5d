// The database a hub's state lives in, from `databaseUrl` (OVERSEER_DATABASE_URL wins, as every
// setting's env does): none = SQLite in <home>/state.db, postgres:// = PostgreSQL. The password
// never appears in a message: every text that shows the URL goes through maskUrl.
import { join } from 'node:path';
import { InvalidInputError } from '../../errors.js';

export type SqlTarget = { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string; shown: string };

/** The URL as it may be shown: the password (anything between "user:" and the last "@" of the authority) replaced by ***. */
export function maskUrl(url: string): string {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/s.exec(url);
  if (!m) return url.replace(/:[^:@/]*@/, ':***@');
  const [, scheme, authority, rest] = m;
  const at = authority!.lastIndexOf('@');
  if (at < 0) return url;
  const userinfo = authority!.slice(0, at);
  const colon = userinfo.indexOf(':');
  const user = colon < 0 ? userinfo : `${userinfo.slice(0, colon)}:***`;
  return `${scheme}${user}${authority!.slice(at)}${rest}`;
}

/** The password of a URL (what lies between "user:" and the last "@" of its authority), raw as written. */
function passwordOf(url: string): string | undefined {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/s.exec(url)?.[1] ?? '';
  const at = authority.lastIndexOf('@');
  const colon = authority.indexOf(':');
  return at > 0 && colon >= 0 && colon < at ? authority.slice(colon + 1, at) : undefined;
}

/** `text` (e.g. a driver's message) with the URL masked and every occurrence of its password, raw or decoded, replaced by ***. */
export function scrub(text: string, url: string): string {
  let out = text.split(url).join(maskUrl(url));
  const pw = passwordOf(url);
  if (pw) for (const p of new Set([pw, safeDecode(pw)])) if (p) out = out.split(p).join('***');
  return out;
}

const safeDecode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

const FORM = 'postgres://user:password@host:5432/database (TLS: add ?sslmode=verify-full&sslrootcert=/path/ca.pem; pg 8 treats sslmode=require as verify-full)';

/** Where the state of a hub with this configuration lives; a URL that is not a PostgreSQL URL is refused here, before any connection. */
export function sqlTarget(config: { home: string; databaseUrl?: string | undefined }): SqlTarget {
  const url = config.databaseUrl?.trim();
  if (!url) return { dialect: 'sqlite', file: join(config.home, 'state.db') };
  const shown = maskUrl(url);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  if (scheme !== 'postgres' && scheme !== 'postgresql') {
    throw new InvalidInputError(`database URL ${shown} (databaseUrl / OVERSEER_DATABASE_URL): ${scheme ? `the scheme "${scheme}:" is not supported` : 'it has no scheme'}; Overseer speaks PostgreSQL here: write it as ${FORM}, or unset it to keep the state in SQLite`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(`database URL ${shown} (databaseUrl / OVERSEER_DATABASE_URL) is not a valid URL: write it as ${FORM}; percent-encode reserved characters in the user name and password (e.g. @ as %40)`);
  }
  if (!parsed.hostname) throw new InvalidInputError(`database URL ${shown} names no host: write it as ${FORM}`);
  if (parsed.pathname.length <= 1) throw new InvalidInputError(`database URL ${shown} names no database: write it as ${FORM}`);
  return { dialect: 'postgres', url, shown };
}
