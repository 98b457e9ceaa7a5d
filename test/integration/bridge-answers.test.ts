// `overseer mcp` answers initialize and the start-up lists (tools, prompts, resources, resource
// templates) from dist/server/lead-answers.json, before it has reached the hub (Claude Code
// holds its first model request until they are answered). (1) The file is what a real hub
// process answers the lead over HTTP. (2) The built bridge answers them while the hub it started
// is held before it can serve (test/fixtures/hold-serve.mjs), then reaches that hub for a tool
// call. (3) A hub that answers differently (a tool missing from the build's list: an older
// hub, a configuration that removes tools; the project's notes) gets the list announced with
// notifications/<kind>/list_changed before anything else, and the client's next fetch is the
// hub's. Needs `npm run build` first.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { MAIN as CLI, REPO_ROOT } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/claude.js';
import { alive, eventually } from '../helpers/wait.js';
import { runBridge } from '../../src/server/bridge.js';
import { readLeadAnswers, START_LISTS, type LeadAnswers } from '../../src/server/bridgeLocal.js';
import { readHubInfo, type HubInfo } from '../../src/hubfiles/hubLock.js';
import { processRunning } from '../../src/hubfiles/pid.js';
import { silentLogger } from '../../src/log.js';

const ANSWERS_FILE = join(REPO_ROOT, 'dist', 'server', 'lead-answers.json');
const INIT = { protocolVersion: '2025-11-25', capabilities: { roots: { listChanged: true } }, clientInfo: { name: 'bridge-answers-test', version: '1' } };
type Msg = { id?: string | number; method?: string; result?: any; error?: any; params?: any };

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('OVERSEER_') && !k.startsWith('CLAUDE') && k !== 'NODE_OPTIONS') env[k] = v;
  return { ...env, ...extra };
}

