// Network helpers for tests.
import { createServer, type AddressInfo } from 'node:net';

/** A port on 127.0.0.1 that nothing listens on (bound, then released): connections are refused. */
export async function deadPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
