// Certificates for the TLS tests, made with the openssl command (Debian's openssl package; node's
// crypto makes keys but not X.509 certificates). A CA, and a server certificate it signs for
// `localhost` and 127.0.0.1 — what sslmode=verify-full checks.
import { execFileSync } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface Certificates {
  /** The CA certificate (PEM) that signed the server's: the client's sslrootcert. */
  ca: string;
  serverCert: string;
  serverKey: string;
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (e) {
    throw new Error(`openssl ${args[0]} failed: ${(e as { stderr?: Buffer }).stderr?.toString() ?? (e as Error).message}. The TLS tests need the openssl command (Debian: apt-get install openssl).`);
  }
}

/** A self-signed CA in `dir`: returns the paths of its certificate and key. */
export function makeCa(dir: string, name: string): { cert: string; key: string } {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', `/CN=${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout', key, '-out', cert]);
  return { cert, key };
}

/** server.crt / server.key in the data dir (what postgresql.conf names), and the CA beside data/. */
export function serverCertificates(dataDir: string): Certificates {
  const outside = dirname(dataDir);
  const ca = makeCa(outside, 'test-ca');
  const serverKey = join(dataDir, 'server.key');
  const serverCert = join(dataDir, 'server.crt');
  const csr = join(outside, 'server.csr');
  const ext = join(outside, 'server.ext');
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=localhost', '-keyout', serverKey, '-out', csr]);
  writeFileSync(ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n');
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', '2', '-extfile', ext, '-out', serverCert]);
  chmodSync(serverKey, 0o600); // PostgreSQL refuses a key others can read
  return { ca: ca.cert, serverCert, serverKey };
}