/** A JSON-RPC peer on a pair of streams: every message kept, requests awaited by id. */
function peer(input: NodeJS.ReadableStream, output: NodeJS.WritableStream) {
  const got: Msg[] = [];
  const waiters: (() => void)[] = [];
  let buf = '';
  input.setEncoding?.('utf8');
  input.on('data', (d: string | Buffer) => {
    buf += d.toString();
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      got.push(JSON.parse(buf.slice(0, nl)) as Msg);
      buf = buf.slice(nl + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  const wait = (what: string, pred: (m: Msg) => boolean, ms = 30_000): Promise<Msg> => new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms; got ${JSON.stringify(got).slice(0, 2000)}`)), ms);
    const check = (): void => {
      const m = got.find(pred);
      if (m) { clearTimeout(t); resolve(m); } else waiters.push(check);
    };
    check();
  });
  let next = 0;
  return {
    got,
    wait,
    notify: (method: string): void => void output.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`),
    async request(method: string, params?: unknown, ms?: number): Promise<Msg> {
      const id = `t${++next}`;
      output.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) })}\n`);
      return wait(`answer to ${method}`, (m) => m.id === id && !m.method, ms);
    },
  };
}

/** A real hub process (`overseer serve`, foreground) for `state`, once it answers. */
async function startHub(state: string, cwd: string): Promise<{ proc: ChildProcess; info: HubInfo; token: string }> {
  const proc = spawn(process.execPath, [CLI, 'serve'], { cwd, env: cleanEnv({ OVERSEER_HOME: state, HOME: join(state, '..', 'home') }), detached: true, stdio: 'ignore' });
  const info = await eventually('the hub to publish hub.json', () => { const i = readHubInfo(state); return i?.pid === proc.pid ? i : undefined; }, 30_000);
  return { proc, info, token: readFileSync(join(state, 'lead.token'), 'utf8').trim() };
}

/** JSON-RPC over the hub's Streamable HTTP with the lead token (one session). */
function hubClient(info: HubInfo, token: string) {
  let session: string | undefined;
  let next = 0;
  return async (method: string, params?: unknown, notification = false): Promise<Msg | undefined> => {
    const res = await fetch(info.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': INIT.protocolVersion } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', ...(notification ? {} : { id: ++next }), method, ...(params ? { params } : {}) }),
    });
    session ??= res.headers.get('mcp-session-id') ?? undefined;
    const text = await res.text();
    if (notification) return undefined;
    assert.equal(res.status, 200, text);
    const data = (res.headers.get('content-type') ?? '').includes('text/event-stream') ? text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('') : text;
    return JSON.parse(data) as Msg;
  };
}

describe('overseer mcp answers the start-up requests itself', { timeout: 120_000 }, () => {
  let dir: string;
  let answers: LeadAnswers;
  const hubs: ChildProcess[] = [];

  before(async () => {
    assert.ok(existsSync(ANSWERS_FILE), `${ANSWERS_FILE} is missing: run npm run build first`);
    answers = readLeadAnswers(ANSWERS_FILE)!;
    dir = await makeTempDir('ovs-bridge-answers');
    mkdirSync(join(dir, 'project'));
  });
  after(async () => {
    for (const h of hubs) if (h.pid && alive(h.pid)) process.kill(h.pid, 'SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  test('lead-answers.json is what a real hub answers the lead', async () => {
    const state = join(dir, 'state-compare');
    const hub = await startHub(state, join(dir, 'project'));
    hubs.push(hub.proc);
    const call = hubClient(hub.info, hub.token);
    const init = await call('initialize', INIT);
    assert.deepEqual(init?.result, { protocolVersion: INIT.protocolVersion, ...answers.initialize });
    const old = await hubClient(hub.info, hub.token)('initialize', { ...INIT, protocolVersion: '2024-11-05' });
    assert.equal(old?.result.protocolVersion, '2024-11-05', 'an older protocol version is negotiated as the hub does');
    await call('notifications/initialized', undefined, true);
    for (const list of START_LISTS) assert.deepEqual((await call(list))?.result, answers.lists[list], `${list} differs from the build's answer: run npm run build`);
  });

  test('the built bridge answers before the hub it started can serve, then reaches it', async () => {
    const state = join(dir, 'state-held');
    const gate = join(dir, 'gate');
    const env = cleanEnv({ OVERSEER_HOME: state, HOME: join(dir, 'home'), HOLD_SERVE_UNTIL: gate, NODE_OPTIONS: `--import ${join(REPO_ROOT, 'test', 'fixtures', 'hold-serve.mjs')}` });
    // A project template is a prompt too: the bridge lists it by the hub's own code.
    mkdirSync(join(state, 'templates'), { recursive: true });
    writeFileSync(join(state, 'templates', 'bugfix.md'), '---\ndescription: Fix a bug with a test\n---\nWrite the failing test first.\n');
    const bridge = spawn(process.execPath, [CLI, 'mcp'], { cwd: join(dir, 'project'), env, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise((r) => bridge.once('exit', r));
    try {
      const c = peer(bridge.stdout!, bridge.stdin!);
      const discover = await c.request('server/discover', {});
      assert.equal(discover.error?.code, -32601, 'before initialize: Method not found, as the hub answers');
      const init = await c.request('initialize', INIT);
      assert.deepEqual(init.result, { protocolVersion: INIT.protocolVersion, ...answers.initialize });
      c.notify('notifications/initialized');
      for (const list of START_LISTS.filter((l) => l !== 'prompts/list')) assert.deepEqual((await c.request(list)).result, answers.lists[list], list);
      const prompts = (await c.request('prompts/list')).result as { prompts: { name: string }[] };
      assert.deepEqual(prompts.prompts.map((p) => p.name), [...(answers.lists['prompts/list'].prompts as { name: string }[]).map((p) => p.name), 'template-bugfix']);
      assert.deepEqual((await c.request('ping')).result, {});
      const bad = await c.request('initialize', { capabilities: {} });
      assert.equal(bad.error?.code, -32602, 'an initialize without protocolVersion is refused as the hub refuses it');
      // The hub was started behind the answers, and is held: nothing came from it.
      const held = Number(await eventually('the bridge to start the hub', () => existsSync(`${gate}.waiting`) && readFileSync(`${gate}.waiting`, 'utf8'), 30_000));
      assert.ok(alive(held), 'the started hub is still held');
      assert.equal(readHubInfo(state), undefined, 'no hub has published hub.json yet');
      // A tool call waits for the hub, and is answered by it once it serves.
      const call = c.request('tools/call', { name: 'list_agents', arguments: {} }, 60_000);
      writeFileSync(gate, '');
      const r = await call;
      assert.equal(r.result?.isError, undefined, JSON.stringify(r));
      assert.deepEqual(JSON.parse(r.result.content[0].text).agents, []);
      assert.equal(readHubInfo(state)?.pid, held, 'the hub the bridge started answered');
      assert.deepEqual((await c.request('prompts/list')).result, prompts, 'the hub lists the prompts as the bridge did');
      assert.deepEqual(c.got.filter((m) => m.method?.endsWith('list_changed')), [], 'the hub answers as the build: nothing to announce');
      hubs.push({ pid: held } as ChildProcess);
    } finally {
      bridge.stdin!.end();
      await exited;
    }
  });

  test('a configuration that does not load: the start-up answers still come, a tool call gets an error naming the setting', async () => {
    const env = cleanEnv({ OVERSEER_HOME: join(dir, 'state-bad'), HOME: join(dir, 'home'), OVERSEER_LOG_LEVEL: 'loud' });
    const bridge = spawn(process.execPath, [CLI, 'mcp'], { cwd: join(dir, 'project'), env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    bridge.stderr!.on('data', (d: Buffer) => { stderr += d.toString('utf8'); });
    const exited = new Promise((r) => bridge.once('exit', r));
    try {
      const c = peer(bridge.stdout!, bridge.stdin!);
      assert.deepEqual((await c.request('initialize', INIT)).result, { protocolVersion: INIT.protocolVersion, ...answers.initialize });
      c.notify('notifications/initialized');
      const r = await c.request('tools/call', { name: 'list_agents', arguments: {} });
      assert.match(r.error?.message ?? '', /OVERSEER_LOG_LEVEL.*"loud"/, JSON.stringify(r));
      await eventually('the reason on stderr', () => /overseer mcp: cannot reach the hub: Invalid configuration/.test(stderr), 10_000);
      assert.ok(!existsSync(join(dir, 'state-bad', 'hub.json')), 'no hub was started');
    } finally {
      bridge.stdin!.end();
      await exited;
    }
  });

  test('lists the hub answers differently are announced, and the next fetch is the hub\'s', async () => {
    const state = join(dir, 'state-differs');
    const hub = await startHub(state, join(dir, 'project'));
    hubs.push(hub.proc);
    // The project has a note: the hub's resources/list is not the build's empty one.
    const direct = hubClient(hub.info, hub.token);
    await direct('initialize', INIT);
    await direct('notifications/initialized', undefined, true);
    const wrote = await direct('tools/call', { name: 'write_note', arguments: { key: 'plan', value: 'ship it' } });
    assert.notEqual(wrote?.result?.isError, true, JSON.stringify(wrote));
    // This build knows one tool less than the hub (as an older bridge of a newer hub would).
    const tools = answers.lists['tools/list'].tools as { name: string }[];
    const older: LeadAnswers = { ...answers, lists: { ...answers.lists, 'tools/list': { tools: tools.filter((t) => t.name !== 'list_agents') } } };

    const toBridge = new PassThrough();
    const fromBridge = new PassThrough();
    const done = runBridge({
      answers: older,
      projectPrompts: () => undefined,
      reachAfterMs: 10,
      announceEveryMs: 5_000,
      stdin: toBridge,
      stdout: fromBridge,
      hubSide: async () => ({
        stateDir: state, log: silentLogger, token: () => hub.token, readHubInfo, pidAlive: processRunning,
        locate: async () => readHubInfo(state)!,
      }),
    });
    try {
      const c = peer(fromBridge, toBridge);
      await c.request('initialize', INIT);
      c.notify('notifications/initialized');
      const first = await c.request('tools/list');
      assert.ok(!first.result.tools.some((t: { name: string }) => t.name === 'list_agents'), 'the start-up answer is the build\'s');
      assert.deepEqual((await c.request('resources/list')).result, { resources: [] });
      assert.deepEqual((await c.request('prompts/list')).result, answers.lists['prompts/list']);
      await c.wait('tools/list_changed', (m) => m.method === 'notifications/tools/list_changed');
      await c.wait('resources/list_changed', (m) => m.method === 'notifications/resources/list_changed');
      const again = await c.request('tools/list');
      assert.deepEqual(again.result, answers.lists['tools/list'], 'the hub\'s own list, with list_agents');
      const resources = await c.request('resources/list');
      assert.ok(resources.result.resources.some((r: { uri: string }) => r.uri === 'overseer://notes/plan'), JSON.stringify(resources.result));
      assert.deepEqual(c.got.filter((m) => m.method === 'notifications/prompts/list_changed'), [], 'the prompts were the hub\'s: not announced');
      // Answered the same way once reached, the lists are forwarded: no further announcement.
      const ok = await c.request('tools/call', { name: 'list_agents', arguments: {} });
      assert.notEqual(ok.result?.isError, true, JSON.stringify(ok));
    } finally {
      toBridge.end();
      await done;
    }
  });
});
