// What slows ONE Overseer child's start that Overseer controls (issue 14, fan-out row, point 3):
// spawn → first API request at the fake, one child at a time (no fan-out), for
//   overseer        a child spawned by a hub as users have it (confinement auto: bubblewrap when it works)
//   no-confine      the same from a hub with confine "off"
//   argv            the child's exact command (argv + env, captured from a third hub) run directly,
//                   no bubblewrap, no execa: the hub's own dispatch and wrapping left out
//   argv-no-mcp     that command without the hub's MCP server (--mcp-config, --strict-mcp-config,
//                   --permission-prompt-tool, --allowedTools mcp__overseer__*)
//   argv-no-extras  that command without --settings (hook, deny rules) and --append-system-prompt
//   bare            `claude -p "<prompt>"` (the fan-out benchmark's baseline)
// Each variant RUNS times, interleaved. Not an entry of `npm run bench` (bench/fanout.ts is);
// its figures are in docs/performance-fanout.md. Run: node --import tsx bench/fanout-start.ts
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { startFakeAnthropic, promptOf, type FakeAnthropic } from '../src/testing/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { claudeBin, claudeEnv } from '../test/helpers/claude.js';
import { NodeLauncher } from '../src/launch/process.js';
import type { SpawnCmd } from '../src/launch/types.js';
import { f1, out, removeDir, runAlone, stats, tempDir } from './common.js';

const RUNS = 5;
const TIMEOUT_MS = 120_000;

const firstAt = async (fake: FakeAnthropic, marker: string): Promise<number> =>
  (await fake.waitForRequest((q) => q.step === 0 && promptOf(q.body).includes(`(${marker})`), TIMEOUT_MS)).at;

/** argv without `flag` and the values after it (`values` of them; -1: every value up to the next --flag). */
function drop(args: string[], flag: string, values: number): string[] {
  const i = args.indexOf(flag);
  if (i < 0) return args;
  let n = values;
  if (n < 0) for (n = 0; i + 1 + n < args.length && !args[i + 1 + n]!.startsWith('--'); n++);
  return [...args.slice(0, i), ...args.slice(i + 1 + n)];
}

