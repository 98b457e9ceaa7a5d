// `overseer mcp` is a thin stdio ↔ HTTP bridge to the hub of its state directory (a process of
// its own, src/hubproc/). It answers `initialize` and the start-up lists (tools, prompts,
// resources) at once from what it knows of its own build (bridgeLocal.ts), because Claude Code
// holds its first model request until they are answered, and reaches or starts the hub behind
// them; every other request waits for the hub and is forwarded. Once the hub is reached it is
// asked the same lists, and a list that differs from what was answered (an older hub still
// running, a configuration that removes tools, the project's jobs and notes) is announced with
// notifications/<kind>/list_changed until the client fetches it again (docs/decisions.md).
// It survives the hub: when the hub dies every request in flight is answered at once with a
// JSON-RPC error saying so, and the next request (or, after a crash, at once) finds or starts a
// hub and re-initializes the upstream session by replaying the client's own initialize, so
// the client sees nothing but the failed calls.
import type { JSONRPCMessage, JSONRPCRequest, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from '../log.js';
import type { HubInfo } from '../hubfiles/hubLock.js';
import { HubSession } from './upstream.js';
import { answerInitialize, lineStdio, START_LISTS, type LeadAnswers, type StartList } from './bridgeLocal.js';

/** What reaching the hub needs: loaded after the first answers are out (config, logger, hub discovery). */
export interface HubSide {
  stateDir: string;
  log: Logger;
  /** Find the running hub, or start one and wait for it (bounded; throws when none comes). */
  locate: () => Promise<HubInfo>;
  token: () => string;
  readHubInfo: (stateDir: string) => HubInfo | undefined;
  pidAlive: (pid: number) => boolean;
}

export interface BridgeOptions {
  /** The build's answers (undefined: none, every request waits for the hub). */
  answers: LeadAnswers | undefined;
  hubSide: () => Promise<HubSide>;
  /** prompts/list as the hub answers it now when the project may have templates (the hub's own
   * code, loaded for it); undefined when it has none: the build's recipes are the whole list. */
  projectPrompts: () => Promise<Record<string, unknown>> | undefined;
  /** How often the hub's pid is checked (default 250 ms). */
  watchEveryMs?: number;
  /** How long after the last start-up request the hub is reached when nothing needs it sooner
   * (default 300 ms): the client's start-up has the CPU first (docs/decisions.md). */
  reachAfterMs?: number;
  /** First wait for the client to fetch an announced list again (doubles, 5 tries; default 150 ms). */
  announceEveryMs?: number;
  stdin?: Readable;
  stdout?: Writable;
}

const HUB_LOST = -32000;
const isRequest = (m: JSONRPCMessage): m is JSONRPCRequest => 'method' in m && 'id' in m;
const isStartList = (method: string): method is StartList => (START_LISTS as readonly string[]).includes(method);
const kindOf = (list: StartList): string => list.slice(0, list.lastIndexOf('/')); // tools, prompts, resources, resources/templates

export async function runBridge(o: BridgeOptions): Promise<void> {
  let session: HubSession | undefined;
  let connecting: Promise<HubSession> | undefined;
  let init: JSONRPCRequest | undefined;
  let clientInitialized = false;
  let replays = 0;
  let checks = 0;
  let closed = false;
  const pending = new Set<RequestId>();
  /** Lists answered from the build, with the answer given: checked against the hub once it is reached. */
  const given = new Map<StartList, unknown>();
  /** Announced lists waiting for the client to fetch them again. */
  const refetched = new Map<StartList, () => void>();

  let sideP: Promise<HubSide> | undefined;
  // A configuration that does not load is told on stderr (Claude Code keeps a server's stderr in
  // its MCP logs) and in the error of every request that needs the hub.
  const side = (): Promise<HubSide> => (sideP ??= o.hubSide().catch((err: unknown) => {
    process.stderr.write(`overseer mcp: cannot reach the hub: ${(err as Error).message}\n`);
    throw err;
  }));
  const log = (level: 'info' | 'warn' | 'error', obj: object, msg: string): void => void side().then((s) => s.log[level](obj, msg), () => undefined);

  const down = lineStdio({
    stdin: o.stdin ?? process.stdin,
    stdout: o.stdout ?? process.stdout,
    onMessage: (m) => receive(m),
    onBadLine: (line, err) => log('warn', { line: line.slice(0, 200), err: err.message }, 'bridge: dropped a line on stdin that is not JSON-RPC'),
    onEnd: () => void close('stdin ended'),
  });
  const send = (m: JSONRPCMessage): void => down.send(m);
  const fail = (id: RequestId, message: string, code = HUB_LOST): void => {
    if (pending.delete(id)) send({ jsonrpc: '2.0', id, error: { code, message } });
  };

  /** The hub of this session went away: answer everything in flight, and restart it at once after a crash. */
  const lost = (s: HubSession, h: HubSide, why: string): void => {
    if (session !== s || s.closed) return;
    session = undefined;
    void s.close();
    const calls = [...pending]; // what was in flight on this hub; later calls go to the next one
    void (async () => {
      // A killed process closes its sockets a moment before it is gone: give it that moment.
      for (let i = 0; i < 10 && h.pidAlive(s.info.pid); i++) await new Promise((r) => setTimeout(r, 30));
      const dead = !h.pidAlive(s.info.pid);
      const crashed = dead && h.readHubInfo(h.stateDir)?.pid === s.info.pid;
      const what = crashed ? 'died (killed or crashed)' : dead ? 'stopped (overseer stop or idle exit)' : why;
      h.log.warn({ hub: s.info.pid, why, crashed }, 'bridge: lost the hub');
      for (const id of calls) {
        fail(id, `the overseer hub (pid ${s.info.pid}) ${what}; this call was lost with it. The next call starts or finds a hub again; agents that were running are reconciled by it (interrupted or requeued): check list_agents, then retry.`);
      }
      if (crashed && !closed) await connect().catch((err: unknown) => h.log.error({ err }, 'bridge: restarting the hub failed'));
    })();
  };

  const connect = (): Promise<HubSession> => {
    connecting ??= (async () => {
      const h = await side();
      const info = await h.locate();
      const s: HubSession = new HubSession(info, h.token(), send, (why) => lost(s, h, why));
      const withInitialized = clientInitialized;
      await s.initialize({ ...init!, id: `overseer-bridge-init-${++replays}` }, withInitialized);
      // The client's notifications/initialized came while the session was being opened.
      if (clientInitialized && !withInitialized) await s.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
      if (closed) await s.close(true);
      const differ = await check(s, h).catch((err: unknown) => {
        if (!s.closed) h.log.warn({ err }, 'bridge: comparing the start-up answers with the hub failed');
        return [];
      });
      session = s;
      h.log.info({ hub: info.pid, url: info.url, replay: replays }, 'bridge: connected to the hub');
      // Announced before any forwarded answer, and once the session is up (the client's next fetch is forwarded).
      for (const list of differ) void announce(list);
      return s;
    })().finally(() => { connecting = undefined; });
    return connecting;
  };

  /** Reach the hub once the client's start-up burst is over (each start-up request pushes it back). */
  let reachTimer: NodeJS.Timeout | undefined;
  const reachSoon = (): void => {
    clearTimeout(reachTimer);
    reachTimer = setTimeout(() => {
      if (!session && !closed) void connect().catch((err: unknown) => log('error', { err }, 'bridge: cannot start or reach the overseer hub'));
    }, o.reachAfterMs ?? 300);
  };

  /** Ask the hub what was answered from the build: the lists that differ. */
  const check = async (s: HubSession, h: HubSide): Promise<StartList[]> => {
    const differ: StartList[] = [];
    const ours = s.initResult as Record<string, unknown>;
    const local = o.answers && init ? answerInitialize(o.answers, init.params) : undefined;
    if (local && 'result' in local && JSON.stringify(ours) !== JSON.stringify(local.result)) {
      h.log.warn({ hub: ours, answered: local.result }, 'bridge: the hub answers initialize differently from this build (an older hub still running?); its tools are announced if they differ');
    }
    for (let next = given.entries().next(); !next.done; next = given.entries().next()) {
      const [list, answered] = next.value;
      given.delete(list);
      const id = `overseer-bridge-check-${++checks}`;
      let theirs: unknown;
      const r = await s.post({ jsonrpc: '2.0', id, method: list }, (m) => {
        if ('id' in m && m.id === id && !('method' in m)) theirs = 'result' in m ? m.result : { error: m.error };
        else send(m);
      });
      if (r.kind !== 'ok' || theirs === undefined) continue; // the session went away: the next session's lists are forwarded
      if (JSON.stringify(theirs) === JSON.stringify(answered)) continue;
      h.log.info({ list }, 'bridge: the hub lists differently from the start-up answer: announcing it');
      differ.push(list);
    }
    return differ;
  };

  /** notifications/<kind>/list_changed until the client fetches the list again: Claude Code
   * drops one that comes before it has finished its own start-up (measured). */
  const announce = async (list: StartList): Promise<void> => {
    let wait = o.announceEveryMs ?? 150;
    for (let i = 0; i < 5 && !closed; i++, wait *= 2) {
      const asked = new Promise<boolean>((r) => {
        const t = setTimeout(() => r(false), wait);
        refetched.set(list, () => { clearTimeout(t); r(true); });
      });
      send({ jsonrpc: '2.0', method: `notifications/${kindOf(list)}/list_changed` });
      if (await asked) break;
    }
    refetched.delete(list);
  };

  /** A start-up list before the hub is reached: the build's answer (prompts: with the project's templates). */
  const answerList = async (m: JSONRPCRequest & { method: StartList }): Promise<void> => {
    let result = o.answers!.lists[m.method];
    const prompts = m.method === 'prompts/list' ? o.projectPrompts() : undefined;
    if (prompts) result = await prompts;
    if (session) return forward(m); // reached meanwhile: the hub's own answer
    given.set(m.method, result);
    if (pending.delete(m.id)) send({ jsonrpc: '2.0', id: m.id, result });
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
      const h = await side();
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
          if (!h.pidAlive(s.info.pid)) return lost(s, h, 'exited');
          return fail(id, 'the overseer hub closed the call without answering it (was it stopping?); retry the call');
        }
        pending.delete(id);
        return;
      } catch (err) {
        if (s.closed) return; // lost() answers it
        if (session === s) return lost(s, h, `connection failed (${(err as Error).message})`); // answers it too
        if (id !== undefined) fail(id, `the connection to the overseer hub failed: ${(err as Error).message}; retry the call`);
        return;
      }
    }
    if (id !== undefined) fail(id, 'the overseer hub keeps closing the session; run overseer doctor');
  };

  const receive = (m: JSONRPCMessage): void => {
    if (isRequest(m)) pending.add(m.id);
    if (isRequest(m) && m.method === 'initialize') {
      if (o.answers) {
        const a = answerInitialize(o.answers, m.params);
        if ('result' in a) init = m;
        if (pending.delete(m.id)) send({ jsonrpc: '2.0', id: m.id, ...a });
        if ('result' in a && !session) reachSoon();
        return;
      }
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
    if ('method' in m && m.method === 'notifications/initialized') {
      // Replayed by connect() for the session it opens (each hub session is initialized by it).
      const first = !clientInitialized;
      clientInitialized = true;
      if (!first || !session) return;
    }
    if (isRequest(m) && m.method === 'ping') return void (pending.delete(m.id) && send({ jsonrpc: '2.0', id: m.id, result: {} }));
    if (isRequest(m) && isStartList(m.method)) {
      refetched.get(m.method)?.();
      if (o.answers && !session) {
        if (!connecting) reachSoon();
        return void answerList(m as JSONRPCRequest & { method: StartList }).catch((err: unknown) => fail(m.id, `bridge: ${(err as Error).message}`, -32603));
      }
    }
    void forward(m).catch((err: unknown) => log('error', { err }, 'bridge: forwarding failed'));
  };

  const watch = setInterval(() => {
    if (!session || !sideP) return;
    const s = session;
    void sideP.then((h) => { if (!h.pidAlive(s.info.pid)) lost(s, h, 'exited'); });
  }, o.watchEveryMs ?? 250);
  watch.unref();

  let finished!: () => void;
  const done = new Promise<void>((r) => { finished = r; });
  const close = async (why: string): Promise<void> => {
    if (closed) return;
    closed = true;
    clearInterval(watch);
    clearTimeout(reachTimer);
    log('info', { why }, 'bridge closing');
    await session?.close(true).catch(() => undefined);
    finished();
  };
  await done;
}
