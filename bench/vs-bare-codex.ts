// Benchmark 13: an Overseer-spawned Codex child vs bare `codex exec`, both the REAL codex CLI
// (devDependency, codex-cli 0.169.0) against one scripted fake Responses API whose script runs
// one shell command and then ends with a text message.
//   Overseer: wall time from the spawn_agent call (provider "codex") to the wait_for_agents
//             return (in-process hub from test/helpers/hub.ts, lead client in memory). The child
//             carries what Overseer adds: the overseer MCP server over HTTP (required), the lock
//             hook on the shell call, the preamble, the prompt on stdin, the end-of-turn
//             lock-violation check.
//   Bare:     `codex exec --json --skip-git-repo-check -C <dir> -s workspace-write -m fake-model
//             "<same prompt>"` spawned directly (test/helpers/codex.ts runCodex) with its own
//             CODEX_HOME on the same fake provider and model catalog, wall time to exit.
//   Overseer, lockMode off: the same child from a second hub with locks off (no lock hook, no
//             lock-violation check), which shows what the hook costs.
// The three alternate, 7 timed runs each after one untimed warm-up of each. Also reported:
// start → first API request at the fake (fake.requests[].at), which makes the child's MCP
// connect to the hub (and the rest of its start-up) visible.
// Run alone: node --import tsx bench/vs-bare-codex.ts
import { mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startFakeOpenAI, type CodexScript, type FakeOpenAI } from '../src/fakemodel/fakeOpenAI.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { codexEnv, codexHome, execFlags, FAKE_API_KEY, FAKE_MODEL, runCodex } from '../test/helpers/codex.js';
import { fakeCodexConfig, writeFakeModelCatalog } from '../test/helpers/codexConfig.js';
import { f2, out, removeDir, runAlone, statLine, stats, tempDir, type Stats, builtHub } from './common.js';
import {
  bareRun, difference, interleave, overseerRun, overseerVsBare, promptFor, ratioText, splitText, TIMEOUT_MS, vsBareResult, wallLines, type VsBareResult,
} from './vsBare.js';

const SCRIPT = 'bench-shell';

export interface VsBareCodexResult extends VsBareResult {
  /** first request → second request: the shell call (with Overseer's lock hook in front of it) */
  overseerToolCall: Stats;
  bareToolCall: Stats;
  /** last request → end: codex finishing and exiting, then (Overseer) the hub settling the job and waking the wait */
  overseerTail: Stats;
  bareTail: Stats;
  /** the same Overseer child from a hub with lockMode "off" (no lock hook, no lock-violation check) */
  overseerNoLocks: Stats;
  ratioNoLocksP50: number;
}

/** Runs one shell command writing the file named in the prompt ("… write one file into <path>"), then ends with a text message. */
const shellOnce: CodexScript = (ctx) => {
  const file = /write one file into (\S+)/.exec(ctx.prompt)?.[1];
  if (ctx.step === 0 && file) return { calls: [{ shell: `echo bench > ${file}` }] };
  return { text: 'done' };
};

/** Arrival times of the requests at the fake for this run's prompt (Date.now() clock). */
function requestTimes(fake: FakeOpenAI, file: string): number[] {
  return fake.requests.filter((r) => r.prompt.includes(file)).map((r) => r.at);
}

export async function benchVsBareCodex(): Promise<VsBareCodexResult> {
  let fake: FakeOpenAI | undefined;
  let h: TestHub | undefined;
  let hOff: TestHub | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeOpenAI({ scripts: { [SCRIPT]: shellOnce } });
    work = await tempDir('vs-bare-codex', existsSync('/var/tmp') ? '/var/tmp' : undefined);
    const bareHome = path.join(work, 'bare-home');
    const bareCodexHome = path.join(work, 'bare-codex-home');
    const ovsWork = path.join(work, 'ovs-work');
    const bareWork = path.join(work, 'bare-work');
    const hubDir = path.join(work, 'hub');
    const offDir = path.join(work, 'hub-off');
    await Promise.all([mkdir(bareHome), mkdir(bareCodexHome), mkdir(ovsWork), mkdir(bareWork), mkdir(hubDir), mkdir(offDir)]);
    // Same provider settings and model catalog on both sides.
    await codexHome(bareCodexHome, fake.url);
    const hubConfig = fakeCodexConfig(fake.url, writeFakeModelCatalog(hubDir));
    const hub = (h = await startTestHub({ hubClass: await builtHub(), dir: hubDir, extraEnv: { FAKE_API_KEY }, config: hubConfig }));
    const hubOff = (hOff = await startTestHub({ hubClass: await builtHub(), dir: offDir, extraEnv: { FAKE_API_KEY }, config: { ...hubConfig, lockMode: 'off' } }));
    const api = fake;
    const env = codexEnv({ home: bareHome, codexHome: bareCodexHome });

    const s = await interleave({
      // Overseer child.
      overseer: {
        split: 'tool',
        run: async (n) => {
          const file = path.join(ovsWork, `out-${n}.txt`);
          const t = await overseerRun(hub, { script: SCRIPT, file, title: `vs-bare-codex ${n}`, provider: 'codex', who: 'Overseer codex child' });
          return { ...t, requests: requestTimes(api, file) };
        },
      },
      // The same child, lockMode off.
      noLocks: {
        run: (n) => overseerRun(hubOff, { script: SCRIPT, file: path.join(ovsWork, `off-${n}.txt`), title: `vs-bare-codex no locks ${n}`, provider: 'codex', who: 'Overseer codex child' }),
      },
      // Bare codex exec.
      bare: {
        split: 'tool',
        run: async (n) => {
          const file = path.join(bareWork, `out-${n}.txt`);
          const t = await bareRun({
            cli: 'codex',
            file,
            run: () => runCodex(['exec', ...execFlags(bareWork), '-m', FAKE_MODEL, promptFor(SCRIPT, file)], { cwd: bareWork, env, timeoutMs: TIMEOUT_MS }),
          });
          return { ...t, requests: requestTimes(api, file) };
        },
      },
    });
    const r: VsBareCodexResult = {
      ...vsBareResult(s.overseer, s.bare),
      overseerToolCall: stats(s.overseer.tool),
      bareToolCall: stats(s.bare.tool),
      overseerTail: stats(s.overseer.tail),
      bareTail: stats(s.bare.tail),
      overseerNoLocks: stats(s.noLocks.total),
      ratioNoLocksP50: NaN,
    };
    r.ratioNoLocksP50 = r.overseerNoLocks.p50 / r.bare.p50;
    out(
      wallLines(r, 'Overseer codex child', 'bare codex exec') +
        statLine('Overseer codex child, lockMode off (no lock hook)', r.overseerNoLocks) +
        `${ratioText(r)}; ` +
        `lockMode off: ${f2(r.ratioNoLocksP50)} ${difference(r.overseerNoLocks, r.bare)}\n` +
        `${splitText(r, 'MCP connect to the hub + preamble')}, of which ` +
        `the shell call (1st → 2nd request): ${overseerVsBare(r.overseerToolCall.p50, r.bareToolCall.p50)} (Δ: the lock hook) and ` +
        `last request → end: ${overseerVsBare(r.overseerTail.p50, r.bareTail.p50)}\n`,
    );
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await hOff?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, benchVsBareCodex);