/** Runs `args` like the supervisor does (prompt as a stream-json user message on stdin), resolves at exit. */
function runDirect(cmd: SpawnCmd, args: string[], message: string): { start: number; done: Promise<void> } {
  const start = Date.now();
  // A session id of its own (the captured one belongs to the holder).
  const i = args.indexOf('--session-id');
  const argv = i < 0 ? args : [...args.slice(0, i + 1), randomUUID(), ...args.slice(i + 2)];
  const child = spawn(claudeBin(), argv, { cwd: cmd.cwd, env: cmd.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  child.stdout.resume();
  let err = '';
  child.stderr.on('data', (c: Buffer) => { err = (err + c.toString('utf8')).slice(-2000); });
  child.on('exit', (code) => { if (code) out(`replay exited ${code}: ${err}\n`); });
  child.stdin.write(`${JSON.stringify({ type: 'user', message: { role: 'user', content: message } })}\n`);
  // Close stdin once the answer came (the result line), as the supervisor does.
  let buf = '';
  child.stdout.on('data', (c: Buffer) => {
    buf += c.toString('utf8');
    if (buf.includes('"type":"result"')) child.stdin.end();
  });
  const done = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { start, done };
}

export interface FanoutStartResult {
  variants: Record<string, { p50: number; min: number; max: number }>;
}

export async function benchFanoutStart(): Promise<FanoutStartResult> {
  let fake: FakeAnthropic | undefined;
  const hubs: TestHub[] = [];
  let work: string | undefined;
  try {
    fake = await startFakeAnthropic({ scripts: { q: [{ text: 'done' }], hold: [{ text: 'held', delayMs: 10 * 60_000 }] } });
    work = await tempDir('fanout-start');
    const bareHome = path.join(work, 'bare-home');
    const bareWork = path.join(work, 'bare-work');
    await Promise.all([mkdir(bareHome), mkdir(bareWork)]);
    const ovs = await startTestHub({ fake });
    const noConfine = await startTestHub({ fake, config: { confine: 'off' } });
    const captured: SpawnCmd[] = [];
    const real = new NodeLauncher();
    const cap = await startTestHub({ fake, processes: { launch: (c) => { captured.push(c); return real.launch(c); } } });
    hubs.push(ovs, noConfine, cap);
    // A child that stays in its first model call: its token stays valid for the replays' MCP connection.
    const holder = (await cap.call('spawn_agent', { prompt: '@script:hold wait (holder)' })).job_id as string;
    await firstAt(fake, 'holder');
    const cmd = captured[0]!;
    const noMcp = drop(drop(drop(drop(cmd.args, '--mcp-config', 1), '--strict-mcp-config', 0), '--permission-prompt-tool', 1), '--allowedTools', -1);
    const noExtras = drop(drop(cmd.args, '--settings', 1), '--append-system-prompt', 1);
    const bareEnv = claudeEnv({ home: bareHome, baseUrl: fake.url });

    const viaHub = (h: TestHub) => async (m: string): Promise<number> => {
      const { job_id } = await h.call('spawn_agent', { prompt: `@script:q hi (${m})` });
      const reply = Date.now();
      const t = (await firstAt(fake!, m)) - reply;
      await h.call('wait_for_agents', { job_ids: [job_id], timeout_s: 120 });
      return t;
    };
    const direct = (args: string[]) => async (m: string): Promise<number> => {
      const r = runDirect(cmd, args, `@script:q hi (${m})`);
      const t = (await firstAt(fake!, m)) - r.start;
      await r.done;
      return t;
    };
    const variants: Record<string, (m: string) => Promise<number>> = {
      overseer: viaHub(ovs),
      'no-confine': viaHub(noConfine),
      argv: direct(cmd.args),
      'argv-no-mcp': direct(noMcp),
      'argv-no-extras': direct(noExtras),
      bare: async (m) => {
        const start = Date.now();
        const child = spawn(claudeBin(), ['-p', `@script:q hi (${m})`], { cwd: bareWork, env: bareEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
        child.stdout.resume();
        child.stderr.resume();
        const t = (await firstAt(fake!, m)) - start;
        await new Promise((r) => child.on('exit', r));
        return t;
      },
    };
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
    for (let n = -1; n < RUNS; n++) {
      for (const [k, run] of Object.entries(variants)) {
        const t = await run(`${k}-${n}`);
        if (n >= 0) samples[k]!.push(t);
      }
    }
    await cap.call('cancel_agent', { job_id: holder });
    const r: FanoutStartResult = { variants: {} };
    const bare = stats(samples.bare!).p50;
    for (const [k, xs] of Object.entries(samples)) {
      const s = stats(xs);
      r.variants[k] = { p50: s.p50, min: s.min, max: s.max };
      out(`${k.padEnd(15)} spawn → first API request: p50 ${f1(s.p50)} ms (min ${f1(s.min)}, max ${f1(s.max)}; n=${s.n}), Δ vs bare ${f1(s.p50 - bare)} ms\n`);
    }
    out(`argv bytes: ${Buffer.byteLength(cmd.args.join(' '))} (mcp-config ${Buffer.byteLength(cmd.args[cmd.args.indexOf('--mcp-config') + 1] ?? '')}, settings ${Buffer.byteLength(cmd.args[cmd.args.indexOf('--settings') + 1] ?? '')}, append-system-prompt ${Buffer.byteLength(cmd.args[cmd.args.indexOf('--append-system-prompt') + 1] ?? '')}); env: ${Object.keys(cmd.env ?? {}).length} variables, ${Buffer.byteLength(Object.entries(cmd.env ?? {}).map(([k, v]) => `${k}=${v}`).join('\n'))} bytes\n`);
    return r;
  } finally {
    for (const h of hubs) await h.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

runAlone(import.meta.url, benchFanoutStart);
