// `npm run bench`: runs every benchmark in order, prints each one's figures, then a summary
// table with the goals beside the figures, and writes it all to bench/results/latest.json.
// Each benchmark runs in a process of its own (this script again, `--one <name>`): a benchmark
// measured after others shared their heap, their timers and whatever they left behind, and a
// process grown large makes every spawn it times slower (fork copies its page tables: /bin/true
// took 6-7 ms late in a run, 4 ms from a fresh process).
// Benchmarks measure; they do not assert. A goal that is missed is reported, not failed; a
// benchmark that crashes is reported and makes the exit code 1 (the others still run), and so
// does an entry's `guard` out of bounds (a regression guard, e.g. PostgreSQL against SQLite).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_DIR, f1, f2, out } from './common.js';
import { hubNodeArgs } from '../src/hubproc/spawn.js';
import { benchSpawnLatency, type SpawnLatencyResult } from './spawn-latency.js';
import { benchDependencyLatency, type DependencyLatencyResult } from './dependency-latency.js';
import { benchWaitWakeup, type WaitWakeupResult } from './wait-wakeup.js';
import { benchVsBare, type VsBareResult } from './vs-bare.js';
import { benchVsBareCodex, type VsBareCodexResult } from './vs-bare-codex.js';
import { benchWorktree } from './worktree.js';
import { benchHookCost, type HookCostResult } from './hook-cost.js';
import { LEVELS, benchCoordLatency, opLabel, type CoordLatencyResult } from './coord-latency.js';
import { benchWakeups, type WakeupsResult } from './wakeups.js';
import { benchCas, type CasResult } from './cas.js';
import { benchKbSearch, type KbSearchResult } from './kb-search.js';
import { benchWorkflowOverhead, type WorkflowOverheadResult } from './workflow-overhead.js';
import { benchFirstRequest, type FirstRequestResult } from './first-request.js';
import { benchHubLifecycle, type HubLifecycleResult } from './hub-lifecycle.js';
import { benchConfineCost, type ConfineCostResult } from './confine-cost.js';
import { benchHandover, type HandoverResult } from './handover.js';
import { benchWatch, type WatchBenchResult } from './watch.js';
import { benchFloor, type FloorBenchResult } from './floor.js';
import { benchDashboard, type DashboardBenchResult } from './dashboard.js';
import { benchBudget, type BudgetBenchResult } from './budget.js';
import { benchSearch, type SearchBenchResult } from './search.js';
import { benchDispatch, type DispatchBenchResult } from './dispatch.js';
import { benchOverlap, type OverlapBenchResult } from './overlap.js';
import { benchMergeQueue, type MergeQueueBenchResult } from './merge-queue.js';
import { benchPerEdit, type PerEditResult } from './per-edit.js';
import { benchCmdHook, type CmdHookResult } from './cmd-hook.js';
import { benchHttpLoad, type HttpLoadResult } from './http-load.js';
import { benchHubMem, type HubMemResult } from './hub-mem.js';
import { benchFanout, type FanoutResult } from './fanout.js';
import { benchHandshake, type HandshakeResult } from './mcp-handshake.js';
import { benchFirstRequestTime, type FirstRequestTimeResult } from './first-request-time.js';
import { benchScriptAgent, SCRIPT_AGENT_GOAL_MS, type ScriptAgentResult } from './script-agent.js';
import { benchScriptReplay, SCRIPT_REPLAY_GOAL_MS, type ScriptReplayResult } from './script-replay.js';
import { benchStoreCompare, GUARD_HANDOVER_MS, GUARD_RATIO, handoverBound, type StoreCompareResult } from './store-compare.js';
import { benchWorkers, QUEUE_GUARD_MS, type WorkersResult } from './workers.js';

type WorktreeResult = Awaited<ReturnType<typeof benchWorktree>>;

interface Row {
  benchmark: string;
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  goal: string;
  /** 'yes' | 'no' | '' (no goal for this figure) */
  met: string;
}

interface Entry<T> {
  name: string;
  title: string;
  /** One of the figures of the performance goals (issue 14): run by `--perf`, listed in their own table. */
  perf?: true;
  run: () => Promise<T>;
  rows: (r: T) => Row[];
  /** node flags for the entry's process (e.g. the background hub's, for a benchmark of the in-process hub's CPU) */
  nodeArgs?: string[];
  /** A regression guard that fails the run (exit 1): what is out of bounds, empty when all is in. */
  guard?: (r: T) => string[];
}

const ms = (n: number): string => `${f1(n)} ms`;
const met = (ok: boolean): string => (ok ? 'yes' : 'NO');
/** A ratio far below 1 with two significant digits (f2 would print 0.00). */
const small = (n: number): string => (Number.isFinite(n) ? (n >= 0.1 ? f2(n) : n.toPrecision(2)) : String(n));

