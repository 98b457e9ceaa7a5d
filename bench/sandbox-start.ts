// The script sandbox's own costs (src/scripts/sandbox.ts), from the built package:
//   npm run build && node --import tsx bench/sandbox-start.ts
// start: a run of `return 1` from runInSandbox to its outcome (worker, WebAssembly module, prelude), median of 20,
// back to back (the previous run's worker is still being torn down) and spaced (300 ms between runs);
// budget: one synchronous `budget.spent()` (the worker asks the hub and waits on shared memory), mean of 2,000;
// calls: 1,000 sequential agent() calls answered at once (what a replay from the journal does), one run.
// An argument names another build of the sandbox module to measure (a path to its sandbox.js).
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';

type Run = (o: { source: string; args: unknown; host: unknown }) => Promise<{ status: string; value?: unknown }>;
const file = path.resolve(process.argv[2] ?? 'dist/scripts/sandbox.js');
const { runInSandbox } = (await import(pathToFileURL(file).href)) as { runInSandbox: Run };
const host = { call: async () => 'ok', log: () => undefined, phase: () => undefined, budget: () => ({ total: 10, spent: 1, reserved: 0 }) };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const timed = async (source: string): Promise<number> => {
  const t0 = performance.now();
  const o = await runInSandbox({ source, args: undefined, host });
  if (o.status !== 'returned') throw new Error(JSON.stringify(o));
  return performance.now() - t0;
};

await timed('return 1');
const starts: number[] = [];
for (let i = 0; i < 20; i++) starts.push(await timed('return 1'));
const base = median(starts);
const spaced: number[] = [];
for (let i = 0; i < 20; i++) { await new Promise((r) => setTimeout(r, 300)); spaced.push(await timed('return 1')); }
const budget = (await timed('let s = 0; for (let i = 0; i < 2000; i++) s += budget.spent(); return s') - base) / 2000;
const calls = await timed('for (let i = 0; i < 1000; i++) await agent("x" + i); return 1');
console.log(JSON.stringify({ module: path.relative(process.cwd(), file), start_median_ms: +base.toFixed(1), start_spaced_median_ms: +median(spaced).toFixed(1), budget_call_ms: +budget.toFixed(3), calls_1000_ms: Math.round(calls) }));
