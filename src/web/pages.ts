// The dashboard's pages and assets, served by the hub itself from the package (no network, no
// build service): `/` (the app when a session cookie is valid, else how to log in), `/login?code=`
// (trades a one-time code for the session cookie), `POST /logout`, and `/assets/…` — the
// package's web/ folder (every .js and .css file in it) and the two vendored modules (Preact,
// htm) from node_modules. Assets are read and gzipped once at start; each carries an ETag, so
// a page reloaded after a hub restart revalidates with 304s instead of downloading again.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { WebAuth } from './auth.js';

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.svg': 'image/svg+xml', '.html': 'text/html; charset=utf-8' };

/** The import map the app's modules resolve `preact`, `preact/hooks` and `htm/preact` with. */
const IMPORT_MAP = JSON.stringify({ imports: {
  preact: '/assets/vendor/preact.mjs', 'preact/hooks': '/assets/vendor/hooks.mjs', htm: '/assets/vendor/htm.mjs', 'htm/preact': '/assets/vendor/htm-preact.mjs',
} });

export interface Asset {
  body: Buffer;
  /** The same, gzipped (served when the browser accepts it and it is smaller). */
  gzip: Buffer;
  type: string;
  etag: string;
}

export interface Assets {
  get(name: string): Asset | undefined;
  /** The CSP hash of the inline import map. */
  importMapHash: string;
}

/** Every asset read once at start: the web/ folder's files and the vendored modules. */
export function loadAssets(packageRoot: string): Assets {
  const req = createRequire(join(packageRoot, 'package.json'));
  // Their main files are in <package>/dist/ (their exports hide package.json).
  const preact = dirname(dirname(req.resolve('preact')));
  const htm = dirname(dirname(req.resolve('htm')));
  const files: Record<string, string> = {
    'vendor/preact.mjs': join(preact, 'dist', 'preact.module.js'),
    'vendor/hooks.mjs': join(preact, 'hooks', 'dist', 'hooks.module.js'),
    'vendor/htm.mjs': join(htm, 'dist', 'htm.module.js'),
    'vendor/htm-preact.mjs': join(htm, 'preact', 'index.module.js'),
  };
  const web = join(packageRoot, 'web');
  for (const f of readdirSync(web)) if (/^[a-z][\w-]*\.(js|css)$/.test(f)) files[f] = join(web, f);
  const cache = new Map<string, Asset>();
  for (const [name, path] of Object.entries(files)) {
    const ext = name.slice(name.lastIndexOf('.'));
    const body = readFileSync(path);
    cache.set(name, { body, gzip: gzipSync(body, { level: 9 }), type: TYPES[ext] ?? 'application/octet-stream', etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` });
  }
  return { get: (n) => cache.get(n), importMapHash: createHash('sha256').update(IMPORT_MAP).digest('base64') };
}

const page = (title: string, body: string, importMap = ''): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark"><title>${title}</title>
<link rel="stylesheet" href="/assets/style.css">${importMap}</head>
<body>${body}</body></html>`;

const appPage = (): string => page('Overseer', '<div id="app" aria-live="polite"></div><script type="module" src="/assets/app.js"></script>', `<script type="importmap">${IMPORT_MAP}</script>`);

const loginPage = (why: string): string => page('Overseer — log in', `<main class="login"><h1>Overseer</h1><p>${why}</p>
<p>In your project, run <code>overseer dashboard</code> (or <code>overseer dashboard --open</code>): it prints a one-time link that logs this browser in.</p></main>`);

export interface PageDeps {
  auth: WebAuth;
  assets: Assets;
}

export function isPage(pathname: string): boolean {
  return pathname === '/' || pathname === '/login' || pathname === '/logout' || pathname === '/favicon.ico' || pathname.startsWith('/assets/');
}

export async function servePage(d: PageDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const headers = (type: string): Record<string, string> => ({
    'content-type': type,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
    'x-frame-options': 'DENY',
    'content-security-policy': `default-src 'none'; script-src 'self' 'sha256-${d.assets.importMapHash}'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
  });
  const html = (status: number, body: string, extra: Record<string, string> = {}): void => {
    res.writeHead(status, { ...headers('text/html; charset=utf-8'), ...extra });
    res.end(body);
  };
  const p = url.pathname;
  if (p.startsWith('/assets/')) {
    const a = req.method === 'GET' ? d.assets.get(p.slice('/assets/'.length)) : undefined;
    if (!a) return html(404, page('Not found', '<main class="login"><p>No such asset.</p></main>'));
    const h = { ...headers(a.type), 'cache-control': 'no-cache', etag: a.etag, vary: 'accept-encoding' };
    if (header(req, 'if-none-match') === a.etag) { res.writeHead(304, h); res.end(); return; }
    const gz = /\bgzip\b/.test(header(req, 'accept-encoding') ?? '') && a.gzip.length < a.body.length;
    res.writeHead(200, { ...h, ...(gz ? { 'content-encoding': 'gzip' } : {}) });
    res.end(gz ? a.gzip : a.body);
    return;
  }
  if (p === '/favicon.ico') { res.writeHead(204, headers('image/x-icon')); res.end(); return; }
  if (p === '/login') {
    if (req.method !== 'GET') return html(405, loginPage('Open the login link in the browser.'));
    const got = d.auth.redeem(url.searchParams.get('code') ?? '');
    if (!got) return html(401, loginPage('This login link was already used or has expired (links work once, for 60 seconds).'));
    res.writeHead(303, { ...headers('text/plain'), location: '/', 'set-cookie': d.auth.setCookie(got.cookie, (got.session.expiresAt - Date.now()) / 1000) });
    res.end();
    return;
  }
  if (p === '/logout') {
    const s = d.auth.session(req.headers.cookie);
    const sameOrigin = req.headers.origin !== undefined || req.headers['sec-fetch-site'] === 'same-origin';
    if (req.method !== 'POST' || !s || !sameOrigin || !d.auth.csrfOk(s, header(req, 'x-csrf-token'))) {
      return html(403, loginPage('Log out from the dashboard\'s own button.'));
    }
    res.writeHead(204, { ...headers('text/plain'), 'set-cookie': d.auth.setCookie('', 0) });
    res.end();
    return;
  }
  // `/`: the app for a session, else how to get one (never data).
  if (req.method !== 'GET' && req.method !== 'HEAD') return html(405, loginPage('GET this page.'));
  if (!d.auth.session(req.headers.cookie)) return html(401, loginPage('This browser is not logged in to this hub (or its session expired).'));
  html(200, appPage());
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
