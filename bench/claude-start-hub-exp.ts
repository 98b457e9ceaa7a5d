// Experiments for docs/performance-claude-start.md with REAL Overseer children (in-process hub of
// test/helpers/hub.ts, the child launcher's argv): spawn → first request, the CLI's own start →
// first turn, and the MCP connect to the hub as the CLI reports it (--debug-file, added by a
// wrapper around the claude binary), under candidate environments. Also what the first request
// carries and whether a step-0 call of an Overseer tool works.
// Run: node --import tsx bench/claude-start-hub-exp.ts [rounds]
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startFakeAnthropic, promptOf } from '../src/testing/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeBin } from '../test/helpers/claude.js';
import { f1, out, removeDir, stats, tempDir } from './common.js';
import { debugFigures } from './claudeDebug.js';

const rounds = Number(process.argv[2] ?? 3);
const envs: Record<string, Record<string, string>> = {
  default: {},
  'WAIT_MS=0': { CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '0' },
  'NEGOTIATION=legacy': { MCP_PROTOCOL_NEGOTIATION: 'legacy' },
  'WAIT_MS=0 ALWAYS_LOAD_JOIN': { CLAUDE_CODE_MCP_STARTUP_WAIT_MS: '0', CLAUDE_CODE_MCP_ALWAYS_LOAD_JOIN_BEFORE_INPUT: '1' },
};
const names = (process.env.VARIANTS?.split(',') ?? Object.keys(envs));

const fake = await startFakeAnthropic({
  scripts: { hubstart: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'step 0' } }] } : { text: 'done' }) },
});
const work = await tempDir('cc-start-hub');
const dbgDir = path.join(work, 'dbg');
await mkdir(dbgDir);
const wrapper = path.join(work, 'claude-dbg.sh');
await writeFile(wrapper, `#!/bin/sh\nexec '${claudeBin()}' --debug-file "${dbgDir}/$OVERSEER_AGENT_ID.log" "$@"\n`);
await chmod(wrapper, 0o755);
const hubs = new Map<string, TestHub>();
const first = new Map<string, number[]>();
const conn = new Map<string, number[]>();
const turn = new Map<string, number[]>();
const notes = new Map<string, string>();
const push = (m: Map<string, number[]>, k: string, v: number): void => void (m.get(k) ?? m.set(k, []).get(k)!).push(v);
try {
  for (const n of names) hubs.set(n, await startTestHub({ fake, config: { claudeBin: wrapper }, extraEnv: envs[n] }));
  for (let r = 0; r <= rounds; r++) {
    for (const n of names) {
      const h = hubs.get(n)!;
      const marker = `hubrun-${r}-${n.replace(/\W+/g, '_')}`;
      const t0 = Date.now();
      const { job_id } = await h.call('spawn_agent', { prompt: `@script:hubstart ${marker}`, title: marker });
      const w = await h.call('wait_for_agents', { job_ids: [job_id], timeout_s: 120 });
      const reqs = fake.requests.filter((q) => promptOf(q.body).includes(marker));
      if (w.done?.[0]?.status !== 'succeeded' || !reqs.length) { out(`${n}: ${JSON.stringify(w).slice(0, 300)} reqs ${reqs.length}\n`); continue; }
      const tools = (reqs[0]!.body.tools ?? []) as { name: string; defer_loading?: boolean }[];
      const ov = tools.filter((t) => t.name.startsWith('mcp__overseer__')).map((t) => `${t.name.replace('mcp__overseer__', '')}${t.defer_loading ? '(deferred)' : ''}`);
      const step1 = reqs.find((q) => q.step === 1);
      const trText = step1 ? JSON.stringify(step1.body.messages.at(-1)).slice(0, 160) : 'no step 1';
      const ok = step1 ? !/"is_error":true/.test(JSON.stringify(step1.body.messages.at(-1))) : false;
      notes.set(n, `first request's Overseer tools: [${ov.join(' ')}]; step-0 report_status ${ok ? 'ok' : `FAILED ${trText}`}`);
      // The debug file of this child: the newest one that names the marker.
      const d = debugFigures(await readFile(path.join(dbgDir, `${job_id}.log`), 'utf8').catch(() => ''));
      if (r === 0) continue;
      push(first, n, reqs[0]!.at - t0);
      push(conn, n, d.connectMs);
      push(turn, n, d.turnMs);
    }
  }
  const base = stats(first.get('default') ?? [NaN]).p50;
  out(`rounds ${rounds}\n`);
  for (const n of names) {
    const s = stats(first.get(n) ?? [NaN]);
    out(`${n.padEnd(30)} spawn→first request p50 ${f1(s.p50)} ms (${(first.get(n) ?? []).join(',')}) ×${(s.p50 / base).toFixed(2)}; CLI start→turn p50 ${f1(stats(turn.get(n) ?? [NaN]).p50)}; hub MCP connect (CLI) p50 ${f1(stats(conn.get(n) ?? [NaN]).p50)} ms (${(conn.get(n) ?? []).join(',')})\n   ${notes.get(n)}\n`);
  }
} finally {
  for (const h of hubs.values()) await h.stop().catch(() => undefined);
  await fake.close();
  if (!process.env.KEEP) await removeDir(work); else out(`kept ${work}\n`);
}
