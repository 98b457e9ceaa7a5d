// Benchmark 7: cost of the PreToolUse lock hook per edit, as a ratio to `node -e 0`.
// An in-process hub runs two jobs whose fake binary hangs (bench/fixtures/sleep-agent.sh);
// their agent tokens are captured from the launch command (TokenRecorder). Each sample starts
// `node hooks/overseer-hook.mjs` as a process with OVERSEER_URL/OVERSEER_TOKEN of agent A and a
// Write PreToolUse JSON on stdin, and times spawn → process closed (stdout drained):
//   - free: a file nobody holds (a fresh one per sample), so the hub auto-locks it for A;
//   - deny: a file agent B holds, so the hook prints a deny.
// Baseline, interleaved in the same run (order rotated every round): `node -e 0`, started the
// same way (same node, same env, stdin piped and closed). 30 rounds after 3 warm-up rounds.
// Also: the hub's share, POST /hook from this process (keep-alive off) for the same inputs.
// Run alone: node --import tsx bench/hook-cost.ts
import { mkdir } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, TokenRecorder, cleanEnv, f2, fixture, out, spawnHangingAgent, startBenchHub, statLine, stats, timedRun, type Stats, type TimedRun } from './common.js';

const RUNS = 30;
const WARMUP = 3;
const HOOK = path.join(REPO_ROOT, 'hooks', 'overseer-hook.mjs');

export interface HookCostResult {
  baseline: Stats;
  free: Stats;
  deny: Stats;
  ratioFree: number;
  ratioDeny: number;
  /** POST /hook round trip from the benchmark process (the hub's share). */
  postFree: Stats;
  postDeny: Stats;
}


const runNodeHook = (args: string[], env: NodeJS.ProcessEnv, stdin: string): Promise<TimedRun> => timedRun(process.execPath, args, { env, cwd: REPO_ROOT, stdin });

function postHook(url: string, token: string, body: string): Promise<{ ms: number; text: string }> {
  const u = new URL('/hook', url);
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = request({ hostname: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => { text += d; });
      res.on('end', () => (res.statusCode === 200 ? resolve({ ms: performance.now() - t0, text }) : reject(new Error(`POST /hook answered ${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const hookInput = (cwd: string, file: string): string =>
  JSON.stringify({
    session_id: 'bench-hook', transcript_path: '/dev/null', cwd, permission_mode: 'default', hook_event_name: 'PreToolUse',
    tool_name: 'Write', tool_input: { file_path: file, content: 'export const x = 1;\n' },
  });

export async function benchHookCost(): Promise<HookCostResult> {
  const rec = new TokenRecorder();
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh'), processes: rec, config: { maxAgents: 4 } });
  try {
    const url = h.hub.http!.url;
    const a = await spawnHangingAgent(h, rec, 'hook A');
    const b = await spawnHangingAgent(h, rec, 'hook B');
    const src = path.join(h.project, 'src');
    await mkdir(src, { recursive: true });
    const held = path.join(src, 'held-by-b.ts');
    const envA = cleanEnv({ OVERSEER_URL: url, OVERSEER_TOKEN: a.token, CLAUDE_PROJECT_DIR: h.project });
    const envB = cleanEnv({ OVERSEER_URL: url, OVERSEER_TOKEN: b.token, CLAUDE_PROJECT_DIR: h.project });

    // B takes the file through its own hook (auto lock), so A's hook is denied on it.
    const take = await runNodeHook([HOOK], envB, hookInput(h.project, held));
    if (take.code !== 0 || take.stdout.trim() !== '') throw new Error(`B's hook did not auto-lock ${held}: exit ${take.code}, ${take.stdout}${take.stderr}`);
    if ((await h.hub.locks.heldAmong([held]))[0]?.holder !== b.jobId) throw new Error(`${held} is not held by B after its hook ran`);

    const base: number[] = [];
    const free: number[] = [];
    const deny: number[] = [];
    let n = 0;
    const kinds = ['base', 'free', 'deny'] as const;
    for (let i = -WARMUP; i < RUNS; i++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(k + i + WARMUP) % kinds.length]!;
        if (kind === 'base') {
          const r = await runNodeHook(['-e', '0'], envA, '');
          if (r.code !== 0) throw new Error(`node -e 0 exited ${r.code}: ${r.stderr}`);
          if (i >= 0) base.push(r.ms);
        } else if (kind === 'free') {
          const file = path.join(src, `free-${n++}.ts`);
          const r = await runNodeHook([HOOK], envA, hookInput(h.project, file));
          if (r.code !== 0 || r.stdout.trim() !== '') throw new Error(`hook on a free file: exit ${r.code}, stdout ${r.stdout}${r.stderr}`);
          if ((await h.hub.locks.heldAmong([file]))[0]?.holder !== a.jobId) throw new Error(`the hook did not auto-lock ${file} for A`);
          if (i >= 0) free.push(r.ms);
        } else {
          const r = await runNodeHook([HOOK], envA, hookInput(h.project, held));
          if (r.code !== 0 || !r.stdout.includes('"permissionDecision":"deny"')) throw new Error(`hook on a held file did not deny: exit ${r.code}, stdout ${r.stdout}${r.stderr}`);
          if (i >= 0) deny.push(r.ms);
        }
      }
    }

    // The hub's share: the same requests from this process, no node start-up.
    const postFreeMs: number[] = [];
    const postDenyMs: number[] = [];
    for (let i = -WARMUP; i < RUNS; i++) {
      const f = await postHook(url, a.token, hookInput(h.project, path.join(src, `post-${i + WARMUP}.ts`)));
      const d = await postHook(url, a.token, hookInput(h.project, held));
      if (!d.text.includes('"deny"')) throw new Error(`POST /hook on a held file did not deny: ${d.text}`);
      if (i >= 0) {
        postFreeMs.push(f.ms);
        postDenyMs.push(d.ms);
      }
    }

    const baseline = stats(base);
    const r: HookCostResult = {
      baseline, free: stats(free), deny: stats(deny),
      ratioFree: 0, ratioDeny: 0,
      postFree: stats(postFreeMs), postDeny: stats(postDenyMs),
    };
    r.ratioFree = r.free.p50 / baseline.p50;
    r.ratioDeny = r.deny.p50 / baseline.p50;
    out(
      statLine(`baseline node -e 0 (${RUNS} runs, interleaved)`, baseline) +
        statLine('hook, free file (auto-lock)', r.free) +
        statLine('hook, file held by another agent (deny)', r.deny) +
        `ratio hook/node -e 0 (median): free ${f2(r.ratioFree)}, deny ${f2(r.ratioDeny)}\n` +
        statLine('  of which the hub: POST /hook from this process, free file', r.postFree) +
        statLine('  of which the hub: POST /hook from this process, deny', r.postDeny),
    );
    return r;
  } finally {
    await h.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchHookCost().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
