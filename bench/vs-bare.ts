// Benchmark 4: an Overseer-spawned child vs bare `claude -p`, both the REAL claude CLI
// (devDependency) against one scripted fake Anthropic API whose script calls Write once and
// then ends with a text turn.
//   Overseer: wall time from the spawn_agent call to the wait_for_agents return (in-process
//             hub from test/helpers/hub.ts, lead client in memory).
//   Bare:     `claude -p "<same prompt>" --output-format stream-json --verbose
//             --permission-mode dontAsk --allowedTools Write` spawned directly (runClaude),
//             wall time to exit.
// The two alternate, 7 timed runs each after one untimed warm-up of each. Also reported:
// start → first API request at the fake (fake.requests[].at), which makes the child's MCP
// connect to the hub (and the rest of its start-up) visible.
// Run alone: node --import tsx bench/vs-bare.ts
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startFakeAnthropic, promptOf, type FakeAnthropic, type Script } from '../src/fakemodel/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeEnv, runClaude } from '../test/helpers/claude.js';
import { out, removeDir, runAlone, tempDir, builtHub } from './common.js';
import { bareRun, interleave, overseerRun, promptFor, ratioText, splitText, TIMEOUT_MS, vsBareResult, wallLines, type VsBareResult } from './vsBare.js';

export type { VsBareResult };

const SCRIPT = 'bench-write';

/** Writes the file named in the prompt ("… into <path>"), then ends with a text turn. */
const writeOnce: Script = (ctx) => {
  const file = /into (\S+)/.exec(ctx.prompt)?.[1];
  if (ctx.step === 0 && file) return { tools: [{ name: 'Write', input: { file_path: file, content: 'bench\n' } }] };
  return { text: 'done' };
};

/** Arrival times of the requests at the fake for this run's prompt (Date.now() clock). */
function requestTimes(fake: FakeAnthropic, file: string): number[] {
  return fake.requests.filter((r) => promptOf(r.body).includes(file)).map((r) => r.at);
}

export async function benchVsBare(): Promise<VsBareResult> {
  let fake: FakeAnthropic | undefined;
  let h: TestHub | undefined;
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: writeOnce } });
    work = await tempDir('vs-bare');
    const bareHome = path.join(work, 'bare-home');
    const ovsWork = path.join(work, 'ovs-work');
    const bareWork = path.join(work, 'bare-work');
    await Promise.all([mkdir(bareHome), mkdir(ovsWork), mkdir(bareWork)]);
    const hub = (h = await startTestHub({ hubClass: await builtHub(), fake }));
    const api = fake;
    const env = claudeEnv({ home: bareHome, baseUrl: fake.url });

    const s = await interleave({
      // Overseer child.
      overseer: {
        split: 'first',
        run: async (n) => {
          const file = path.join(ovsWork, `out-${n}.txt`);
          const t = await overseerRun(hub, { script: SCRIPT, file, title: `vs-bare ${n}`, who: 'Overseer child' });
          return { ...t, requests: requestTimes(api, file) };
        },
      },
      // Bare claude -p.
      bare: {
        split: 'first',
        run: async (n) => {
          const file = path.join(bareWork, `out-${n}.txt`);
          const t = await bareRun({
            cli: 'claude',
            file,
            run: () => runClaude(
              ['-p', promptFor(SCRIPT, file), '--output-format', 'stream-json', '--verbose', '--permission-mode', 'dontAsk', '--allowedTools', 'Write'],
              { cwd: bareWork, env, timeoutMs: TIMEOUT_MS },
            ),
          });
          return { ...t, requests: requestTimes(api, file) };
        },
      },
    });
    const r = vsBareResult(s.overseer, s.bare);
    out(
      wallLines(r, 'Overseer child', 'bare claude -p') +
        `${ratioText(r)}\n` +
        `${splitText(r, 'MCP connect to the hub + longer argv/system prompt')}\n`,
    );
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, benchVsBare);
