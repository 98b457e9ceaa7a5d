// The floor under an Overseer claude child (docs/performance-claude-start.md): what ANY HTTP MCP
// server plus an HTTP lock hook costs a bare `claude -p`, next to the Overseer child, all the REAL
// claude CLI against one scripted fake Anthropic API, interleaved rounds, medians:
//   bare:  claude -p "<prompt>" --output-format stream-json --verbose --permission-mode dontAsk --allowedTools Write
//   floor: the same + a trivial node:http server (a few lines: MCP initialize/tools/list/tools/call
//          with Overseer's alwaysLoad tools, and a PreToolUse HTTP hook answering allow) wired the
//          way the child launcher wires the hub: --mcp-config (http), --permission-prompt-tool,
//          the hook in --settings, permission mode default, --include-partial-messages
//   argv:  the Overseer child's own command line (ClaudeLauncher.build: stream-json input, the
//          child preamble, the same hook settings) pointed at the trivial server instead of the hub
//   child: an Overseer child (in-process hub of test/helpers/hub.ts), spawn_agent → wait_for_agents
// Two figures per side: the wall time of a run that writes one file (spawn → exit, or the spawn
// call → the wait's return for the child), and the median gap between consecutive requests of a
// run that writes 10 files one Write a turn (per-edit).
// Run alone: node --import tsx bench/claude-floor.ts [rounds]
import http from 'node:http';
import { mkdir, readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { ClaudeLauncher, hookSettings } from '../src/launch/claude/launcher.js';
import { claudeBin } from '../test/helpers/claude.js';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startFakeAnthropic, promptOf, type FakeAnthropic, type Script } from '../src/testing/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { f1, f2, out, removeDir, runAlone, stats, tempDir, type Stats } from './common.js';
import { TIMEOUT_MS } from './vsBare.js';

const WRITES = 10;
const SIDES = ['bare', 'floor', 'argv', 'child'] as const;
type SideName = (typeof SIDES)[number];

/** Writes <dir>/w-<k>.txt at step k while k < n (n from the prompt: "write <n> files into <dir>"), then a text turn. */
const writes: Script = (ctx) => {
  const m = /write (\d+) files into (\S+)/.exec(ctx.prompt);
  if (m && ctx.step < Number(m[1])) return { tools: [{ name: 'Write', input: { file_path: path.join(m[2]!, `w-${ctx.step}.txt`), content: `edit ${ctx.step}\n` } }] };
  return { text: 'done' };
};

const TRIVIAL_TOOLS = [
  { name: 'finish', description: 'Finish.', inputSchema: { type: 'object', properties: { result: { type: 'string' } } }, _meta: { 'anthropic/alwaysLoad': true } },
  { name: 'report_status', description: 'Report.', inputSchema: { type: 'object', properties: { message: { type: 'string' } } }, _meta: { 'anthropic/alwaysLoad': true } },
  { name: 'check_permission', description: 'Permission.', inputSchema: { type: 'object', properties: { tool_name: { type: 'string' }, input: { type: 'object' } } } },
];

/** A trivial MCP (JSON answers) + PreToolUse hook server: the least any hub could do. */
async function trivialServer(): Promise<{ url: string; close(): Promise<void> }> {
  const srv = http.createServer((req, res) => {
    if (req.method !== 'POST') { res.writeHead(405).end(); return; }
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      if (req.url?.startsWith('/hook')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'ok' } }));
        return;
      }
      const m = JSON.parse(b) as { id?: unknown; method: string; params?: { protocolVersion?: string; name?: string; arguments?: { input?: unknown } } };
      if (m.id === undefined) { res.writeHead(202).end(); return; }
      const result = m.method === 'initialize' ? { protocolVersion: m.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'trivial', version: '1' } }
        : m.method === 'tools/list' ? { tools: TRIVIAL_TOOLS }
        : m.method === 'tools/call' ? { content: [{ type: 'text', text: m.params?.name === 'check_permission' ? JSON.stringify({ behavior: 'allow', updatedInput: m.params.arguments?.input }) : 'ok' }] }
        : undefined;
      const body = result ? { jsonrpc: '2.0', id: m.id, result } : { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  return { url, close: () => new Promise((r) => { srv.closeAllConnections(); srv.close(() => r()); }) };
}

export interface FloorResult {
  wall: Record<SideName, Stats>;
  gap: Record<SideName, Stats>;
}

function requestTimes(fake: FakeAnthropic, dir: string): number[] {
  return fake.requests.filter((r) => promptOf(r.body).includes(dir)).map((r) => r.at);
}

