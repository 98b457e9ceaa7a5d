// Benchmark: what confinement and the lock guard cost (issue 18).
//   a) A confined Overseer child vs the same child unconfined (OVERSEER_CONFINE=off), both the
//      real claude CLI on the fake model running one Bash call and one Write; interleaved, 7
//      timed runs each. The unconfined child is the baseline measured in the same run.
//   b) A new lock in force inside a running confined child: one run of the lock-mount helper
//      (python3 + setns + mount) against a bubblewrap'd process, bind then unbind, 10 times.
//   c) The lock guard's check after a tool call, with 20 held files untouched (stat only) and
//      with one of them changed (read, hash, put back), vs the bare child's own time per tool call.
// Run alone: node --import tsx bench/confine-cost.ts
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startFakeAnthropic, type FakeAnthropic, type Script } from '../src/fakemodel/fakeAnthropic.js';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { probeBwrap } from '../src/confine/launcher.js';
import { bwrapArgs } from '../src/confine/plan.js';
import { innerPid, pythonHelper } from '../src/confine/lockMounts.js';
import { LockGuard } from '../src/confine/lockGuard.js';
import { which } from '../src/launch/which.js';
import { f1, f2, out, REPO_ROOT, removeDir, runAlone, stats, tempDir, type Stats } from './common.js';
import { interleave, overseerRun } from './vsBare.js';

const SCRIPT = 'bench-confine';

/** One Bash call, then a Write of the file named in the prompt, then a text turn. */
const bashThenWrite: Script = (ctx) => {
  const file = /into (\S+)/.exec(ctx.prompt)?.[1];
  if (ctx.step === 0) return { tools: [{ name: 'Bash', input: { command: 'ls -la > /dev/null' } }] };
  if (ctx.step === 1 && file) return { tools: [{ name: 'Write', input: { file_path: file, content: 'bench\n' } }] };
  return { text: 'done' };
};

export interface ConfineCostResult {
  confined: Stats;
  unconfined: Stats;
  ratioP50: number;
  lockMountMs?: Stats;
  guardIdleUs: Stats;
  guardChangedUs: Stats;
}

async function childCost(): Promise<{ confined: Stats; unconfined: Stats }> {
  let fake: FakeAnthropic | undefined;
  const hubs: TestHub[] = [];
  const work = await tempDir('confine-cost');
  try {
    fake = await startFakeAnthropic({ scripts: { [SCRIPT]: bashThenWrite } });
    const on = await startTestHub({ fake, config: { confine: 'auto' } });
    const off = await startTestHub({ fake, config: { confine: 'off' } });
    hubs.push(on, off);
    await Promise.all([mkdir(path.join(work, 'on')), mkdir(path.join(work, 'off'))]);
    const s = await interleave({
      confined: { split: 'first', run: (n) => overseerRun(on, { script: SCRIPT, file: path.join(work, 'on', `o-${n}.txt`), title: `on ${n}`, who: 'confined child' }) },
      unconfined: { split: 'first', run: (n) => overseerRun(off, { script: SCRIPT, file: path.join(work, 'off', `o-${n}.txt`), title: `off ${n}`, who: 'unconfined child' }) },
    });
    return { confined: stats(s.confined.total), unconfined: stats(s.unconfined.total) };
  } finally {
    for (const h of hubs) await h.stop().catch(() => undefined);
    await fake?.close().catch(() => undefined);
    await removeDir(work);
  }
}

async function lockMountCost(): Promise<Stats | undefined> {
  const probe = probeBwrap();
  const python = which('python3');
  if (!probe.ok || !python) return undefined;
  const work = await tempDir('confine-mount');
  const file = path.join(work, 'held.txt');
  await writeFile(file, 'x');
  const child = spawn(probe.bwrap, [...bwrapArgs({ hide: [], hideFiles: [], reveal: [], readOnly: [] }), '--', 'sleep', '60'], { stdio: 'ignore' });
  try {
    let ns: number | undefined;
    for (let i = 0; i < 500 && ns === undefined; i++) {
      ns = innerPid(child.pid!);
      if (ns === undefined) await new Promise((r) => setTimeout(r, 10)); // bubblewrap starting (5 s at most)
    }
    if (ns === undefined) return undefined;
    const helper = pythonHelper(python, path.join(REPO_ROOT, 'hooks', 'overseer-lockmount.py'));
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      const r = await helper([String(ns), 'ro', file]);
      samples.push(performance.now() - t0);
      if (!r.ok) throw new Error(r.stderr);
      await helper([String(ns), 'rw', file]);
    }
    return stats(samples);
  } finally {
    child.kill('SIGKILL');
    await removeDir(work);
  }
}

async function guardCost(): Promise<{ idle: Stats; changed: Stats }> {
  const work = await tempDir('confine-guard');
  try {
    const held = Array.from({ length: 20 }, (_, i) => ({ path: path.join(work, `f${i}.ts`), holder: 'j-a' }));
    for (const h of held) writeFileSync(h.path, 'x'.repeat(20_000));
    const g = new LockGuard({ held: async () => held, keepDir: () => path.join(work, 'kept'), report: () => undefined, now: () => 0, refused: () => undefined });
    await g.locksChanged();
    const idle: number[] = [];
    const changed: number[] = [];
    for (let i = 0; i < 200; i++) {
      let t0 = performance.now();
      g.toolsEnded('j-b', [{ toolUseId: `t${i}` }]);
      idle.push((performance.now() - t0) * 1000);
      writeFileSync(held[i % 20]!.path, `changed ${i}`);
      t0 = performance.now();
      g.toolsEnded('j-b', [{ toolUseId: `u${i}` }]);
      changed.push((performance.now() - t0) * 1000);
    }
    return { idle: stats(idle), changed: stats(changed) };
  } finally {
    await removeDir(work);
  }
}

export async function benchConfineCost(): Promise<ConfineCostResult> {
  const { confined, unconfined } = await childCost();
  const lockMountMs = await lockMountCost();
  const { idle, changed } = await guardCost();
  const r: ConfineCostResult = { confined, unconfined, ratioP50: confined.p50 / unconfined.p50, lockMountMs, guardIdleUs: idle, guardChangedUs: changed };
  out(
    `confined child (Bash + Write): median ${f1(confined.p50)} ms; unconfined: ${f1(unconfined.p50)} ms; ratio ${f2(r.ratioP50)} (difference ${f1(confined.p50 - unconfined.p50)} ms)\n` +
      `a new lock in force in a running child (helper run): ${lockMountMs ? `median ${f1(lockMountMs.p50)} ms, max ${f1(lockMountMs.max)} ms` : 'not measured (no bubblewrap or python3)'}\n` +
      `lock guard per tool call, 20 held files: untouched ${f1(idle.p50)} µs, one changed and put back ${f1(changed.p50)} µs (medians)\n`,
  );
  return r;
}

runAlone(import.meta.url, benchConfineCost);
