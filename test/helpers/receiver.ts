// A local HTTP receiver for notification tests: records every request on 127.0.0.1 (port 0),
// answers with the status set per path (default 200), and lets a test wait for a request that
// matches — woken by the request itself, with a deadline, never by polling.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Answer requests to `path` with this status (and body). */
  answer(path: string, status: number, body?: string): void;
  /** The first request (already received or still to come) that matches. */
  waitFor(what: string, pred: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const answers = new Map<string, { status: number; body: string }>();
  const ee = new EventEmitter();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => { body += d; });
    req.on('end', () => {
      let json: unknown;
      try { json = JSON.parse(body); } catch { json = undefined; }
      const r: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json };
      received.push(r);
      const a = answers.get(r.path) ?? { status: 200, body: 'ok' };
      res.writeHead(a.status, { 'content-type': 'text/plain' }).end(a.body);
      ee.emit('request', r);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, received,
    answer: (path, status, body = '') => { answers.set(path, { status, body }); },
    waitFor(what, pred, timeoutMs = 30_000) {
      const seen = received.find(pred);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const on = (r: Received): void => {
          if (!pred(r)) return;
          clearTimeout(t);
          ee.off('request', on);
          resolve(r);
        };
        const t = setTimeout(() => {
          ee.off('request', on);
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; received: ${received.map((r) => `${r.path} ${r.body.slice(0, 200)}`).join(' | ') || 'nothing'}`));
        }, timeoutMs);
        ee.on('request', on);
      });
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
