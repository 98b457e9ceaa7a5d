// Benchmark: a lock handed over, from the holder's release to the waiter's write landing (issue 26).
// Two real claude children on the fake model per hub: the holder A locks a file, the waiter B
// waits for it in lock_files, A calls release_files, B's lock_files returns and B writes the file
// with Claude Code's Write. Timed from the release being in the store (the hub's lock event for A)
// to the file on disk holding what B wrote (fs.watch on its folder). Confined (bubblewrap + lock
// mounts: the grant waits until the file is unbound in B's sandbox) against unconfined, rounds
// interleaved between the two hubs, 20 hand-overs each, medians.
// Run alone: node --import tsx bench/handover.ts
import { mkdirSync, readFileSync, realpathSync, watch, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startFakeAnthropic, type FakeAnthropic, type Script } from '../src/fakemodel/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { subscribed } from '../test/helpers/bus.js';
import { gate, type Gate } from '../test/helpers/gate.js';
import { probeBwrap } from '../src/confine/launcher.js';
import { builtHub, f1, f2, out, runAlone, stats, type Stats } from './common.js';

const ROUNDS = Number(process.env.HANDOVER_ROUNDS ?? 20);

export interface HandoverResult {
  rounds: number;
  confined?: Stats;
  unconfined: Stats;
  ratioP50?: number;
}

interface Pair {
  h: TestHub;
  dir: string;
  aLock: Gate[];
  aRelease: Gate[];
  bLock: Gate[];
  samples: number[];
  a: string;
}

const fileOf = (dir: string, r: number): string => path.join(dir, `f${r}.txt`);

function scripts(tag: string, p: Omit<Pair, 'h' | 'a' | 'samples'>): Record<string, Script> {
  return {
    [`holder-${tag}`]: async (ctx) => {
      const r = Math.floor(ctx.step / 2);
      if (r >= ROUNDS) return ctx.step === 2 * ROUNDS ? { tools: [{ name: 'mcp__overseer__finish', input: { result: 'A done' } }] } : { text: 'done' };
      if (ctx.step % 2 === 0) {
        await p.aLock[r]!.wait;
        return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: [fileOf(p.dir, r)], reason: 'A holds it' } }] };
      }
      await p.aRelease[r]!.wait;
      return { tools: [{ name: 'mcp__overseer__release_files', input: {} }] };
    },
    [`waiter-${tag}`]: async (ctx) => {
      if (ctx.step === 0) return { tools: Array.from({ length: ROUNDS }, (_, r) => ({ name: 'Read', input: { file_path: fileOf(p.dir, r) } })) };
      const r = Math.floor((ctx.step - 1) / 2);
      if (r >= ROUNDS) return ctx.step === 1 + 2 * ROUNDS ? { tools: [{ name: 'mcp__overseer__finish', input: { result: 'B done' } }] } : { text: 'done' };
      if ((ctx.step - 1) % 2 === 0) {
        await p.bLock[r]!.wait;
        return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: [fileOf(p.dir, r)], timeout_s: 120, reason: 'B takes it' } }] };
      }
      return { tools: [{ name: 'Write', input: { file_path: fileOf(p.dir, r), content: `B ${r}\n` } }] };
    },
  };
}

async function startPair(fake: FakeAnthropic, hubClass: Awaited<ReturnType<typeof builtHub>>, confine: 'require' | 'off'): Promise<Pair> {
  const gates = () => Array.from({ length: ROUNDS }, () => gate(120_000));
  const g = { aLock: gates(), aRelease: gates(), bLock: gates() };
  const h = await startTestHub({ fake, config: { confine }, hubClass });
  const dir = path.join(realpathSync(h.project), 'files');
  mkdirSync(dir);
  for (let r = 0; r < ROUNDS; r++) writeFileSync(fileOf(dir, r), 'A\n');
  for (const [name, s] of Object.entries(scripts(confine, { dir, ...g }))) fake.addScript(name, s);
  const a = (await h.call('spawn_agent', { prompt: `@script:holder-${confine}`, title: 'Holder A' })).job_id;
  await h.call('spawn_agent', { prompt: `@script:waiter-${confine}`, title: 'Waiter B' });
  await fake.waitForRequest((q) => q.script === `waiter-${confine}` && q.step === 1, 60_000); // B has read every file
  return { h, dir, ...g, a, samples: [] };
}

/** One hand-over: A locks, B waits, A releases; ms from A's release in the store to B's write on disk. */
async function round(p: Pair, r: number, tag: string, fake: FakeAnthropic): Promise<void> {
  const file = fileOf(p.dir, r);
  p.aLock[r]!.open();
  await fake.waitForRequest((q) => q.script === `holder-${tag}` && q.step === 2 * r + 1, 60_000); // A holds it
  const waiting = subscribed(p.h.hub.ctx.bus, 'lock', 60_000);
  p.bLock[r]!.open();
  await waiting; // B waits in lock_files
  let released = 0;
  const landed = new Promise<number>((resolve, reject) => {
    const w = watch(p.dir, () => {
      let text = '';
      try { text = readFileSync(file, 'utf8'); } catch { /* between the rename's two halves */ }
      if (text === `B ${r}\n`) { w.close(); clearTimeout(t); resolve(performance.now()); }
    });
    const t = setTimeout(() => { w.close(); reject(new Error(`round ${r} (${tag}): B's write did not land within 60 s`)); }, 60_000);
  });
  const off = p.h.hub.ctx.bus.on('lock', (e) => { if (e.holder === p.a && released === 0) released = performance.now(); });
  p.aRelease[r]!.open();
  const at = await landed;
  off();
  p.samples.push(at - released);
}

export async function benchHandover(): Promise<HandoverResult> {
  const confinedOk = probeBwrap().ok;
  const fake = await startFakeAnthropic({ scripts: {} });
  const hubClass = await builtHub();
  const pairs: [string, Pair][] = [];
  try {
    pairs.push(['off', await startPair(fake, hubClass, 'off')]);
    if (confinedOk) pairs.push(['require', await startPair(fake, hubClass, 'require')]);
    for (let r = 0; r < ROUNDS; r++) for (const [tag, p] of pairs) await round(p, r, tag, fake);
  } finally {
    for (const [, p] of pairs) await p.h.stop().catch(() => undefined);
    await fake.close().catch(() => undefined);
  }
  const unconfined = stats(pairs[0]![1].samples);
  const confined = confinedOk ? stats(pairs[1]![1].samples) : undefined;
  const res: HandoverResult = { rounds: ROUNDS, unconfined, ...(confined ? { confined, ratioP50: confined.p50 / unconfined.p50 } : {}) };
  out(`lock hand-over, release → the waiter's Write on disk (${ROUNDS} each, interleaved):\n` +
    `  confined:   ${confined ? `median ${f1(confined.p50)} ms, p90 ${f1(confined.p90)} ms, max ${f1(confined.max)} ms` : 'not measured (no bubblewrap)'}\n` +
    `  unconfined: median ${f1(unconfined.p50)} ms, p90 ${f1(unconfined.p90)} ms, max ${f1(unconfined.max)} ms` +
    `${res.ratioP50 ? `\n  ratio of medians ${f2(res.ratioP50)} (difference ${f1(confined!.p50 - unconfined.p50)} ms)` : ''}\n`);
  return res;
}

runAlone(import.meta.url, benchHandover);
