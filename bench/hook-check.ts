// The hub's lock check of one hook call, in process (no HTTP, no hook process): the time of
// `hub.hook.answer` for a Write of a free file (the check, then the auto lock), of a file the
// caller holds already (the usual repeated edit) and of a file another agent holds (the deny and
// its event), median over RUNS calls after a warm-up, as the
// hub's own share of bench/hook-cost.ts without the noise of processes and sockets. Two agents
// of an in-process hub whose children hang (real SQLite, the real lock service). A releases each
// free file after its sample (untimed), so every sample is the same case.
// Run alone: node --import tsx bench/hook-check.ts
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startTestHub } from '../test/helpers/hub.js';
import { waitForJob } from '../test/helpers/wait.js';

const RUNS = 2000;
const WARMUP = 200;
const HANG = { hang: [{ delayMs: 600_000, text: 'never' }] };

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p99 = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.99)]!;

const h = await startTestHub({ scripts: HANG });
try {
  const spawn = async (title: string): Promise<string> => {
    const id = (await h.call('spawn_agent', { prompt: '@script:hang', title })).job_id as string;
    await waitForJob(h.hub, id, (j) => j.status === 'running');
    return id;
  };
  const [a, b] = [await spawn('A'), await spawn('B')];
  const root = realpathSync(h.project);
  const write = (file: string) => ({ tool_name: 'Write', tool_input: { file_path: file, content: 'x' } });
  const held = path.join(root, 'held.txt');
  const took = await h.hub.hook.answer({ role: 'agent', jobId: b }, write(held));
  if (took.decision !== 'none') throw new Error(`B could not take ${held}: ${JSON.stringify(took)}`);
  const mine = path.join(root, 'mine.txt');
  if ((await h.hub.hook.answer({ role: 'agent', jobId: a }, write(mine))).decision !== 'none') throw new Error(`A could not take ${mine}`);
  const free: number[] = [];
  const deny: number[] = [];
  const own: number[] = [];
  for (let i = -WARMUP; i < RUNS; i++) {
    const file = path.join(root, `free-${i + WARMUP}.ts`);
    const t0 = performance.now();
    const v1 = await h.hub.hook.answer({ role: 'agent', jobId: a }, write(file));
    const t1 = performance.now();
    if (v1.decision !== 'none' || v1.locked?.[0] !== file) throw new Error(`free file: ${JSON.stringify(v1)}`);
    await h.hub.locks.release({ files: [file] }, { role: 'agent', jobId: a }); // untimed: A holds mine.txt and nothing else
    const t1b = performance.now();
    const v2 = await h.hub.hook.answer({ role: 'agent', jobId: a }, write(held));
    const t2 = performance.now();
    if (v2.decision !== 'deny') throw new Error(`held file: ${JSON.stringify(v2)}`);
    const v3 = await h.hub.hook.answer({ role: 'agent', jobId: a }, write(mine));
    const t3 = performance.now();
    if (v3.decision !== 'none' || (v3.locked ?? []).length !== 0) throw new Error(`own file: ${JSON.stringify(v3)}`);
    if (i >= 0) {
      free.push(t1 - t0);
      deny.push(t2 - t1b);
      own.push(t3 - t2);
    }
  }
  process.stdout.write(`hook check in process, free file (auto lock): p50 ${(median(free) * 1000).toFixed(0)} µs, p99 ${(p99(free) * 1000).toFixed(0)} µs (n=${RUNS})\n`);
  process.stdout.write(`hook check in process, own file (held by the caller already): p50 ${(median(own) * 1000).toFixed(0)} µs, p99 ${(p99(own) * 1000).toFixed(0)} µs (n=${RUNS})\n`);
  process.stdout.write(`hook check in process, held file (deny): p50 ${(median(deny) * 1000).toFixed(0)} µs, p99 ${(p99(deny) * 1000).toFixed(0)} µs (n=${RUNS})\n`);
} finally {
  await h.stop();
}
