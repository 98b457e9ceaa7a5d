// Network helpers for tests.
import { createServer, type AddressInfo } from 'node:net';
import { request as httpRequest } from 'node:http';

/** A port on 127.0.0.1 that nothing listens on (bound, then released): connections are refused. */
export async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One HTTP request to 127.0.0.1:`port` with full control over the headers (fetch would not send a foreign Host). */
export function rawRequest(port: number, o: { method?: string; path?: string; headers: Record<string, string>; body?: string | Buffer; timeoutMs?: number }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: o.method ?? 'POST', path: o.path ?? '/mcp', headers: o.headers, setHost: false, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.setTimeout(o.timeoutMs ?? 30_000, () => req.destroy(new Error('raw request timed out')));
    req.on('error', reject);
    req.end(o.body);
  });
}
