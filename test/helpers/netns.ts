// Network namespaces for the worker tests (issue 30, docs/workers-plan.md §7): each worker runs in
// a namespace of its own whose only way out is a veth pair to an address on this machine's side,
// where a TCP relay (in the test process) forwards to the test's PostgreSQL on 127.0.0.1 — and to
// nothing else (no default route: any other address is "Network is unreachable"). Cutting the link
// (`ip link set <host end> down`) hangs the worker's connections without a word, as a pulled cable
// does; restoring it brings them back. Needs root (or CAP_NET_ADMIN): without it the helper throws
// saying so; the test fails, it never skips.
import { execFileSync, spawnSync } from 'node:child_process';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface Netns {
  /** The namespace's name (`ip netns exec <name> …`). */
  name: string;
  /** This machine's end of the veth: the address relays listen on. */
  hostAddr: string;
  /** The namespace's end. */
  innerAddr: string;
  /** argv prefix that runs a command inside the namespace. */
  exec: string[];
  /** Cut the link (the host end down): connections hang, no error. */
  cut(): void;
  /** Bring it back. */
  restore(): void;
  remove(): void;
}

const PREFIX = 'ovw';

function ip(args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')} failed: ${(r.stderr || r.stdout || String(r.error)).trim()}`);
}

/** Remove namespaces this helper left behind in runs whose process is gone (kill -9 of a test). */
function sweep(): void {
  const out = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout ?? '';
  for (const line of out.split('\n')) {
    const m = new RegExp(`^(${PREFIX}(\\d+)-\\d+)`).exec(line.trim());
    if (!m) continue;
    const pid = Number(m[2]);
    let alive = true;
    try { process.kill(pid, 0); } catch { alive = false; }
    if (!alive || pid === process.pid) spawnSync('ip', ['netns', 'del', m[1]!]);
  }
}

let swept = false;

/** Namespace number `i` (0..3) of this test process: veth, addresses, loopback up. */
export function makeNetns(i: number): Netns {
  if (process.getuid?.() !== 0) throw new Error('the worker network tests need root (or CAP_NET_ADMIN) to make network namespaces and veth pairs: run them as root, as CI does');
  if (!swept) { sweep(); swept = true; }
  const pid = process.pid;
  const name = `${PREFIX}${pid}-${i}`;
  const hostIf = `ow${pid % 100000}h${i}`;
  const innerIf = `ow${pid % 100000}w${i}`;
  const net = `10.231.${(pid % 60) * 4 + i}`;
  const hostAddr = `${net}.1`;
  const innerAddr = `${net}.2`;
  ip(['netns', 'add', name]);
  try {
    ip(['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', innerIf]);
    ip(['link', 'set', innerIf, 'netns', name]);
    ip(['addr', 'add', `${hostAddr}/30`, 'dev', hostIf]);
    ip(['link', 'set', hostIf, 'up']);
    ip(['-n', name, 'addr', 'add', `${innerAddr}/30`, 'dev', innerIf]);
    ip(['-n', name, 'link', 'set', innerIf, 'up']);
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
  } catch (e) {
    spawnSync('ip', ['link', 'del', hostIf]);
    spawnSync('ip', ['netns', 'del', name]);
    throw e;
  }
  return {
    name, hostAddr, innerAddr,
    exec: ['ip', 'netns', 'exec', name],
    cut: () => ip(['link', 'set', hostIf, 'down']),
    restore: () => ip(['link', 'set', hostIf, 'up']),
    remove: () => {
      spawnSync('ip', ['link', 'del', hostIf]);
      spawnSync('ip', ['netns', 'del', name]);
    },
  };
}

/** Run a command inside the namespace and return its stdout (throws on failure). */
export function inNetns(ns: Netns, cmd: string, args: string[]): string {
  return execFileSync(ns.exec[0]!, [...ns.exec.slice(1), cmd, ...args], { encoding: 'utf8' });
}

export interface Relay {
  port: number;
  /** Sockets open through it now (both directions count once). */
  open(): number;
  close(): Promise<void>;
}

/** A TCP relay on `host` (a free port) to 127.0.0.1:`targetPort`: what a namespace reaches. */
export async function relay(host: string, targetPort: number, port = 0): Promise<Relay> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inner) => {
    const outer = createConnection({ host: '127.0.0.1', port: targetPort });
    sockets.add(inner);
    sockets.add(outer);
    const end = (): void => { inner.destroy(); outer.destroy(); sockets.delete(inner); sockets.delete(outer); };
    inner.on('error', end).on('close', end);
    outer.on('error', end).on('close', end);
    inner.pipe(outer);
    outer.pipe(inner);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('relay has no port');
  return {
    port: addr.port,
    open: () => sockets.size / 2,
    close: () => new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}

/** `url` (on 127.0.0.1) as seen from inside a namespace: the relay's address and port. */
export function throughRelay(url: string, ns: Netns, r: Relay): string {
  const u = new URL(url);
  u.hostname = ns.hostAddr;
  u.port = String(r.port);
  return u.toString();
}
