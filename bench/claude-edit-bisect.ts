// Experiment for docs/performance-claude-start.md: which part of the Overseer child's command line
// costs per edit. The child's own argv (ClaudeLauncher.build) against a trivial MCP + hook server,
// with one element taken out per variant; 10 Writes a run, median gap between requests.
// Run: node --import tsx bench/claude-edit-bisect.ts [rounds]
import http from 'node:http';
import { mkdir, readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startFakeAnthropic, promptOf, type Script } from '../src/testing/fakeAnthropic.js';
import { ClaudeLauncher, hookSettings } from '../src/launch/claude/launcher.js';
import { claudeBin, claudeEnv, runClaude } from '../test/helpers/claude.js';
import { f1, out, removeDir, stats, tempDir } from './common.js';

const WRITES = 10;
const writes: Script = (ctx) => {
  const m = /into (\S+)/.exec(ctx.prompt);
  if (m && ctx.step < WRITES) return { tools: [{ name: 'Write', input: { file_path: path.join(m[1]!, `w-${ctx.step}.txt`), content: `edit ${ctx.step}\n` } }] };
  return { text: 'done' };
};

const srv = http.createServer((req, res) => {
  let b = '';
  req.on('data', (c) => (b += c));
  req.on('end', () => {
    if (req.url?.startsWith('/hook')) { res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', permissionDecisionReason: 'ok' } })); return; }
    if (req.method !== 'POST' || !b) { res.writeHead(405).end(); return; }
    const m = JSON.parse(b);
    if (m.id === undefined) { res.writeHead(202).end(); return; }
    const result = m.method === 'initialize' ? { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 't', version: '1' } }
      : m.method === 'tools/list' ? { tools: [{ name: 'check_permission', description: 'p', inputSchema: { type: 'object', properties: {} } }, { name: 'finish', description: 'f', inputSchema: { type: 'object', properties: {} }, _meta: { 'anthropic/alwaysLoad': true } }] }
      : { content: [{ type: 'text', text: 'ok' }] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
  });
});
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
const fake = await startFakeAnthropic({ scripts: { bis: writes } });
const work = await tempDir('edit-bisect');
const home = path.join(work, 'home');
await mkdir(home);
const env = claudeEnv({ home, baseUrl: fake.url });
const preamble = await readFile(path.join(import.meta.dirname, '..', 'prompts', 'child-preamble.md'), 'utf8');
const launcher = new ClaudeLauncher({});

/** Removes `flag` and its `n` values from args. */
const drop = (args: string[], flag: string, n = 1): string[] => {
  const i = args.indexOf(flag);
  if (i < 0) throw new Error(`no ${flag}`);
  let k = i + 1;
  if (n < 0) while (k < args.length && !args[k]!.startsWith('--')) k++; else k += n;
  return [...args.slice(0, i), ...args.slice(k)];
};

type V = { name: string; edit?: (a: string[]) => string[]; noDeny?: boolean; noPartial?: boolean };
const variants: V[] = [
  { name: 'child argv' },
  { name: '- permissions.deny rules', noDeny: true },
  { name: '- --include-partial-messages', edit: (a) => drop(a, '--include-partial-messages', 0) },
  { name: '- --replay-user-messages', edit: (a) => drop(a, '--replay-user-messages', 0) },
  { name: '- --disallowedTools', edit: (a) => drop(a, '--disallowedTools', -1) },
  { name: '- --append-system-prompt', edit: (a) => drop(a, '--append-system-prompt') },
  { name: '- --permission-prompt-tool', edit: (a) => drop(a, '--permission-prompt-tool') },
  { name: '- stream-json input (prompt in argv)', edit: (a) => ['-p', PROMPT, ...drop(drop(a.slice(1), '--input-format'), '--replay-user-messages', 0)] },
];
const PROMPT = '<prompt>';
const only = process.env.VARIANTS?.split(',');
const use = variants.filter((v) => !only || only.includes(v.name));
const rounds = Number(process.argv[2] ?? 3);
const gaps = new Map<string, number[]>();
try {
  for (let r = 0; r <= rounds; r++) {
    // Shuffled each round: no variant always runs right after another.
    const order = [...use].sort(() => Math.random() - 0.5);
    for (const v of order) {
      const dir = path.join(work, `${r}-${v.name.replace(/\W+/g, '_')}`);
      await mkdir(dir);
      const prompt = `@script:bis write ten files into ${dir}`;
      const mcpUrl = `${base}/mcp`;
      const settings = v.noDeny ? hookSettings(mcpUrl) : hookSettings(mcpUrl, { readDenied: [path.join(work, 'state')], writeDenied: [path.join(dir, '.claude')] });
      const cmd = launcher.build({ jobId: 'j-x', message: prompt, cwd: dir, sessionId: randomUUID(), resume: false, mcpUrl, token: 't', appendSystemPrompt: preamble, env, mcpTimeoutMs: 600_000, settings }, claudeBin());
      const args = (v.edit ? v.edit(cmd.args) : cmd.args).map((a) => (a === PROMPT ? prompt : a));
      const run = await runClaude(args, { cwd: dir, env: cmd.env, timeoutMs: 120_000, stdin: [launcher.userMessageLine(prompt)] });
      const at = fake.requests.filter((q) => promptOf(q.body).includes(dir)).map((q) => q.at);
      if (run.code !== 0 || at.length !== WRITES + 1) { out(`${v.name}: exit ${run.code}, ${at.length} requests ${run.stderr.slice(-300)}\n`); continue; }
      if (r === 0) continue;
      (gaps.get(v.name) ?? gaps.set(v.name, []).get(v.name)!).push(...at.slice(1).map((t, i) => t - at[i]!));
    }
  }
  const b = stats(gaps.get('child argv') ?? [NaN]).p50;
  for (const v of use) { const s = stats(gaps.get(v.name) ?? [NaN]); out(`${v.name.padEnd(34)} per-edit gap p50 ${f1(s.p50)} ms (${s.p50 - b >= 0 ? '+' : ''}${f1(s.p50 - b)}) n=${s.n}\n`); }
} finally {
  srv.closeAllConnections(); srv.close();
  await fake.close();
  await removeDir(work);
}
