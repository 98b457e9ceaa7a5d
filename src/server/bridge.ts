// `overseer mcp` is a thin stdio ↔ HTTP bridge to the hub of its state directory (a process of
// its own, src/hubproc/). It survives the hub: when the hub dies every request in flight is
// answered at once with a JSON-RPC error saying so, and the next request (or, after a crash,
// at once) finds or starts a hub and re-initializes the upstream session by replaying the
// client's own initialize, so the client sees nothing but the failed calls.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../log.js';
import { processRunning as pidAlive } from '../hubfiles/pid.js';
import { readHubInfo, type HubInfo } from '../hubfiles/hubLock.js';
import { HubSession } from './upstream.js';

export interface BridgeOptions {
  stateDir: string;
  /** Find the running hub, or start one and wait for it (bounded; throws when none comes). */
  locate: () => Promise<HubInfo>;
  token: () => string;
  log: Logger;
  /** How often the hub's pid is checked (default 250 ms). */
  watchEveryMs?: number;
  stdin?: Readable;
  stdout?: Writable;
}

const HUB_LOST = -32000;
const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => 'method' in m && 'id' in m;

export async function runBridge(o: BridgeOptions): Promise<void> {
  const down = new StdioServerTransport(o.stdin, o.stdout);
  let session: HubSession | undefined;
  let connecting: Promise<HubSession> | undefined;
  let init: JSONRPCRequest | undefined;
  let clientInitialized = false;
  let replays = 0;
  let closed = false;
  const pending = new Set<RequestId>();

  const send = (m: JSONRPCMessage): void => { void down.send(m).catch((err: unknown) => o.log.error({ err }, 'bridge: stdout send failed')); };
  const fail = (id: RequestId, message: string, code = HUB_LOST): void => {
    if (pending.delete(id)) send({ jsonrpc: '2.0', id, error: { code, message } });
  };

  /** The hub of this session went away: answer everything in flight, and restart it at once after a crash. */
  const lost = (s: HubSession, why: string): void => {
    if (session !== s || s.closed) return;
    session = undefined;
    void s.close();
    const calls = [...pending]; // what was in flight on this hub; later calls go to the next one
    void (async () => {
      // A killed process closes its sockets a moment before it is gone: give it that moment.
      for (let i = 0; i < 10 && pidAlive(s.info.pid); i++) await new Promise((r) => setTimeout(r, 30));
      const dead = !pidAlive(s.info.pid);
      const crashed = dead && readHubInfo(o.stateDir)?.pid === s.info.pid;
      const what = crashed ? 'died (killed or crashed)' : dead ? 'stopped (overseer stop or idle exit)' : why;
      o.log.warn({ hub: s.info.pid, why, crashed }, 'bridge: lost the hub');
      for (const id of calls) {
        fail(id, `the overseer hub (pid ${s.info.pid}) ${what}; this call was lost with it. The next call starts or finds a hub again; agents that were running are reconciled by it (interrupted or requeued): check list_agents, then retry.`);
      }
      if (crashed && !closed) await connect().catch((err: unknown) => o.log.error({ err }, 'bridge: restarting the hub failed'));
    })();
  };

  const connect = (): Promise<HubSession> => {
    connecting ??= (async () => {
      const info = await o.locate();
      const s: HubSession = new HubSession(info, o.token(), send, (why) => lost(s, why));
      await s.initialize({ ...init!, id: `overseer-bridge-init-${++replays}` }, clientInitialized);
      if (closed) await s.close(true);
      session = s;
      o.log.info({ hub: info.pid, url: info.url, replay: replays }, 'bridge: connected to the hub');
      return s;
    })().finally(() => { connecting = undefined; });
    return connecting;
  };

  const forward = async (m: JSONRPCMessage): Promise<void> => {
    const id = isRequest(m) ? m.id : undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      let s: HubSession;
      try {
        s = session ?? (await connect());
      } catch (err) {
        if (id !== undefined) fail(id, `cannot reach the overseer hub: ${(err as Error).message}`);
        return;
      }
      try {
        const r = await s.post(m);
        if (r.kind === 'gone') {
          // The hub closed this session (idle timeout or restart): open a new one and retry once.
          if (session === s) session = undefined;
          void s.close();
          continue;
        }
        if (id === undefined) return;
        if (r.kind === 'refused') return fail(id, r.message, -32603);
        if (!r.answered) {
          if (!pidAlive(s.info.pid)) return lost(s, 'exited');
          return fail(id, 'the overseer hub closed the call without answering it (was it stopping?); retry the call');
        }
        pending.delete(id);
        return;
      } catch (err) {
        if (s.closed) return; // lost() answers it
        if (session === s) return lost(s, `connection failed (${(err as Error).message})`); // answers it too
        if (id !== undefined) fail(id, `the connection to the overseer hub failed: ${(err as Error).message}; retry the call`);
        return;
      }
    }
    if (id !== undefined) fail(id, 'the overseer hub keeps closing the session; run overseer doctor');
  };

  down.onmessage = (m) => {
    if (isRequest(m)) pending.add(m.id);
    if (isRequest(m) && m.method === 'initialize') {
      init = m;
      void (session ? Promise.resolve(session) : connect()).then(
        (s) => { if (pending.delete(m.id)) send({ jsonrpc: '2.0', id: m.id, result: s.initResult as Record<string, unknown> }); },
        (err: unknown) => fail(m.id, `cannot start or reach the overseer hub: ${(err as Error).message}`),
      );
      return;
    }
    if (!init) {
      if (isRequest(m)) fail(m.id, 'Method not found', -32601);
      return;
    }
    if ('method' in m && m.method === 'notifications/initialized') clientInitialized = true;
    void forward(m).catch((err: unknown) => o.log.error({ err }, 'bridge: forwarding failed'));
  };

  const watch = setInterval(() => {
    if (session && !pidAlive(session.info.pid)) lost(session, 'exited');
  }, o.watchEveryMs ?? 250);
  watch.unref();

  let finished!: () => void;
  const done = new Promise<void>((r) => { finished = r; });
  const close = async (why: string): Promise<void> => {
    if (closed) return;
    closed = true;
    clearInterval(watch);
    o.log.info({ why }, 'bridge closing');
    await Promise.allSettled([session?.close(true), down.close()]);
    finished();
  };
  down.onclose = () => void close('stdio closed');
  await down.start();
  (o.stdin ?? process.stdin).once('end', () => void close('stdin ended'));
  await done;
}
