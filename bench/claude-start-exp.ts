// Experiments for docs/performance-claude-start.md: spawn → first /v1/messages request of the real
// claude CLI (stream-json input, as an Overseer child runs it), bare vs with a trivial HTTP MCP
// server, under candidate settings. Also: does the first request carry the server's alwaysLoad
// tools, and does a step-0 call of one work?
// Run: node --import tsx bench/claude-start-exp.ts [rounds]
import http from 'node:http';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startFakeAnthropic, promptOf } from '../src/testing/fakeAnthropic.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { out, removeDir, stats, tempDir, f1 } from './common.js';
import { debugFigures } from './claudeDebug.js';

const TOOLS = [
  { name: 'finish', description: 'Finish.', inputSchema: { type: 'object', properties: { summary: { type: 'string' } } }, _meta: { 'anthropic/alwaysLoad': true } },
  { name: 'report_status', description: 'Report.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, _meta: { 'anthropic/alwaysLoad': true } },
  { name: 'check_permission', description: 'Permission.', inputSchema: { type: 'object', properties: { tool_name: { type: 'string' }, input: { type: 'object' } } } },
  { name: 'other', description: 'Other.', inputSchema: { type: 'object', properties: {} } },
];

/** A trivial Streamable-HTTP MCP server (JSON answers); `delayMs` before answering initialize. */
async function trivialMcp(delayMs: number): Promise<{ url: string; close(): Promise<void>; log: { at: number; method: string }[] }> {
  const log: { at: number; method: string }[] = [];
  const srv = http.createServer((req, res) => {
    if (req.method !== 'POST') { res.writeHead(405).end(); return; }
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      const m = JSON.parse(b);
      log.push({ at: Date.now(), method: m.method });
      if (m.id === undefined) { res.writeHead(202).end(); return; }
      const send = (result: unknown): void => { res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result })); };
      if (m.method === 'initialize') setTimeout(() => send({ protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'triv', version: '1' } }), delayMs);
      else if (m.method === 'tools/list') send({ tools: TOOLS });
      else if (m.method === 'tools/call') send({ content: [{ type: 'text', text: m.params.name === 'check_permission' ? JSON.stringify({ behavior: 'allow', updatedInput: m.params.arguments.input }) : `ok ${m.params.name}` }] });
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } })); // server/discover: as the hub answers it
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/mcp`, log, close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }) };
}

interface Variant { name: string; mcp: boolean; ppt?: boolean; serverAlwaysLoad?: boolean; env?: Record<string, string>; sharedHome?: boolean; auth?: 'fixed' | 'per-run' | 'placeholder' }

const variants: Variant[] = [
  { name: 'bare', mcp: false },
  { name: 'mcp', mcp: true },
  { name: 'mcp WAIT_MS=0', mcp: true, env: { CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '0' } },
  { name: 'mcp+ppt', mcp: true, ppt: true },
  { name: 'mcp+ppt WAIT_MS=0', mcp: true, ppt: true, env: { CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '0' } },
  { name: 'mcp+ppt NEGOTIATION=legacy', mcp: true, ppt: true, env: { MCP_PROTOCOL_NEGOTIATION: 'legacy' } },
  { name: 'mcp srvAlwaysLoad WAIT_MS=0', mcp: true, serverAlwaysLoad: true, env: { CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '0' } },
  { name: 'mcp NONBLOCKING=1 WAIT_MS=0', mcp: true, env: { CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '0', MCP_CONNECTION_NONBLOCKING: '1' } },
  { name: 'mcp DISCOVERY_CACHE shared HOME', mcp: true, sharedHome: true, env: { MCP_DISCOVERY_CACHE: '1' } },
  { name: 'mcp DISCOVERY_CACHE WAIT_MS=0 shared', mcp: true, sharedHome: true, env: { MCP_DISCOVERY_CACHE: '1', CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '0' } },
  { name: 'cache+ppt shared', mcp: true, ppt: true, sharedHome: true, env: { MCP_DISCOVERY_CACHE: '1' } },
  { name: 'cache+ppt token fixed', mcp: true, ppt: true, sharedHome: true, auth: 'fixed', env: { MCP_DISCOVERY_CACHE: '1' } },
  { name: 'cache+ppt token per run', mcp: true, ppt: true, sharedHome: true, auth: 'per-run', env: { MCP_DISCOVERY_CACHE: '1' } },
  { name: 'cache+ppt token ${VAR}', mcp: true, ppt: true, sharedHome: true, auth: 'placeholder', env: { MCP_DISCOVERY_CACHE: '1' } },
];

const only = process.env.VARIANTS?.split(',');
const rounds = Number(process.argv[2] ?? 3);
const searchOn = process.env.SEARCH === '1';
const initDelay = Number(process.env.INIT_DELAY_MS ?? 0);

const fake = await startFakeAnthropic({
  scripts: {
    start: (ctx) => (ctx.step === 0 && ctx.prompt.includes('callfinish') ? { tools: [{ name: 'mcp__triv__finish', input: { summary: 'x' } }] } : { text: 'done' }),
  },
});
const mcp = await trivialMcp(initDelay);
const work = await tempDir('cc-start');
const sharedHome = path.join(work, 'shared-home');
await mkdir(sharedHome);
const res = new Map<string, number[]>();
const connect = new Map<string, number[]>();
/** Per run: did the first request leave after the MCP initialize was answered? */
const held = new Map<string, string[]>();
const turn = new Map<string, number[]>();
const notes = new Map<string, string>();
const use = variants.filter((v) => !only || only.includes(v.name));
try {
  for (let n = 0; n <= rounds; n++) {
    for (const v of use) {
      const home = v.sharedHome ? path.join(sharedHome, v.name.replace(/\W+/g, '_')) : path.join(work, `h-${n}-${v.name.replace(/\W+/g, '_')}`);
      const cwd = path.join(work, `w-${n}-${v.name.replace(/\W+/g, '_')}`);
      await mkdir(home, { recursive: true });
      await mkdir(cwd, { recursive: true });
      const marker = `run-${n}-${v.name.replace(/\W+/g, '_')}`;
      const token = v.auth === 'fixed' ? 'tok-fixed' : `tok-${n}-${Math.random()}`;
      const auth = v.auth ? { headers: { Authorization: v.auth === 'placeholder' ? 'Bearer ${TOK}' : `Bearer ${token}` } } : {};
      const cfg = { mcpServers: { triv: { type: 'http', url: mcp.url, ...auth, ...(v.serverAlwaysLoad ? { alwaysLoad: true } : {}) } } };
      const args = ['-p', '--input-format', 'stream-json', '--output-format', 'stream-json', '--verbose', '--permission-mode', v.ppt ? 'default' : 'dontAsk', '--allowedTools', 'Write', 'mcp__triv__finish', 'mcp__triv__report_status'];
      if (v.mcp) args.push('--mcp-config', JSON.stringify(cfg), '--strict-mcp-config');
      if (v.ppt) args.push('--permission-prompt-tool', 'mcp__triv__check_permission');
      const dbg = path.join(work, `dbg-${marker}.log`);
      args.push('--debug-file', dbg);
      const env = claudeEnv({ home, baseUrl: fake.url, extra: { ...(searchOn ? { ENABLE_TOOL_SEARCH: 'true' } : {}), ...v.env, TOK: token } });
      const prompt = `@script:start ${marker} ${v.mcp ? 'callfinish' : ''}`;
      const t0 = Date.now();
      const run = await runClaude(args, { cwd, env, timeoutMs: 60_000, stdin: [JSON.stringify({ type: 'user', message: { role: 'user', content: prompt } })] });
      const reqs = fake.requests.filter((r) => promptOf(r.body).includes(marker));
      if (run.code !== 0 || !reqs.length) { out(`${v.name}: exit ${run.code} reqs ${reqs.length} ${run.stderr.slice(-300)}\n`); continue; }
      const tools = ((reqs[0]!.body.tools ?? []) as { name: string; defer_loading?: boolean }[]);
      const mcpTools = tools.filter((t) => t.name.startsWith('mcp__')).map((t) => `${t.name.replace('mcp__triv__', '')}${t.defer_loading ? '(deferred)' : ''}`);
      const step1 = reqs.find((r) => r.step === 1);
      const tr = step1 ? (/ok finish/.test(JSON.stringify(step1.body.messages)) ? 'ok' : JSON.stringify(step1.body.messages.at(-1)).slice(0, 200)) : 'no step 1';
      const init = mcp.log.find((e) => e.method === 'initialize' && e.at >= t0);
      if (v.mcp && init) (held.get(v.name) ?? held.set(v.name, []).get(v.name)!).push(reqs[0]!.at >= init.at + initDelay ? 'held' : 'not held');
      const d = debugFigures(await readFile(dbg, 'utf8').catch(() => ''));
      if (n > 0) { (connect.get(v.name) ?? connect.set(v.name, []).get(v.name)!).push(d.connectMs); (turn.get(v.name) ?? turn.set(v.name, []).get(v.name)!).push(d.turnMs); }
      notes.set(v.name, `first-request mcp tools: [${mcpTools.join(' ')}] ToolSearch:${tools.some((t) => t.name === 'ToolSearch')}; step-0 finish → ${tr}`);
      if (n === 0) continue;
      (res.get(v.name) ?? res.set(v.name, []).get(v.name)!).push(reqs[0]!.at - t0);
    }
  }
  out(`rounds ${rounds}, tool search ${searchOn ? 'on' : 'off'}, MCP initialize delay ${initDelay} ms\n`);
  const base = stats(res.get('bare') ?? [NaN]).p50;
  for (const v of use) {
    const s = stats(res.get(v.name) ?? [NaN]);
    out(`${v.name.padEnd(40)} first request p50 ${f1(s.p50)} ms (${(res.get(v.name) ?? []).join(',')}) ×${(s.p50 / base).toFixed(2)}; CLI start→turn p50 ${f1(stats(turn.get(v.name) ?? [NaN]).p50)} ms; MCP connect (CLI's figure) p50 ${f1(stats((connect.get(v.name) ?? []).filter((x) => !Number.isNaN(x)).concat([]).length ? (connect.get(v.name) ?? []).filter((x) => !Number.isNaN(x)) : [NaN]).p50)} ms\n   ${notes.get(v.name)}${held.has(v.name) ? `; first request after the MCP initialize answer: ${held.get(v.name)!.filter((x) => x === 'held').length}/${held.get(v.name)!.length} runs` : ''}\n`);
  }
} finally {
  await mcp.close();
  await fake.close();
  await removeDir(work);
}