export async function benchClaudeFloor(rounds = 5): Promise<FloorResult> {
  let fake: FakeAnthropic | undefined;
  let h: TestHub | undefined;
  let triv: Awaited<ReturnType<typeof trivialServer>> | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { floor: writes } });
    triv = await trivialServer();
    work = await tempDir('claude-floor');
    const bareHome = path.join(work, 'bare-home');
    await mkdir(bareHome);
    const hub = (h = await startTestHub({ fake }));
    const env = claudeEnv({ home: bareHome, baseUrl: fake.url });
    const bareArgs = (prompt: string): string[] => ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--permission-mode', 'dontAsk', '--allowedTools', 'Write'];
    const floorArgs = (prompt: string): string[] => [
      '-p', prompt, '--output-format', 'stream-json', '--verbose', '--include-partial-messages',
      '--mcp-config', JSON.stringify({ mcpServers: { overseer: { type: 'http', url: `${triv!.url}/mcp` } } }), '--strict-mcp-config',
      '--permission-mode', 'default', '--permission-prompt-tool', 'mcp__overseer__check_permission',
      '--allowedTools', 'mcp__overseer__finish', 'mcp__overseer__report_status',
      '--settings', JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Write|Edit|MultiEdit|NotebookEdit|Bash|Read|Grep|Glob|LS', hooks: [{ type: 'http', url: `${triv!.url}/hook`, timeout: 15, onFailure: 'block' }] }] } }),
    ];
    const preamble = await readFile(path.join(import.meta.dirname, '..', 'prompts', 'child-preamble.md'), 'utf8');
    const launcher = new ClaudeLauncher({});
    const argvRun = (prompt: string, dir: string) => {
      const mcpUrl = `${triv!.url}/mcp`;
      const cmd = launcher.build({
        jobId: 'j-floor', message: prompt, cwd: dir, sessionId: randomUUID(), resume: false, mcpUrl, token: 't', appendSystemPrompt: preamble,
        env, mcpTimeoutMs: 600_000, settings: hookSettings(mcpUrl, { readDenied: [path.join(work!, 'state')], writeDenied: [path.join(dir, '.claude')] }),
      }, claudeBin());
      return runClaude(cmd.args, { cwd: dir, env: cmd.env, timeoutMs: TIMEOUT_MS, stdin: [launcher.userMessageLine(prompt)] });
    };
    const run = async (side: SideName, dir: string, n: number): Promise<{ ms: number; at: number[]; cpuMs: number }> => {
      await mkdir(dir, { recursive: true });
      const prompt = `@script:floor write ${n} files into ${dir}`;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      if (side === 'child') {
        const { job_id } = await hub.call('spawn_agent', { prompt, cwd: dir, title: path.basename(dir) });
        const w = await hub.call('wait_for_agents', { job_ids: [job_id], timeout_s: TIMEOUT_MS / 1000 });
        if (w.done?.[0]?.status !== 'succeeded') throw new Error(`child ${job_id} did not succeed: ${JSON.stringify(w).slice(0, 600)}`);
      } else {
        const r = side === 'argv' ? await argvRun(prompt, dir) : await runClaude(side === 'bare' ? bareArgs(prompt) : floorArgs(prompt), { cwd: dir, env, timeoutMs: TIMEOUT_MS });
        if (r.code !== 0) throw new Error(`${side} claude exited ${r.code}: ${r.stderr.slice(-1000)}`);
      }
      const ms = performance.now() - t0;
      const c = process.cpuUsage(c0);
      const at = requestTimes(fake!, dir);
      if (at.length !== n + 1) throw new Error(`${side}: expected ${n + 1} requests for ${dir}, got ${at.length}`);
      return { ms, at, cpuMs: (c.user + c.system) / 1000 };
    };
    const wall: Record<SideName, number[]> = { bare: [], floor: [], argv: [], child: [] };
    const gap: Record<SideName, number[]> = { bare: [], floor: [], argv: [], child: [] };
    const cpu: Record<SideName, number[]> = { bare: [], floor: [], argv: [], child: [] };
    for (let r = 0; r <= rounds; r++) {
      for (const side of SIDES) {
        const one = await run(side, path.join(work, `${side}-one-${r}`), 1);
        const ten = await run(side, path.join(work, `${side}-ten-${r}`), WRITES);
        if (r === 0) continue; // warm-up
        wall[side].push(one.ms);
        gap[side].push(...ten.at.slice(1).map((t, i) => t - ten.at[i]!));
        // This process's CPU per extra edit (the hub, or the trivial server, and the fake):
        // what a side costs on the machine's cores besides the CLI.
        cpu[side].push((ten.cpuMs - one.cpuMs) / (WRITES - 1));
      }
    }
    const res: FloorResult = {
      wall: { bare: stats(wall.bare), floor: stats(wall.floor), argv: stats(wall.argv), child: stats(wall.child) },
      gap: { bare: stats(gap.bare), floor: stats(gap.floor), argv: stats(gap.argv), child: stats(gap.child) },
    };
    const label: Record<SideName, string> = { bare: 'bare claude -p', floor: 'bare + trivial HTTP MCP + HTTP hook', argv: 'child argv, trivial server', child: 'Overseer child' };
    for (const s of SIDES) {
      out(`${label[s].padEnd(38)} one Write wall p50 ${f1(res.wall[s].p50)} ms (×${f2(res.wall[s].p50 / res.wall.bare.p50)} of bare); per-edit gap p50 ${f1(res.gap[s].p50)} ms (${res.gap[s].p50 - res.gap.bare.p50 >= 0 ? '+' : ''}${f1(res.gap[s].p50 - res.gap.bare.p50)} ms); this process's CPU per edit p50 ${f1(stats(cpu[s]).p50)} ms\n`);
    }
    out(`child vs floor: wall ×${f2(res.wall.child.p50 / res.wall.floor.p50)}, per-edit ${f1(res.gap.child.p50 - res.gap.floor.p50)} ms\n`);
    return res;
  } finally {
    await h?.stop().catch(() => undefined);
    await triv?.close().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, () => benchClaudeFloor(Number(process.argv[2] ?? 5)));