const entries: Entry<any>[] = [
  {
    name: 'spawn_latency',
    title: '1. spawn_agent → child exec (fake binary, free capacity)',
    run: benchSpawnLatency,
    rows: (r: SpawnLatencyResult) => [
      { benchmark: 'spawn → exec', figure: 'p50', value: ms(r.hub.p50), baseline: ms(r.baseline.p50), ratio: f2(r.ratioP50), goal: 'p50 ≤ 20 ms', met: met(r.hub.p50 <= 20) },
      { benchmark: 'spawn → exec', figure: 'p99', value: ms(r.hub.p99), baseline: ms(r.baseline.p99), ratio: f2(r.hub.p99 / r.baseline.p99), goal: '', met: '' },
      { benchmark: 'spawn → exec', figure: 'min', value: ms(r.hub.min), baseline: ms(r.baseline.min), ratio: f2(r.hub.min / r.baseline.min), goal: '', met: '' },
    ],
  },
  {
    name: 'dependency_latency',
    title: '2. dependency done → dependent exec',
    run: benchDependencyLatency,
    rows: (r: DependencyLatencyResult) => [
      { benchmark: 'dep done → dependent exec', figure: 'p50', value: ms(r.latency.p50), baseline: '', ratio: '', goal: '≤ 50 ms', met: met(r.latency.p50 <= 50) },
      { benchmark: 'dep done → dependent exec', figure: 'p99', value: ms(r.latency.p99), baseline: '', ratio: '', goal: '(≤ 50 ms)', met: met(r.latency.p99 <= 50) },
    ],
  },
  {
    name: 'wait_wakeup',
    title: '3. wait_for_agents wake-up after a child ends (includes the hub noticing the exit)',
    run: benchWaitWakeup,
    rows: (r: WaitWakeupResult) => [
      { benchmark: 'wait wake-up (incl. exit notice)', figure: 'p50', value: ms(r.wakeup.p50), baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'wait wake-up (incl. exit notice)', figure: 'p99', value: ms(r.wakeup.p99), baseline: '', ratio: '', goal: 'p99 ≤ 10 ms', met: met(r.wakeup.p99 <= 10) },
    ],
  },
  {
    name: 'vs_bare',
    title: '4. Overseer child vs bare claude -p (real claude, fake model, one Write)',
    perf: true,
    run: benchVsBare,
    rows: (r: VsBareResult) => [
      { benchmark: 'Overseer child vs bare claude', figure: 'median wall', value: ms(r.overseer.p50), baseline: ms(r.bare.p50), ratio: f2(r.ratioP50), goal: 'ratio ≤ 1.05', met: met(r.ratioP50 <= 1.05) },
      { benchmark: 'Overseer child vs bare claude', figure: 'start → 1st API req', value: ms(r.overseerFirstRequest.p50), baseline: ms(r.bareFirstRequest.p50), ratio: f2(r.overseerFirstRequest.p50 / r.bareFirstRequest.p50), goal: '', met: '' },
      { benchmark: 'Overseer child vs bare claude', figure: '1st API req → end', value: ms(r.overseerRest.p50), baseline: ms(r.bareRest.p50), ratio: f2(r.overseerRest.p50 / r.bareRest.p50), goal: '', met: '' },
    ],
  },
  {
    name: 'worktree',
    title: '5. createWorktree vs plain git worktree add -b (1,000-file repo)',
    run: benchWorktree,
    rows: (r: WorktreeResult) => [
      { benchmark: 'createWorktree', figure: 'p50', value: ms(r.p50), baseline: ms(r.baselineP50), ratio: f2(r.ratio), goal: '', met: '' },
      { benchmark: 'createWorktree', figure: 'p90', value: ms(r.p90), baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'hub_lifecycle',
    title: '6b. hub start → first answered call (fresh / after kill -9), overseer mcp cold start, memory per MCP session',
    run: benchHubLifecycle,
    rows: (r: HubLifecycleResult) => [
      { benchmark: 'hub start → first call', figure: `fresh p50 (n=${r.runs})`, value: ms(r.freshMs), baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'hub start → first call', figure: `stale claim p50 (n=${r.runs})`, value: ms(r.takeoverMs), baseline: ms(r.freshMs), ratio: f2(r.takeoverMs / r.freshMs), goal: '', met: '' },
      { benchmark: 'overseer mcp cold → tools/list', figure: `p50 (n=${r.runs})`, value: ms(r.bridgeColdMs), baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'MCP session memory', figure: `per session (${r.sessions})`, value: `heap ${f1(r.heapPerSessionKb)} kB, RSS ${f1(r.rssPerSessionKb)} kB`, baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'hook_cost',
    title: '7. PreToolUse lock hook per edit (node hooks/overseer-hook.mjs, Write, real hub) vs node -e 0',
    run: benchHookCost,
    rows: (r: HookCostResult) => [
      { benchmark: 'lock hook per edit', figure: 'median, free file (auto-lock)', value: ms(r.free.p50), baseline: `${ms(r.baseline.p50)} node -e 0`, ratio: f2(r.ratioFree), goal: 'ratio ≤ 1.3', met: met(r.ratioFree <= 1.3) },
      { benchmark: 'lock hook per edit', figure: 'median, held file (deny)', value: ms(r.deny.p50), baseline: `${ms(r.baseline.p50)} node -e 0`, ratio: f2(r.ratioDeny), goal: 'ratio ≤ 1.3', met: met(r.ratioDeny <= 1.3) },
      { benchmark: 'lock hook per edit', figure: 'of which hub (POST /hook) p50', value: ms(r.postFree.p50), baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'coord_latency',
    title: '8. coordination tool-call latency over HTTP (MCP SDK clients, lead token, closed loop)',
    run: benchCoordLatency,
    rows: (r: CoordLatencyResult) =>
      LEVELS.flatMap((n) =>
        (['write_note', 'read_note', 'lock_release'] as const).map((op): Row => {
          const f = r.levels[String(n)]![op];
          const one = r.levels['1']![op];
          const at64 = n === 64;
          return {
            benchmark: 'coord call latency (HTTP)',
            figure: `${opLabel(op)} ×${n} p50/p99 (${f.throughput.toFixed(0)}/s)`,
            value: `${f1(f.latency.p50)} / ${f1(f.latency.p99)} ms`,
            baseline: n === 1 ? '' : `${f1(one.latency.p50)} ms ×1 p50`,
            ratio: n === 1 ? '' : f2(f.latency.p50 / one.latency.p50),
            goal: at64 ? 'p50 ≤ 2 / p99 ≤ 10 ms' : '',
            met: at64 ? met(f.latency.p50 <= 2 && f.latency.p99 <= 10) : '',
          };
        }),
      ),
  },
  {
    name: 'wakeups',
    title: '9. note write → watcher woken, lock release → waiter granted (HTTP) vs 1 s polling',
    run: benchWakeups,
    rows: (r: WakeupsResult) => [
      { benchmark: 'note write → watcher', figure: 'p50', value: ms(r.note.p50), baseline: `${ms(r.polling.p50)} poll 1 s`, ratio: small(r.note.p50 / r.polling.p50), goal: '', met: '' },
      { benchmark: 'note write → watcher', figure: 'p99', value: ms(r.note.p99), baseline: `${ms(r.polling.p99)} poll 1 s`, ratio: small(r.note.p99 / r.polling.p99), goal: 'p99 ≤ 10 ms', met: met(r.note.p99 <= 10) },
      { benchmark: 'lock release → waiter', figure: 'p50', value: ms(r.lock.p50), baseline: `${ms(r.polling.p50)} poll 1 s`, ratio: small(r.lock.p50 / r.polling.p50), goal: '', met: '' },
      { benchmark: 'lock release → waiter', figure: 'p99', value: ms(r.lock.p99), baseline: `${ms(r.polling.p99)} poll 1 s`, ratio: small(r.lock.p99 / r.polling.p99), goal: 'p99 ≤ 10 ms', met: met(r.lock.p99 <= 10) },
      { benchmark: 'baseline: read_note every 1 s', figure: `mean (n=${r.polling.n})`, value: ms(r.polling.mean), baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'cas',
    title: '10. 64 clients × 1,000 compare-and-set increments on one note',
    run: benchCas,
    rows: (r: CasResult) => [
      { benchmark: `CAS 64×1000 (${r.transport === 'http' ? 'HTTP' : 'in-memory clients'})`, figure: 'final value', value: String(r.finalValue), baseline: '', ratio: '', goal: `= ${r.expected}`, met: met(r.exact) },
      { benchmark: `CAS 64×1000 (${r.transport === 'http' ? 'HTTP' : 'in-memory clients'})`, figure: 'conflicts', value: `${r.conflicts} of ${r.attempts} attempts`, baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: `CAS 64×1000 (${r.transport === 'http' ? 'HTTP' : 'in-memory clients'})`, figure: 'total time', value: `${r.seconds.toFixed(1)} s`, baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: `CAS 64×1000 (${r.transport === 'http' ? 'HTTP' : 'in-memory clients'})`, figure: 'HTTP probe (3 s)', value: `${r.probeRate.toFixed(0)} incr/s`, baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'kb_search',
    title: '11. search_kb on 10,000 entries',
    run: benchKbSearch,
    rows: (r: KbSearchResult) => [
      { benchmark: 'search_kb (10k entries)', figure: 'p50', value: ms(r.search.p50), baseline: '', ratio: '', goal: 'p50 ≤ 5 ms', met: met(r.search.p50 <= 5) },
      { benchmark: 'search_kb (10k entries)', figure: 'p99', value: ms(r.search.p99), baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'memory section at spawn', figure: 'p50', value: ms(r.memory.p50), baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'workflow_overhead',
    title: '12. workflow overhead per phase (scripted phase agents)',
    run: () => benchWorkflowOverhead(),
    rows: (r: WorkflowOverheadResult) => [
      { benchmark: 'workflow overhead per phase', figure: 'p50', value: ms(r.p50), baseline: `${ms(r.plainJobMs)} plain job`, ratio: '', goal: '≤ 100 ms', met: met(r.p50 <= 100) },
    ],
  },
  {
    name: 'vs_bare_codex',
    title: '13. Overseer codex child vs bare codex exec (real codex, fake model, one shell call)',
    perf: true,
    run: benchVsBareCodex,
    rows: (r: VsBareCodexResult) => [
      { benchmark: 'Overseer codex child vs bare codex', figure: 'median wall', value: ms(r.overseer.p50), baseline: ms(r.bare.p50), ratio: f2(r.ratioP50), goal: 'ratio ≤ 1.05', met: met(r.ratioP50 <= 1.05) },
      { benchmark: 'Overseer codex child vs bare codex', figure: 'median wall, lockMode off', value: ms(r.overseerNoLocks.p50), baseline: ms(r.bare.p50), ratio: f2(r.ratioNoLocksP50), goal: '', met: '' },
      { benchmark: 'Overseer codex child vs bare codex', figure: 'start → 1st API req', value: ms(r.overseerFirstRequest.p50), baseline: ms(r.bareFirstRequest.p50), ratio: f2(r.overseerFirstRequest.p50 / r.bareFirstRequest.p50), goal: '', met: '' },
      { benchmark: 'Overseer codex child vs bare codex', figure: 'shell call (1st → 2nd req)', value: ms(r.overseerToolCall.p50), baseline: ms(r.bareToolCall.p50), ratio: f2(r.overseerToolCall.p50 / r.bareToolCall.p50), goal: '', met: '' },
      { benchmark: 'Overseer codex child vs bare codex', figure: 'last API req → end', value: ms(r.overseerTail.p50), baseline: ms(r.bareTail.p50), ratio: f2(r.overseerTail.p50 / r.bareTail.p50), goal: '', met: '' },
    ],
  },
  {
    name: 'first_request',
    title: '14. first /v1/messages request of an Overseer claude child vs bare claude -p (same prompt, tool search on)',
    perf: true,
    run: benchFirstRequest,
    rows: (r: FirstRequestResult) => [
      { benchmark: 'first request size', figure: 'body', value: `${r.overseer.bytes} B`, baseline: `${r.bare.bytes} B`, ratio: f2(r.ratio), goal: 'ratio ≤ 1.02', met: met(r.ratio <= 1.02) },
      { benchmark: 'first request size', figure: 'tools', value: `${r.overseer.toolsBytes} B`, baseline: `${r.bare.toolsBytes} B`, ratio: f2(r.overseer.toolsBytes / r.bare.toolsBytes), goal: '', met: '' },
    ],
  },
  {
    name: 'confine_cost',
    title: '15. confinement and the lock guard: confined vs unconfined claude child (Bash + Write), lock-mount helper, guard check per tool call',
    run: benchConfineCost,
    rows: (r: ConfineCostResult) => [
      { benchmark: 'confined vs unconfined child', figure: 'median wall', value: ms(r.confined.p50), baseline: ms(r.unconfined.p50), ratio: f2(r.ratioP50), goal: '', met: '' },
      { benchmark: 'new lock in a running child', figure: 'helper run p50', value: r.lockMountMs ? ms(r.lockMountMs.p50) : 'n/a', baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'lock guard, 20 held files', figure: 'untouched p50', value: `${f1(r.guardIdleUs.p50)} µs`, baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'lock guard, 20 held files', figure: 'one put back p50', value: `${f1(r.guardChangedUs.p50)} µs`, baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'handover',
    title: '15b. a lock handed over: the holder\'s release → the waiter\'s Write on disk (two claude children, 20 hand-overs, confined vs unconfined, interleaved)',
    run: benchHandover,
    rows: (r: HandoverResult) => [
      { benchmark: 'lock hand-over, release → write landed', figure: 'median', value: r.confined ? ms(r.confined.p50) : 'n/a (no bubblewrap)', baseline: `${ms(r.unconfined.p50)} unconfined`, ratio: r.ratioP50 ? f2(r.ratioP50) : '', goal: '', met: '' },
      { benchmark: 'lock hand-over, release → write landed', figure: 'p90', value: r.confined ? ms(r.confined.p90) : 'n/a', baseline: `${ms(r.unconfined.p90)} unconfined`, ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'floor',
    title: '16. the hub serving the floor (64 jobs): readFloor, and /api/floor/stream change → frame with 0 and 4 other watchers',
    run: benchFloor,
    rows: (r: FloorBenchResult) => {
      const us = (n: number): string => `${f1(n * 1000)} µs`;
      const none = r.changeCall['no stream']!;
      return [
        { benchmark: 'floor of 64 jobs', figure: 'readFloor p50', value: us(r.readFloor.p50), baseline: `${us(r.selectJobs.p50)} SELECT * FROM jobs`, ratio: f2(r.readFloor.p50 / r.selectJobs.p50), goal: '≤ 5 ms', met: met(r.readFloor.p50 <= 5) },
        { benchmark: 'floor of 64 jobs', figure: 'readFloor p99', value: us(r.readFloor.p99), baseline: `${us(r.selectJobs.p99)} SELECT * FROM jobs`, ratio: f2(r.readFloor.p99 / r.selectJobs.p99), goal: '', met: '' },
        { benchmark: 'floor of 64 jobs', figure: 'buildFloor / stringify p50', value: `${us(r.buildFloor.p50)} / ${us(r.stringify.p50)}`, baseline: `${(r.frameBytes / 1024).toFixed(1)} kB frame`, ratio: '', goal: '', met: '' },
        ...Object.entries(r.latency).flatMap(([label, s]): Row[] => [
          { benchmark: 'floor stream: change → frame', figure: `${label} p50`, value: ms(s.p50), baseline: '', ratio: '', goal: '', met: '' },
          { benchmark: 'floor stream: change → frame', figure: `${label} p99`, value: ms(s.p99), baseline: '', ratio: '', goal: 'p99 ≤ 250 ms', met: met(s.p99 <= 250) },
        ]),
        ...Object.entries(r.changeCall).filter(([label]) => label !== 'no stream').map(([label, s]): Row => ({
          benchmark: 'lock_files call with streams open', figure: `${label} p50 (loop ${(r.elu[label]! * 100).toFixed(0)}% busy)`, value: ms(s.p50), baseline: `${ms(none.p50)} no stream (${(r.elu['no stream']! * 100).toFixed(0)}%)`, ratio: f2(s.p50 / none.p50), goal: '', met: '',
        })),
      ];
    },
  },
  {
    name: 'watch',
    title: '17. overseer watch in tmux (100×30), 64 jobs: change → screen, CPU and RSS, the hub\'s cost of serving it',
    run: benchWatch,
    rows: (r: WatchBenchResult) => [
      { benchmark: 'watch refresh (hub stream)', figure: 'p50', value: ms(r.hubLatency.p50), baseline: `${ms(r.streamLatency.p50)} bare stream client`, ratio: f2(r.hubLatency.p50 / r.streamLatency.p50), goal: '≤ 250 ms', met: met(r.hubLatency.p50 <= 250) },
      { benchmark: 'watch refresh (hub stream)', figure: 'p99', value: ms(r.hubLatency.p99), baseline: `${ms(r.streamLatency.p99)} bare stream client`, ratio: f2(r.hubLatency.p99 / r.streamLatency.p99), goal: '≤ 250 ms', met: met(r.hubLatency.p99 <= 250) },
      { benchmark: 'watch refresh (database, no hub)', figure: 'p50 / p99', value: `${f1(r.dbLatency.p50)} / ${f1(r.dbLatency.p99)} ms`, baseline: '', ratio: '', goal: 'p99 ≤ 250 ms', met: met(r.dbLatency.p99 <= 250) },
      { benchmark: `watch CPU (${r.jobs} jobs)`, figure: 'idle / 10 changes/s', value: `${f1(r.watchIdle.cpuPct)}% / ${f1(r.watchBusy.cpuPct)}%`, baseline: `${f1(r.statusIdle.cpuPct)}% / ${f1(r.statusBusy.cpuPct)}% status --watch`, ratio: f2(r.watchBusy.cpuPct / r.statusBusy.cpuPct), goal: '', met: '' },
      { benchmark: `watch RSS (${r.jobs} jobs)`, figure: 'idle / changes / peak', value: `${f1(r.watchIdle.rssMb)} / ${f1(r.watchBusy.rssMb)} / ${f1(r.watchPeakMb)} MB`, baseline: `${f1(r.statusBusy.rssMb)} MB status --watch`, ratio: f2(r.watchBusy.rssMb / r.statusBusy.rssMb), goal: '', met: '' },
      { benchmark: 'hub CPU serving one watch', figure: `${r.changes} changes in 10 s`, value: `${f1(r.hubCpuWithWatchPct)}%`, baseline: `${f1(r.hubCpuNoWatcherPct)}% no watcher`, ratio: f2(r.hubCpuWithWatchPct / r.hubCpuNoWatcherPct), goal: '', met: '' },
    ],
  },
  {
    name: 'search',
    title: '18. search_output on 10,000 transcripts (generated Claude and Codex events through the real indexer)',
    run: benchSearch,
    rows: (r: SearchBenchResult) => {
      const q = (name: string, filter: string) => r.queries.find((x) => x.name === name && x.filter === filter)!.stats;
      const b = 'search_output (10k transcripts)';
      return [
        { benchmark: b, figure: `all ${r.overall.n} queries p50`, value: ms(r.overall.p50), baseline: `${ms(r.rawFts.p50)} raw FTS5 match`, ratio: f2(r.overall.p50 / r.rawFts.p50), goal: 'p50 ≤ 20 ms', met: met(r.overall.p50 <= 20) },
        { benchmark: b, figure: `all ${r.overall.n} queries p99`, value: ms(r.overall.p99), baseline: `${ms(r.rawFts.p99)} raw FTS5 match`, ratio: f2(r.overall.p99 / r.rawFts.p99), goal: '', met: '' },
        { benchmark: b, figure: 'common word p50', value: ms(q('common word', '—').p50), baseline: `${ms(r.bm25.p50)} bm25 order`, ratio: small(q('common word', '—').p50 / r.bm25.p50), goal: '', met: '' },
        { benchmark: b, figure: 'rare word p50', value: ms(q('rare word', '—').p50), baseline: `${ms(r.like.p50)} LIKE scan`, ratio: small(q('rare word', '—').p50 / r.like.p50), goal: '', met: '' },
        { benchmark: b, figure: 'common word, job_id / label (20 jobs) p50', value: `${f1(q('common word', 'job_id').p50)} / ${f1(q('common word', 'label (20 jobs)').p50)} ms`, baseline: '', ratio: '', goal: '', met: '' },
        { benchmark: b, figure: 'common word, label (100 jobs) / agent subtree p50', value: `${f1(q('common word', 'label (100 jobs, join)').p50)} / ${f1(q('common word', 'agent subtree (11 jobs)').p50)} ms`, baseline: '', ratio: '', goal: '', met: '' },
        { benchmark: b, figure: 'prefix (migrat*, …) p50', value: ms(q('prefix', '—').p50), baseline: '', ratio: '', goal: '', met: '' },
        { benchmark: b, figure: 'over MCP (in-memory client) p50', value: ms(r.mcp.p50), baseline: '', ratio: '', goal: '', met: '' },
        { benchmark: 'transcript indexer', figure: 'per line: in the call + batched writes', value: `${f1(r.lineUsPerLine)} + ${f1(r.writeUsPerLine)} µs`, baseline: `${f1(r.parserUsPerLine)} µs the supervisor's parser`, ratio: f2(r.lineUsPerLine / r.parserUsPerLine), goal: '', met: '' },
        { benchmark: 'transcript index', figure: 'size', value: `${r.rows} rows, ${(r.dbBytes / 1024 / 1024).toFixed(0)} MB`, baseline: `FTS5 ${(r.ftsBytes / 1024 / 1024).toFixed(0)} MB`, ratio: '', goal: '', met: '' },
      ];
    },
  },
  {
    name: 'dashboard',
    title: '19. the dashboard in Chromium, hub process with 32 running jobs: first load, state change → DOM, hub CPU/RSS with 10 pages open',
    run: benchDashboard,
    rows: (r: DashboardBenchResult) => {
      const none = r.load['0 pages']!;
      return [
        { benchmark: 'dashboard first load (cold)', figure: 'bytes over the wire', value: `${(r.firstLoad.bytes / 1024).toFixed(1)} kB in ${r.firstLoad.requests}`, baseline: `${(r.firstLoad.floorBytes / 1024).toFixed(1)} kB the floor JSON`, ratio: f2(r.firstLoad.bytes / r.firstLoad.floorBytes), goal: '', met: '' },
        { benchmark: 'dashboard first load (cold)', figure: 'to the first card p50 / p99', value: `${f1(r.firstLoad.toFirstCard.p50)} / ${f1(r.firstLoad.toFirstCard.p99)} ms`, baseline: `${ms(r.firstLoad.floorFetch.p50)} GET /api/floor`, ratio: f2(r.firstLoad.toFirstCard.p50 / r.firstLoad.floorFetch.p50), goal: '', met: '' },
        { benchmark: 'dashboard reload (warm, 304s)', figure: 'bytes / time', value: `${(r.firstLoad.reloadBytes / 1024).toFixed(1)} kB / ${ms(r.firstLoad.reloadMs)}`, baseline: '', ratio: '', goal: '', met: '' },
        { benchmark: 'job state change → page DOM', figure: 'p50', value: ms(r.latency.dom.p50), baseline: `${ms(r.latency.frame.p50)} frame in the page`, ratio: f2(r.latency.dom.p50 / r.latency.frame.p50), goal: '≤ 250 ms', met: met(r.latency.dom.p50 <= 250) },
        { benchmark: 'job state change → page DOM', figure: 'p99', value: ms(r.latency.dom.p99), baseline: `${ms(r.latency.frame.p99)} frame in the page`, ratio: f2(r.latency.dom.p99 / r.latency.frame.p99), goal: '≤ 250 ms', met: met(r.latency.dom.p99 <= 250) },
        ...Object.entries(r.load).filter(([k]) => k !== '0 pages').map(([k, v]): Row => ({
          benchmark: 'hub with pages open (10 changes/s)', figure: k, value: `${f1(v.cpuPct)}% CPU, ${f1(v.rssMb)} MB`, baseline: `${f1(none.cpuPct)}%, ${f1(none.rssMb)} MB with 0 pages`, ratio: f2(v.cpuPct / none.cpuPct), goal: '', met: '',
        })),
      ];
    },
  },
  {
    name: 'budget',
    title: '20. spawn_agent with a house and a label budget on vs off (2,000 finished jobs, 32 live reservations): the reservation\'s cost',
    run: benchBudget,
    rows: (r: BudgetBenchResult) => {
      const b = 'spawn_agent with budgets';
      const us = (n: number): string => `${f1(n)} µs`;
      return [
        { benchmark: b, figure: 'call → reply p50', value: ms(r.on.p50), baseline: `${ms(r.off.p50)} no budgets`, ratio: f2(r.ratioP50), goal: '', met: '' },
        { benchmark: b, figure: 'call → reply p99', value: ms(r.on.p99), baseline: `${ms(r.off.p99)} no budgets`, ratio: f2(r.on.p99 / r.off.p99), goal: '', met: '' },
        { benchmark: b, figure: 'check + reserve + insert p50', value: us(r.reserveUs.p50), baseline: `${us(r.insertUs.p50)} insert alone`, ratio: f2(r.reserveUs.p50 / r.insertUs.p50), goal: '', met: '' },
        { benchmark: b, figure: 'mid-run check per progress p50', value: us(r.progressUs.p50), baseline: '', ratio: '', goal: '', met: '' },
      ];
    },
  },
  {
    name: 'dispatch',
    title: '21. dispatch of a 200-task file (in-process children): time to every job created, RSS',
    run: benchDispatch,
    rows: (r: DispatchBenchResult) => [
      { benchmark: 'dispatch 200 tasks', figure: 'call → every job created', value: ms(r.dispatchMs), baseline: `${ms(r.spawnsMs)} 200 spawn_agent calls`, ratio: f2(r.ratio), goal: '', met: '' },
      { benchmark: 'dispatch 200 tasks', figure: 'RSS after (before)', value: `${f1(r.dispatchRssAfterMb)} MB (${f1(r.dispatchRssBeforeMb)})`, baseline: `${f1(r.spawnsRssAfterMb)} MB (${f1(r.spawnsRssBeforeMb)})`, ratio: f2((r.dispatchRssAfterMb - r.dispatchRssBeforeMb) / Math.max(0.1, r.spawnsRssAfterMb - r.spawnsRssBeforeMb)), goal: '', met: '' },
    ],
  },
  {
    name: 'merge_queue',
    title: '22. merge queue: queue --ship of 10 small finished branches (real git, no children)',
    run: benchMergeQueue,
    rows: (r: MergeQueueBenchResult) => [
      { benchmark: 'merge queue 10 branches', figure: 'ship (order re-computed after each merge)', value: ms(r.shipMs), baseline: `${ms(r.baselineMs)} git merge --no-ff ×10`, ratio: f2(r.ratio), goal: '', met: '' },
      { benchmark: 'merge queue 10 branches', figure: 'the order alone', value: ms(r.queueMs), baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'overlap',
    title: '23. the conflict guard, 16 live worktree jobs: an edit\'s lock event → the overlap recorded',
    run: benchOverlap,
    rows: (r: OverlapBenchResult) => [
      { benchmark: 'overlap detection (16 worktrees)', figure: 'p50', value: ms(r.latency.p50), baseline: `${ms(r.gitScan.p50)} the scan's git work alone`, ratio: f2(r.latency.p50 / r.gitScan.p50), goal: '', met: '' },
      { benchmark: 'overlap detection (16 worktrees)', figure: 'p99', value: ms(r.latency.p99), baseline: `${ms(r.gitScan.p99)} the scan's git work alone (the debounce is ${r.debounceMs} ms)`, ratio: f2(r.latency.p99 / r.gitScan.p99), goal: '', met: '' },
    ],
  },
  {
    name: 'per_edit',
    title: 'P2. per-edit overhead of an Overseer claude child vs bare claude -p (10 Writes in a row, gap between consecutive requests)',
    perf: true,
    run: benchPerEdit,
    rows: (r: PerEditResult) => [
      { benchmark: 'per-edit overhead vs bare', figure: 'median gap', value: ms(r.overseer.p50), baseline: ms(r.bare.p50), ratio: f2(r.overseer.p50 / r.bare.p50), goal: `+${f1(r.overheadMs)} ms; goal ≤ +5 ms`, met: met(r.overheadMs <= 5) },
    ],
  },
  {
    name: 'cmd_hook',
    title: 'P5. lock hook per edit, command hooks (vs /bin/true): hooks/overseer-hook.sh as the lead and Codex children run it (bash: /dev/tcp), under dash (curl) and the node hook for comparison',
    perf: true,
    run: benchCmdHook,
    rows: (r: CmdHookResult) => [
      { benchmark: `command lock hook (${r.shell})`, figure: 'median, free file (auto-lock)', value: `${ms(r.shFree.p50)} (p99 ${ms(r.shFree.p99)})`, baseline: `${ms(r.baseline.p50)} /bin/true`, ratio: f2(r.shFree.p50 / r.baseline.p50), goal: '≤ 10 ms absolute', met: met(r.shFree.p50 <= 10) },
      { benchmark: `command lock hook (${r.shell})`, figure: 'median, held file (deny)', value: `${ms(r.shDeny.p50)} (p99 ${ms(r.shDeny.p99)})`, baseline: `${ms(r.baseline.p50)} /bin/true`, ratio: f2(r.shDeny.p50 / r.baseline.p50), goal: '≤ 10 ms absolute', met: met(r.shDeny.p50 <= 10) },
      { benchmark: `command lock hook (${r.shell})`, figure: 'median, lead (hub.json found), deny', value: ms(r.leadDeny.p50), baseline: `${ms(r.baseline.p50)} /bin/true`, ratio: f2(r.leadDeny.p50 / r.baseline.p50), goal: '', met: '' },
      { benchmark: `command lock hook (${r.shell})`, figure: 'median, lead, no hub running', value: ms(r.leadNoHub.p50), baseline: `${ms(r.baseline.p50)} /bin/true`, ratio: f2(r.leadNoHub.p50 / r.baseline.p50), goal: '', met: '' },
      { benchmark: 'command lock hook (dash + curl)', figure: 'median, free / deny', value: `${ms(r.curlFree.p50)} / ${ms(r.curlDeny.p50)}`, baseline: `${ms(r.baseline.p50)} /bin/true`, ratio: `${f2(r.curlFree.p50 / r.baseline.p50)} / ${f2(r.curlDeny.p50 / r.baseline.p50)}`, goal: '', met: '' },
      { benchmark: 'command lock hook (dash + curl)', figure: "curl's own start (curl -q --version)", value: ms(r.curlStart.p50), baseline: `${ms(r.baseline.p50)} /bin/true`, ratio: f2(r.curlStart.p50 / r.baseline.p50), goal: '', met: '' },
      { benchmark: 'command lock hook (node, before)', figure: 'median, free / deny', value: `${ms(r.nodeFree.p50)} / ${ms(r.nodeDeny.p50)}`, baseline: `${ms(r.shFree.p50)} / ${ms(r.shDeny.p50)} hook`, ratio: `${f2(r.nodeFree.p50 / r.shFree.p50)} / ${f2(r.nodeDeny.p50 / r.shDeny.p50)}`, goal: '', met: '' },
    ],
  },
  {
    name: 'http_load',
    // The hub in this process runs as the background hub `overseer mcp` starts (its young
    // generation at 1 MB: more scavenges than node's default, ~5 % more CPU a call, measured).
    nodeArgs: hubNodeArgs([], ''),
    title: 'P7. tool call over HTTP: 64 MCP sessions of a crew (64 agents, each its own token; lean raw-HTTP client) paced at 1 call / 100 ms each, and back to back (also with the lead\'s token on all 64); the hub\'s native MCP over HTTP (src/mcp) against a bare node:http server',
    perf: true,
    run: benchHttpLoad,
    rows: (r: HttpLoadResult) => {
      const b = `tool call over HTTP ×${r.sessions}`;
      const cps = (n: number): string => `${n.toFixed(0)} calls/s`;
      return [
        { benchmark: b, figure: 'paced p50 / p99', value: `${f1(r.paced.hub.latency.p50)} / ${f1(r.paced.hub.latency.p99)} ms`, baseline: `${f1(r.paced.bare.latency.p50)} / ${f1(r.paced.bare.latency.p99)} ms bare`, ratio: f2(r.paced.hub.latency.p99 / r.paced.bare.latency.p99), goal: 'p99 ≤ 10 ms', met: met(r.paced.hub.latency.p99 <= 10) },
        // Not a goal (issue 27): a guard against a regression from the figures of docs/performance.md ("Guards, not goals").
        { benchmark: b, figure: 'back to back', value: cps(r.closed.hub.callsPerS), baseline: `${cps(r.closed.bare.callsPerS)} bare`, ratio: f2(r.closed.hub.callsPerS / r.closed.bare.callsPerS), goal: 'guard: ≥ 3,000 calls/s', met: met(r.closed.hub.callsPerS >= 3000) },
        { benchmark: b, figure: 'hub thread CPU per call', value: `${r.closed.hub.serverCpuUs.toFixed(0)} µs`, baseline: `${r.closed.bare.serverCpuUs.toFixed(0)} µs bare`, ratio: f2(r.closed.hub.serverCpuUs / r.closed.bare.serverCpuUs), goal: '', met: '' },
        ...(r.closedLead ? [{ benchmark: b, figure: 'back to back, the lead\'s token on all 64 (+ its digest per call)', value: `${cps(r.closedLead.callsPerS)}, ${r.closedLead.serverCpuUs.toFixed(0)} µs CPU a call`, baseline: `${cps(r.closed.bare.callsPerS)} bare`, ratio: f2(r.closedLead.callsPerS / r.closed.bare.callsPerS), goal: '', met: '' }] : []),
        { benchmark: b, figure: 'same results (lean client, SDK client)', value: r.sdkSame ? 'yes' : 'no', baseline: '', ratio: '', goal: 'yes', met: met(r.sdkSame) },
      ];
    },
  },
  {
    name: 'hub_mem',
    title: 'P6. hub RSS idle / with 64 light children holding an MCP session (real `overseer serve`, the flags `overseer mcp` starts it with)',
    perf: true,
    run: benchHubMem,
    rows: (r: HubMemResult) => [
      // Not a goal (issue 27): a guard against a regression from the figures of docs/performance.md ("Guards, not goals").
      { benchmark: 'hub RSS', figure: 'idle', value: `${f1(r.idle.rss)} MB`, baseline: `${f1(r.floor.rss)} MB bare node`, ratio: f2(r.idle.rss / r.floor.rss), goal: 'guard: ≤ 72 MB', met: met(r.idle.rss <= 72) },
      { benchmark: 'hub RSS', figure: 'idle vs the server floor (node:http + SQLite + pino, no Overseer code)', value: `${f1(r.idle.rss)} MB`, baseline: `${f1(r.serverFloor.rss)} MB`, ratio: f2(r.idle.rss / r.serverFloor.rss), goal: '', met: '' },
      { benchmark: 'hub RSS', figure: `64 children (${r.agentSessions} sessions)`, value: `${f1(r.children.rss)} MB`, baseline: `${f1(r.floor.rss)} MB bare node`, ratio: f2(r.children.rss / r.floor.rss), goal: '≤ 80 MB', met: met(r.children.rss <= 80) },
      { benchmark: 'hub RSS', figure: 'idle, own (RssAnon)', value: `${f1(r.idle.anon)} MB`, baseline: `${f1(r.floor.anon)} MB bare node`, ratio: f2(r.idle.anon / r.floor.anon), goal: '', met: '' },
      { benchmark: 'hub RSS', figure: 'per child', value: `${r.perChildKb.toFixed(0)} kB`, baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'fanout',
    title: 'P8. fan-out of 8 real claude children at once (no start gate / gate at one start per core) vs 8 bare claude -p at once: spawn reply → each child\'s first API request (medians of 3 rounds)',
    perf: true,
    run: benchFanout,
    rows: (r: FanoutResult) => {
      const b = `fan-out of ${r.children}, no start gate`;
      const g = `fan-out of ${r.children}, start gate ${r.gate}`;
      return [
        { benchmark: b, figure: 'last child → first request', value: ms(r.overseer.last), baseline: `${ms(r.bare.last)} bare last`, ratio: f2(r.ratioLast), goal: 'last ≤ bare last', met: met(r.overseer.last <= r.bare.last) },
        { benchmark: b, figure: 'first child → first request', value: ms(r.overseer.first), baseline: `${ms(r.bare.first)} bare first`, ratio: f2(r.ratioFirst), goal: 'first ≤ 1.5 s', met: met(r.overseer.first <= 1500) },
        { benchmark: b, figure: 'median child → first request', value: ms(r.overseer.median), baseline: `${ms(r.bare.median)} bare median`, ratio: f2(r.ratioMedian), goal: '', met: '' },
        { benchmark: g, figure: 'last child → first request', value: ms(r.gated.last), baseline: `${ms(r.bare.last)} bare last`, ratio: f2(r.gatedRatioLast), goal: 'last ≤ bare last', met: met(r.gated.last <= r.bare.last) },
        { benchmark: g, figure: 'first child → first request', value: ms(r.gated.first), baseline: `${ms(r.bare.first)} bare first`, ratio: f2(r.gatedRatioFirst), goal: 'first ≤ 1.5 s', met: met(r.gated.first <= 1500) },
        { benchmark: g, figure: 'median child → first request', value: ms(r.gated.median), baseline: `${ms(r.bare.median)} bare median`, ratio: f2(r.gatedRatioMedian), goal: '', met: '' },
      ];
    },
  },
  {
    name: 'mcp_handshake',
    title: 'P7b. MCP handshake a child pays before its first model request (initialize → initialized → tools/list, new connections, lead token: the largest list) against a real hub, vs a bare node:http server sending the same bodies (HANDSHAKE_BASE_CLI=<main.js>: another build, interleaved)',
    perf: true,
    run: benchHandshake,
    rows: (r: HandshakeResult) => [
      { benchmark: 'MCP handshake', figure: 'median, all three', value: `${f1(r.hub.total.p50)} ms`, baseline: `${f1(r.bare.total.p50)} ms bare`, ratio: f2(r.hub.total.p50 / r.bare.total.p50), goal: '', met: '' },
      { benchmark: 'MCP handshake', figure: 'median tools/list', value: `${f1(r.hub.list.p50)} ms (${(r.hub.listBytes / 1024).toFixed(0)} KB)`, baseline: `${f1(r.bare.list.p50)} ms bare`, ratio: f2(r.hub.list.p50 / r.bare.list.p50), goal: '', met: '' },
      ...(r.base ? [{ benchmark: 'MCP handshake', figure: 'median, all three, base build', value: `${f1(r.base.total.p50)} ms`, baseline: `${f1(r.hub.total.p50)} ms this build`, ratio: f2(r.base.total.p50 / r.hub.total.p50), goal: '', met: '' }] : []),
    ],
  },
  {
    name: 'first_request_time',
    title: 'P9. claude -p spawn → its first model request, in a project with Overseer (a real overseer mcp from dist/, hub not running / running) vs without (real claude, fake model, fresh HOME, medians of alternating runs)',
    perf: true,
    run: benchFirstRequestTime,
    rows: (r: FirstRequestTimeResult) => [
      { benchmark: 'first model request with Overseer', figure: `hub cold, median (n=${r.runs})`, value: ms(r.cold), baseline: `${ms(r.without)} without`, ratio: f2(r.cold / r.without), goal: `+${f1(r.cold - r.without)} ms; goal ≤ +200 ms`, met: met(r.cold - r.without <= 200) },
      { benchmark: 'first model request with Overseer', figure: `hub warm, median (n=${r.runs})`, value: ms(r.warm), baseline: `${ms(r.without)} without`, ratio: f2(r.warm / r.without), goal: `+${f1(r.warm - r.without)} ms; goal ≤ +200 ms`, met: met(r.warm - r.without <= 200) },
      ...(r.base ? [{ benchmark: 'first model request with Overseer', figure: 'hub cold / warm, base build', value: `${ms(r.base.cold)} / ${ms(r.base.warm)}`, baseline: `${ms(r.without)} without`, ratio: `${f2(r.base.cold / r.without)} / ${f2(r.base.warm / r.without)}`, goal: '', met: '' }] : []),
      { benchmark: 'overseer mcp alone', figure: 'spawn → initialize / tools/list answered, hub cold', value: `${f1(r.bridgeCold.init)} / ${f1(r.bridgeCold.list)} ms`, baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'overseer mcp alone', figure: 'spawn → initialize / tools/list answered, hub warm', value: `${f1(r.bridgeWarm.init)} / ${f1(r.bridgeWarm.list)} ms`, baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'script_agent',
    title: 'S1. agent() over spawn_agent: call → the child\'s first model request, a run_script whose script does one await agent() vs a direct spawn_agent (real claude, fake model, alternating, medians of 20)',
    run: benchScriptAgent,
    rows: (r: ScriptAgentResult) => [
      { benchmark: 'agent() over spawn_agent', figure: `call → 1st model request, median (n=${r.runs})`, value: ms(r.script.p50), baseline: `${ms(r.direct.p50)} spawn_agent`, ratio: f2(r.script.p50 / r.direct.p50), goal: `+${f1(r.diffMs)} ms; goal < +${SCRIPT_AGENT_GOAL_MS} ms`, met: met(r.diffMs < SCRIPT_AGENT_GOAL_MS) },
      { benchmark: 'agent() over spawn_agent', figure: 'median of the rounds\' differences', value: `${r.pairedDiffMs >= 0 ? '+' : ''}${ms(r.pairedDiffMs)}`, baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: 'agent() over spawn_agent', figure: 'call → the job\'s row (the script\'s own part), median', value: ms(r.parts.script.toJob), baseline: `${ms(r.parts.direct.toJob)} spawn_agent`, ratio: '', goal: `(< +${SCRIPT_AGENT_GOAL_MS} ms)`, met: met(r.parts.script.toJob - r.parts.direct.toJob < SCRIPT_AGENT_GOAL_MS) },
      { benchmark: 'agent() over spawn_agent', figure: 'job row → 1st model request, median', value: ms(r.parts.script.jobToRequest), baseline: `${ms(r.parts.direct.jobToRequest)} spawn_agent`, ratio: f2(r.parts.script.jobToRequest / r.parts.direct.jobToRequest), goal: '', met: '' },
      { benchmark: 'agent() over spawn_agent', figure: 'hub CPU, call → 1st model request, median', value: ms(r.parts.script.cpu), baseline: `${ms(r.parts.direct.cpu)} spawn_agent`, ratio: f2(r.parts.script.cpu / r.parts.direct.cpu), goal: '', met: '' },
      { benchmark: 'agent() over spawn_agent', figure: 'hub thread busy / GC pauses, same window, median', value: `${f1(r.parts.script.busy)} / ${f1(r.parts.script.gc)} ms`, baseline: `${f1(r.parts.direct.busy)} / ${f1(r.parts.direct.gc)} ms spawn_agent`, ratio: '', goal: '', met: '' },
      { benchmark: 'agent() over spawn_agent', figure: 'CPU alone: wasm module / checkSyntax / sandbox → 1st call', value: `${f1(r.alone.wasmModule)} / ${f1(r.alone.checkSyntax)} / ${f1(r.alone.sandboxToFirstCall)} ms`, baseline: `${ms(r.alone.sharedModuleCheck)} check on a shared module`, ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'script_replay',
    title: 'S2. replay of a 1,000-call journal: a script run whose 1,000 agent() calls finished, continued as a new hub continues it (resumeAll on the same store → run ended, median of 5) vs the same script in the sandbox alone (answers from memory)',
    run: benchScriptReplay,
    rows: (r: ScriptReplayResult) => [
      { benchmark: `replay of a ${r.calls}-call journal`, figure: `resume → run ended, median (n=${r.runs})`, value: ms(r.replay.p50), baseline: `${ms(r.sandbox.p50)} sandbox alone`, ratio: f2(r.replay.p50 / r.sandbox.p50), goal: `< ${SCRIPT_REPLAY_GOAL_MS} ms`, met: met(r.replay.p50 < SCRIPT_REPLAY_GOAL_MS) },
      { benchmark: `replay of a ${r.calls}-call journal`, figure: 'replay − sandbox alone (medians), per call', value: `${f1(r.journalShareMs / r.calls * 1000)} µs`, baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: `replay of a ${r.calls}-call journal`, figure: 'the journal\'s own work alone, median', value: ms(r.journalWorkMs), baseline: '', ratio: '', goal: '', met: '' },
      { benchmark: `replay of a ${r.calls}-call journal`, figure: 'CPU, median', value: ms(r.cpu.replay), baseline: `${ms(r.cpu.sandbox)} sandbox alone`, ratio: f2(r.cpu.replay / r.cpu.sandbox), goal: '', met: '' },
      { benchmark: `replay of a ${r.calls}-call journal`, figure: 'a new hub: start → run ended', value: ms(r.newHub.toEndMs), baseline: `${ms(r.newHub.startMs)} its start`, ratio: '', goal: '', met: '' },
      { benchmark: `live run of ${r.calls} calls (scripted children)`, figure: 'run_script → ended', value: ms(r.liveMs), baseline: '', ratio: '', goal: '', met: '' },
    ],
  },
  {
    name: 'store_compare',
    title: 'D1. the hub on SQLite against PostgreSQL (issue 29; same run, alternating blocks): a tool call over HTTP as the lead and an agent, an edit through /hook, lock_files under contention, the hub\'s start',
    run: benchStoreCompare,
    guard: (r: StoreCompareResult) => r.guard,
    rows: (r: StoreCompareResult) => {
      const pp = (s: { p50: number; p90: number }): string => `${f1(s.p50)} / ${f1(s.p90)} ms`;
      return [
        ...r.calls.map((c): Row => {
          const ratio = c.pair.postgres.p50 / c.pair.sqlite.p50;
          return { benchmark: `PostgreSQL vs SQLite: ${c.what.startsWith('hook') ? 'edit' : 'tool call'}`, figure: `${c.what} (${c.role}) p50 / p90`, value: `${pp(c.pair.postgres)} (${f1(c.pgStatements)} statements)`, baseline: `${pp(c.pair.sqlite)} SQLite`, ratio: f2(ratio), goal: `guard: ratio ≤ ${GUARD_RATIO}`, met: met(ratio <= GUARD_RATIO) };
        }),
        ...r.contention.flatMap((c): Row[] => [
          ...(c.handover ? [{ benchmark: 'PostgreSQL vs SQLite: lock contention', figure: `${c.what}: hand-over p50 / p90`, value: pp(c.handover.postgres), baseline: `${pp(c.handover.sqlite)} SQLite`, ratio: f2(c.handover.postgres.p50 / c.handover.sqlite.p50), goal: `guard: p50 ≤ ${GUARD_HANDOVER_MS} ms or ×${GUARD_RATIO}`, met: met(c.handover.postgres.p50 <= handoverBound(c.handover.sqlite.p50)) }] : []),
          { benchmark: 'PostgreSQL vs SQLite: lock contention', figure: `${c.what}: grants per client per s`, value: f1(c.perClient.postgres), baseline: `${f1(c.perClient.sqlite)} SQLite`, ratio: f2(c.perClient.postgres / c.perClient.sqlite), goal: '', met: '' },
        ]),
        { benchmark: 'PostgreSQL vs SQLite: idle hub', figure: 'statements a second of its own, 16 live agents', value: f1(r.pgBackgroundPerS), baseline: '', ratio: '', goal: '', met: '' },
        { benchmark: 'PostgreSQL vs SQLite: hub start', figure: 'Hub.open + start, new state p50 / p90', value: pp(r.start.fresh.postgres), baseline: `${pp(r.start.fresh.sqlite)} SQLite`, ratio: f2(r.start.fresh.postgres.p50 / r.start.fresh.sqlite.p50), goal: '', met: '' },
        { benchmark: 'PostgreSQL vs SQLite: hub start', figure: 'Hub.open + start, again p50 / p90', value: pp(r.start.again.postgres), baseline: `${pp(r.start.again.sqlite)} SQLite`, ratio: f2(r.start.again.postgres.p50 / r.start.again.sqlite.p50), goal: '', met: '' },
      ];
    },
  },
  {
    name: 'workers',
    title: 'W1. worker hosts (issue 30; PostgreSQL): spawn_agent → child exec on a real `overseer worker` vs on the hub\'s machine (fake-agent.sh, worktree jobs, median of 20 each); 200 queued jobs (scripted child, exits at once) through three workers of capacity 4 vs one hub of capacity 12; pg-boss send + fetch + complete per job on an idle queue',
    run: benchWorkers,
    guard: (r: WorkersResult) => (r.overhead.total.p50 <= QUEUE_GUARD_MS ? [] : [`pg-boss send + fetch + complete median ${f1(r.overhead.total.p50)} ms > ${QUEUE_GUARD_MS} ms`]),
    rows: (r: WorkersResult) => {
      const t = r.throughput;
      const o = r.overhead;
      return [
        { benchmark: 'spawn → child exec on a worker', figure: `median (n=${r.spawn.runs})`, value: ms(r.spawn.worker.p50), baseline: `${ms(r.spawn.hub.p50)} hub's machine`, ratio: f2(r.spawn.worker.p50 / r.spawn.hub.p50), goal: 'measure', met: '' },
        { benchmark: 'spawn → child exec on a worker', figure: 'p90', value: ms(r.spawn.worker.p90), baseline: `${ms(r.spawn.hub.p90)} hub's machine`, ratio: f2(r.spawn.worker.p90 / r.spawn.hub.p90), goal: 'measure', met: '' },
        { benchmark: `${t.jobs} queued jobs, child exits at once`, figure: 'three workers ×4: jobs/s (wall)', value: `${f1(t.workers.perS)} (${(t.workers.wallMs / 1000).toFixed(2)} s)`, baseline: `${f1(t.hub.perS)} (${(t.hub.wallMs / 1000).toFixed(2)} s) one hub ×12`, ratio: f2(t.workers.perS / t.hub.perS), goal: 'measure', met: '' },
        { benchmark: 'pg-boss per job, idle queue', figure: 'send + fetch + complete median', value: ms(o.total.p50), baseline: `send ${f1(o.send.p50)} / fetch ${f1(o.fetch.p50)} / complete ${f1(o.complete.p50)}`, ratio: '', goal: `guard: ≤ ${QUEUE_GUARD_MS} ms`, met: met(o.total.p50 <= QUEUE_GUARD_MS) },
      ];
    },
  },
];

function table(rows: Row[]): string {
  const head: Row = { benchmark: 'benchmark', figure: 'figure', value: 'value', baseline: 'baseline', ratio: 'ratio', goal: 'goal', met: 'met' };
  const cols = Object.keys(head) as (keyof Row)[];
  const all = [head, ...rows];
  const width = (c: keyof Row): number => Math.max(...all.map((r) => [...r[c]].length));
  const line = (r: Row): string => cols.map((c) => r[c] + ' '.repeat(width(c) - [...r[c]].length)).join(' | ').trimEnd();
  const sep = cols.map((c) => '-'.repeat(width(c))).join('-+-');
  return [line(head), sep, ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  const load = os.loadavg().map((x) => x.toFixed(2)).join(' ');
  out(`Overseer benchmarks — node ${process.version}, ${os.cpus().length} CPU(s) (${os.cpus()[0]?.model ?? 'unknown'}), ${os.platform()} ${os.release()}, load average ${load} at start\n`);
  const rows: Row[] = [];
  const perfRows: Row[] = [];
  const results: Record<string, unknown> = {};
  let failed = 0;
  // `--perf`: only the figures of the performance goals; `--only a,b`: those entries by name.
  const argv = process.argv.slice(2);
  const only = argv.includes('--only') ? new Set((argv[argv.indexOf('--only') + 1] ?? '').split(',')) : undefined;
  const chosen = entries.filter((e) => (argv.includes('--perf') ? e.perf : true) && (!only || only.has(e.name)));
  for (const e of chosen) {
    out(`\n== ${e.title}\n`);
    const t0 = performance.now();
    try {
      const r = await runIsolated(e);
      const secs = (performance.now() - t0) / 1000;
      results[e.name] = { ...r, seconds: secs };
      rows.push(...e.rows(r));
      if (e.perf) perfRows.push(...e.rows(r).filter((x) => x.goal));
      out(`   (${secs.toFixed(1)} s)\n`);
      const guard = e.guard?.(r) ?? [];
      if (guard.length) {
        failed++;
        out(`   GUARD FAILED (exit code 1):\n${guard.map((g) => `     ${g}\n`).join('')}`);
      }
    } catch (err) {
      failed++;
      const msg = err instanceof Error ? err.message : String(err);
      results[e.name] = { error: msg };
      const row: Row = { benchmark: e.title.replace(/^[P\d]+\.\s*/, '').slice(0, 40), figure: 'ERROR', value: msg.split('\n')[0]!.slice(0, 100), baseline: '', ratio: '', goal: '', met: '' };
      rows.push(row);
      if (e.perf) perfRows.push(row);
      out(`   FAILED: ${err instanceof Error ? err.stack ?? msg : msg}\n`);
    }
  }
  const totalS = (performance.now() - started) / 1000;
  out(`\n== Summary (ratios are ours/baseline measured in this run; goals are reported, not asserted; a guard out of bounds fails the run)\n${table(rows)}\n`);
  if (perfRows.length) out(`\n== Performance goals (issue 14; docs/performance.md "The goals table")\n${table(perfRows)}\n`);
  out(`total ${totalS.toFixed(1)} s (load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')})\n`);

  const dir = path.join(BENCH_DIR, 'results');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'latest.json');
  const json = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? null,
    loadAverageAtStart: load,
    loadAverageAtEnd: os.loadavg().map((x) => x.toFixed(2)).join(' '),
    totalSeconds: totalS,
    summary: rows,
    perf: perfRows,
    results,
  };
  await writeFile(file, `${JSON.stringify(json, null, 2)}\n`);
  out(`written to ${path.relative(process.cwd(), file) || file}\n`);
  if (failed) process.exitCode = 1;
}

/** Run entry e in a fresh process (this script with `--one`), its output passed through; its result as JSON. */
async function runIsolated<T>(e: Entry<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'overseer-bench-one-'));
  const file = path.join(dir, 'result.json');
  try {
    const code = await new Promise<number | null>((resolve, reject) => {
      const p = spawn(process.execPath, [...(e.nodeArgs ?? []), '--import', 'tsx', fileURLToPath(import.meta.url), '--one', e.name, '--result', file], { stdio: ['ignore', 'inherit', 'inherit'] });
      p.once('error', reject);
      p.once('close', (c) => resolve(c));
    });
    if (code !== 0) throw new Error(`the benchmark's process exited with ${code} (its error is printed above)`);
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** `--one <name> --result <file>`: run that entry here and write its result to file. */
async function one(name: string, file: string): Promise<void> {
  const e = entries.find((x) => x.name === name);
  if (!e) throw new Error(`no benchmark named ${name}`);
  // BENCH_PROFILE=1: a CPU profile of this process (the in-process hub's thread included) over the
  // benchmark, written to bench/results/<name>.cpuprofile (open it in Chrome's DevTools).
  const profile = process.env.BENCH_PROFILE === '1' ? new Session() : undefined;
  if (profile) {
    profile.connect();
    await profile.post('Profiler.enable');
    await profile.post('Profiler.start');
  }
  const r = await e.run();
  if (profile) {
    const { profile: p } = await profile.post('Profiler.stop');
    await mkdir(path.join(BENCH_DIR, 'results'), { recursive: true });
    await writeFile(path.join(BENCH_DIR, 'results', `${name}.cpuprofile`), JSON.stringify(p));
    profile.disconnect();
  }
  await writeFile(file, JSON.stringify(r));
  // A handle a benchmark left open must not keep the run waiting (stdout to a pipe or a file is synchronous).
  setTimeout(() => process.exit(0), 1000).unref();
}

const oneAt = process.argv.indexOf('--one');
(oneAt >= 0 ? one(process.argv[oneAt + 1] ?? '', process.argv[process.argv.indexOf('--result') + 1] ?? '') : main()).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
