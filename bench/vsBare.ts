// Shared parts of the Overseer-child-vs-bare-CLI benchmarks (vs-bare.ts: claude, vs-bare-codex.ts:
// codex): one timed Overseer run (spawn_agent → wait_for_agents return) and one timed bare run
// (spawn → exit), both checked to have written their file; the sides alternating, RUNS timed
// rounds after one untimed warm-up; the split of each run at the fake API's request arrivals;
// the medians and their report.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestHub } from '../test/helpers/hub.js';
import type { ProcessRun } from '../test/helpers/process.js';
import { f1, f2, statLine, stats, type Stats } from './common.js';

export const RUNS = 7;
export const TIMEOUT_MS = 120_000;

/** The prompt of one run: the fake's script `script`, writing `file`. */
export function promptFor(script: string, file: string): string {
  return `@script:${script} write one file into ${file}`;
}

export function checkWritten(file: string, who: string): void {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    /* reported below */
  }
  if (text !== 'bench\n') throw new Error(`${who} run did not write ${file}`);
}

/** One timed run: `start` on Date.now() (the fake's clock for request arrival), `ms` measured with performance.now(). */
export interface Timed {
  start: number;
  ms: number;
}

async function timed<T>(fn: () => Promise<T>): Promise<Timed & { value: T }> {
  const start = Date.now();
  const p0 = performance.now();
  const value = await fn();
  return { start, ms: performance.now() - p0, value };
}

/** One Overseer child that writes `file` (cwd: its directory): spawn_agent → wait_for_agents return; throws unless it succeeded and wrote the file. */
export async function overseerRun(hub: TestHub, o: { script: string; file: string; title: string; provider?: 'codex'; who: string }): Promise<Timed> {
  const { start, ms, value: { job_id, w } } = await timed(async () => {
    const { job_id } = await hub.call('spawn_agent', { prompt: promptFor(o.script, o.file), cwd: path.dirname(o.file), ...(o.provider ? { provider: o.provider } : {}), title: o.title });
    const w = await hub.call('wait_for_agents', { job_ids: [job_id], timeout_s: TIMEOUT_MS / 1000 });
    return { job_id: job_id as string, w };
  });
  if (w.done?.[0]?.status !== 'succeeded') throw new Error(`${o.who} ${job_id} did not succeed: ${JSON.stringify(w.done?.[0] ?? w).slice(0, 800)}`);
  checkWritten(o.file, 'Overseer');
  return { start, ms };
}

/** One bare CLI run (`run`) that writes `file`: spawn → exit; throws unless it exited 0 and wrote the file. */
export async function bareRun(o: { cli: string; file: string; run: () => Promise<ProcessRun> }): Promise<Timed> {
  const { start, ms, value: run } = await timed(o.run);
  if (run.code !== 0) throw new Error(`bare ${o.cli} exited ${run.code}: ${run.stderr.slice(-2000)}`);
  checkWritten(o.file, 'bare');
  return { start, ms };
}

/** A timed run and the arrival times at the fake of its requests. */
export interface SideRun extends Timed {
  requests?: number[];
}

/**
 * How a side's runs are split at its requests: `first` = start → first request and first
 * request → end (when there is a request); `tool` = those, plus first → second request and
 * second request → end (when there are exactly two).
 */
export type Split = 'first' | 'tool';

export interface Side {
  /** Round `n` (0 is the warm-up). */
  run: (n: number) => Promise<SideRun>;
  split?: Split;
}

/** The samples of one side, in ms. */
export class Samples {
  readonly total: number[] = [];
  /** start → first request */
  readonly first: number[] = [];
  /** first request → end */
  readonly rest: number[] = [];
  /** first → second request */
  readonly tool: number[] = [];
  /** second request → end */
  readonly tail: number[] = [];

  add(r: SideRun, split: Split | undefined): void {
    this.total.push(r.ms);
    const end = r.start + r.ms;
    const q = r.requests ?? [];
    if (split === 'first' && q[0] !== undefined) {
      this.first.push(q[0] - r.start);
      this.rest.push(end - q[0]);
    }
    if (split === 'tool' && q.length === 2) {
      this.first.push(q[0]! - r.start);
      this.rest.push(end - q[0]!);
      this.tool.push(q[1]! - q[0]!);
      this.tail.push(end - q[1]!);
    }
  }
}

/** The sides one after the other, in order, one untimed warm-up round and then `runs` timed rounds. */
export async function interleave<K extends string>(sides: Record<K, Side>, runs = RUNS): Promise<Record<K, Samples>> {
  const names = Object.keys(sides) as K[];
  const samples = Object.fromEntries(names.map((k) => [k, new Samples()])) as Record<K, Samples>;
  for (let n = 0; n <= runs; n++) {
    for (const k of names) {
      const r = await sides[k].run(n);
      if (n > 0) samples[k].add(r, sides[k].split);
    }
  }
  return samples;
}

export interface VsBareResult {
  overseer: Stats;
  bare: Stats;
  ratioP50: number;
  /** start → first request at the fake API */
  overseerFirstRequest: Stats;
  bareFirstRequest: Stats;
  /** first request → end (wait return / process exit) */
  overseerRest: Stats;
  bareRest: Stats;
}

/** The medians and spreads of an Overseer side against a bare side. */
export function vsBareResult(overseer: Samples, bare: Samples): VsBareResult {
  const r: VsBareResult = {
    overseer: stats(overseer.total),
    bare: stats(bare.total),
    ratioP50: NaN,
    overseerFirstRequest: stats(overseer.first),
    bareFirstRequest: stats(bare.first),
    overseerRest: stats(overseer.rest),
    bareRest: stats(bare.rest),
  };
  r.ratioP50 = r.overseer.p50 / r.bare.p50;
  return r;
}

/** "(difference <a - b> ms)" of two medians. */
export const difference = (a: Stats, b: Stats): string => `(difference ${f1(a.p50 - b.p50)} ms)`;

/** "Overseer <o> ms vs bare <b> ms". */
export const overseerVsBare = (o: number, b: number): string => `Overseer ${f1(o)} ms vs bare ${f1(b)} ms`;

/** The two wall-time lines: the Overseer `child` and the `bare` command. */
export function wallLines(r: VsBareResult, child: string, bare: string): string {
  return statLine(`${child}: spawn_agent → wait_for_agents return (${RUNS} runs)`, r.overseer) + statLine(`${bare}: spawn → exit`, r.bare);
}

/** "ratio Overseer/bare (median): …  (difference … ms)". */
export const ratioText = (r: VsBareResult): string => `ratio Overseer/bare (median): ${f2(r.ratioP50)}  ${difference(r.overseer, r.bare)}`;

/** The split at the first request, medians; `why` explains the start-up difference. */
export function splitText(r: VsBareResult, why: string): string {
  return `split, medians: start → first API request: ${overseerVsBare(r.overseerFirstRequest.p50, r.bareFirstRequest.p50)} ` +
    `(Δ ${f1(r.overseerFirstRequest.p50 - r.bareFirstRequest.p50)} ms: ${why}); ` +
    `first request → end: ${overseerVsBare(r.overseerRest.p50, r.bareRest.p50)}`;
}
