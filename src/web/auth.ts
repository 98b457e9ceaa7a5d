// Who may use the dashboard: the person who ran `overseer dashboard` with the lead token. That
// command asks the hub for a one-time login code (60 s, one use, kept only as a hash); the page
// at /login?code=… trades it for a session cookie (HttpOnly, SameSite=Strict, path /), and the
// code is gone. The cookie is `<session id>.<expiry>.<HMAC>` under a key in the state directory
// (<state>/web.key, 0600: agents never see the state directory), so a session outlives a hub
// restart, and `overseer dashboard --revoke` (a new key) ends every session at once. Every
// state-changing request also carries the session's CSRF token (an HMAC of its id), which a page
// of another origin cannot read. Pure apart from the key file.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const CODE_TTL_MS = 60_000;
export const SESSION_TTL_MS = 24 * 3600_000;

export interface WebSession { sid: string; expiresAt: number }

const b64 = (b: Buffer): string => b.toString('base64url');
const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The key file: made once (32 random bytes), or replaced by `rotate`. */
export function webKey(home: string, rotate = false): Buffer {
  const file = join(home, 'web.key');
  if (!rotate && existsSync(file)) {
    const k = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64url');
    if (k.length >= 32) return k;
  }
  const k = randomBytes(32);
  writeFileSync(file, `${b64(k)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return k;
}

export class WebAuth {
  private readonly codes = new Map<string, number>();

  /** `cookieName` is asked each time: it carries the hub's port, known once it listens (a browser keeps one cookie jar per host, not per port). */
  constructor(private key: Buffer, private readonly now: () => number, private readonly name: () => string) {}

  get cookieName(): string { return this.name(); }

  /** A new key (after `overseer dashboard --revoke` wrote one): every cookie stops working. */
  rekey(key: Buffer): void { this.key = key; }

  /** A one-time login code for `overseer dashboard` (the caller holds the lead token). */
  mintCode(): { code: string; expiresAt: number } {
    const now = this.now();
    for (const [h, exp] of this.codes) if (exp <= now) this.codes.delete(h);
    const code = b64(randomBytes(24));
    const expiresAt = now + CODE_TTL_MS;
    this.codes.set(sha(code), expiresAt);
    return { code, expiresAt };
  }

  /** Trade a code for a cookie value; undefined when the code is unknown, used or expired. */
  redeem(code: string): { cookie: string; session: WebSession } | undefined {
    const h = sha(code);
    const exp = this.codes.get(h);
    this.codes.delete(h);
    if (exp === undefined || exp <= this.now()) return undefined;
    const session = { sid: b64(randomBytes(18)), expiresAt: this.now() + SESSION_TTL_MS };
    return { cookie: this.sign(session), session };
  }

  private mac(s: string): string {
    return b64(createHmac('sha256', this.key).update(s).digest());
  }

  private sign(s: WebSession): string {
    const body = `${s.sid}.${s.expiresAt}`;
    return `${body}.${this.mac(`session:${body}`)}`;
  }

  /** The session a cookie header carries, if its signature holds and it has not expired. */
  session(cookieHeader: string | undefined): WebSession | undefined {
    const value = cookieValue(cookieHeader, this.cookieName);
    if (!value) return undefined;
    const m = /^([A-Za-z0-9_-]{16,64})\.(\d{1,16})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!m) return undefined;
    const [, sid, exp, mac] = m;
    if (!safeEqual(mac!, this.mac(`session:${sid}.${exp}`))) return undefined;
    const expiresAt = Number(exp);
    if (expiresAt <= this.now()) return undefined;
    return { sid: sid!, expiresAt };
  }

  /** The session's CSRF token (same for the session's life). */
  csrf(s: WebSession): string {
    return this.mac(`csrf:${s.sid}`);
  }

  csrfOk(s: WebSession, given: string | undefined): boolean {
    return !!given && safeEqual(given, this.csrf(s));
  }

  setCookie(value: string, maxAgeS: number): string {
    return `${this.cookieName}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeS))}`;
  }
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** One cookie's value from a Cookie header. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}
