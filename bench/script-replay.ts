// Replay of a 1,000-call journal (issue 28, goal: under a second). A script run makes 1,000
// agent() calls, one after the other, through the real engine: a built hub (dist/) whose children
// are scripted in process (test/helpers/fakeLauncher.ts: no model, no claude), so the journal
// holds 1,000 finished calls with their jobs, exactly as a live run leaves it. Then the run is put
// back to `running` (the state a hub killed just before the script returned leaves) and
// continued as a new hub continues it — ScriptRuns.resumeAll() on the same store: the script
// runs again from the top in a new sandbox, every call is answered from the journal (none starts
// a job), and the run ends `succeeded` with the same result. Timed from the call of resumeAll
// to the run's `run` event; median of RUNS.
// Baseline in the same run, interleaved: the same script in the sandbox alone (the build's
// runInSandbox), its calls answered from an array in memory (no journal, no hub), so the
// journal's share — reading it, matching each call, the run's rows — is the difference.
// Also: a new hub on the same state (started after the run was put back) → the run ended, RUNS times.
// Run alone: npm run build && node --import tsx bench/script-replay.ts  (BENCH_REPLAY_CALLS=1000, BENCH_REPLAY_RUNS=5)
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { startTestHub, type TestHub } from '../test/helpers/hub.js';
import { ScriptedLauncher } from '../test/helpers/fakeLauncher.js';
import { BENCH_DIR, builtHub, f1, out, removeDir, runAlone, stats, type Stats } from './common.js';

const CALLS = Number(process.env.BENCH_REPLAY_CALLS ?? 1000);
const RUNS = Number(process.env.BENCH_REPLAY_RUNS ?? 5);
const GOAL_MS = 1000;
const SOURCE = `phase('Items')
const out = []
for (let i = 0; i < args.n; i++) out.push(await agent('TASK:' + i + ' handle item ' + i, { label: 'item ' + i }))
log(out.length + ' items')
return out.length + ' ' + out[out.length - 1]`;

export interface ScriptReplayResult {
  calls: number;
  runs: number;
  /** the live run that wrote the journal: run_script → ended */
  liveMs: number;
  /** recover on the same store: resumeAll() → the run ended */
  replay: Stats;
  /** the same script in the sandbox alone, answers from memory */
  sandbox: Stats;
  /** replay median − sandbox median */
  journalShareMs: number;
  /** this process's CPU time (all threads) of a replay and of the sandbox alone, medians, ms */
  cpu: { replay: number; sandbox: number };
  /** the journal's own work of a replay, alone (median, ms): resumeAll's read of the calls, the replay's read and index, and each call's key, match and answer */
  journalWorkMs: number;
  /** a new hub on the same state: its start → the run ended, and that hub's start alone (medians of RUNS) */
  newHub: { toEndMs: number; startMs: number };
  samples: { replay: number[]; sandbox: number[]; newHub: number[] };
}

type Sandbox = typeof import('../src/scripts/sandbox.js');
type Replay = typeof import('../src/domain/scriptReplay.js');
type Journal = typeof import('../src/scripts/journal.js');
type ScriptStore = typeof import('../src/store/sql/scripts.js');

/** What a replay does with the journal, without the sandbox: what ScriptRuns.resumeAll and execute
 * read, and for each of the script's calls the lookup its host.call makes (canonicalJson, next, the
 * outcome parsed). The calls are the journal's own arguments, in order. */
async function journalWork(h: TestHub, rp: Replay, jn: Journal, st: ScriptStore, runId: string): Promise<number> {
  const t0 = performance.now();
  const interrupted = (await st.callsOf(h.hub.ctx.sql.db, runId)).filter((c) => c.status === 'running').length;
  const rows = await jn.replayable(h.hub.ctx.sql.db, runId);
  const replay = new rp.ScriptReplay(rows, 'recover');
  let answered = 0;
  for (const r of rows) {
    const a = replay.next(r.kind, rp.canonicalJson(JSON.parse(r.args)));
    if (a.from === 'journal' && a.entry.outcome) { JSON.parse(a.entry.outcome); answered++; }
  }
  const ms = performance.now() - t0;
  if (answered !== rows.length || interrupted) throw new Error(`the journal answered ${answered} of ${rows.length} calls`);
  return ms;
}

const ended = (h: TestHub, runId: string): Promise<string> => new Promise((resolve) => {
  const off = h.hub.ctx.bus.on('run', (e) => { if (e.runId === runId) { off(); resolve(e.status); } });
});

async function rerun(h: TestHub, runId: string): Promise<void> {
  await sql`UPDATE runs SET status = 'running', note = NULL, ended_at = NULL WHERE id = ${runId}`.execute(h.hub.ctx.sql.db);
}

async function resultOf(h: TestHub, runId: string): Promise<unknown> {
  const v = (await h.hub.scripts.view(runId))!;
  if (v.status !== 'succeeded') throw new Error(`run ${runId} ended ${String(v.status)}: ${String(v.error)}`);
  return v.result;
}

const cpuSince = (c0: NodeJS.CpuUsage): number => { const c = process.cpuUsage(c0); return (c.user + c.system) / 1000; };

async function sandboxAlone(sb: Sandbox, answers: unknown[]): Promise<{ ms: number; cpu: number }> {
  let n = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const o = await sb.runInSandbox({
    source: SOURCE, args: { n: CALLS },
    host: { call: async () => answers[n++] as never, log: () => undefined, phase: () => undefined, budget: () => ({ total: null, spent: 0, reserved: 0 }) },
  });
  const ms = performance.now() - t0;
  const cpu = cpuSince(c0);
  if (o.status !== 'returned' || n !== CALLS) throw new Error(`the sandbox alone did not run the script through (${n} calls): ${JSON.stringify(o)}`);
  return { ms, cpu };
}

export async function benchScriptReplay(): Promise<ScriptReplayResult> {
  const launcher = new ScriptedLauncher((prompt) => ({ resultText: `done ${/TASK:(\d+)/.exec(prompt)?.[1] ?? '?'}` }));
  const hubClass = await builtHub();
  const dist = (p: string): string => pathToFileURL(path.join(BENCH_DIR, '..', 'dist', p)).href;
  const sb = (await import(dist('scripts/sandbox.js'))) as Sandbox;
  const rp = (await import(dist('domain/scriptReplay.js'))) as Replay;
  const jn = (await import(dist('scripts/journal.js'))) as Journal;
  const st = (await import(dist('store/sql/scripts.js'))) as ScriptStore;
  let h: TestHub | undefined = await startTestHub({ hubClass, processes: launcher, config: { maxAgents: 16 } });
  const dir = h.dir;
  try {
    const t0 = performance.now();
    const { run_id: runId } = await h.call('run_script', { script: SOURCE, args: { n: CALLS }, title: 'replay bench' });
    const v = await h.call('get_run', { run_id: runId, wait_s: 600 });
    const liveMs = performance.now() - t0;
    if (v.status !== 'succeeded') throw new Error(`the live run ended ${v.status}: ${v.error}`);
    const expected = v.result;
    const jobs = launcher.children.length;
    if (jobs !== CALLS) throw new Error(`the live run started ${jobs} jobs, not ${CALLS}`);
    const answers = (await st.callsOf(h.hub.ctx.sql.db, runId)).map((c) => JSON.parse(c.outcome_json!) as unknown);

    const replay: number[] = [];
    const sandbox: number[] = [];
    const work: number[] = [];
    const replayCpu: number[] = [];
    const sandboxCpu: number[] = [];
    for (let i = -1; i < RUNS; i++) {
      const w = await journalWork(h, rp, jn, st, runId);
      if (i >= 0) work.push(w);
      const order = i % 2 === 0 ? ['replay', 'sandbox'] : ['sandbox', 'replay'];
      for (const k of order) {
        if (k === 'sandbox') {
          const { ms, cpu } = await sandboxAlone(sb, answers);
          if (i >= 0) { sandbox.push(ms); sandboxCpu.push(cpu); }
          continue;
        }
        await rerun(h, runId);
        const done = ended(h, runId);
        const c0 = process.cpuUsage();
        const r0 = performance.now();
        await h.hub.scripts.resumeAll();
        const status = await done;
        const ms = performance.now() - r0;
        const cpu = cpuSince(c0);
        if (status !== 'succeeded') throw new Error(`the replay ended ${status}`);
        if (JSON.stringify(await resultOf(h, runId)) !== JSON.stringify(expected)) throw new Error(`the replay returned ${JSON.stringify(await resultOf(h, runId))}, not ${JSON.stringify(expected)}`);
        if (launcher.children.length !== CALLS) throw new Error(`the replay started ${launcher.children.length - CALLS} jobs`);
        if (i >= 0) { replay.push(ms); replayCpu.push(cpu); }
      }
    }

    // A new hub on the same state continues the run by itself (RUNS times): its start → the run ended.
    const toEnd: number[] = [];
    const starts: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      await rerun(h, runId);
      await h.stop({ keep: true });
      h = undefined;
      const n0 = Date.now();
      h = await startTestHub({ hubClass, processes: launcher, dir, config: { maxAgents: 16 } });
      starts.push(Date.now() - n0);
      const hub = h;
      const endedAt = await new Promise<number>((resolve, reject) => {
        let settled = false;
        const check = async (): Promise<void> => {
          const row = (await sql<{ status: string; ended_at: number | null }>`SELECT status, ended_at FROM runs WHERE id = ${runId}`.execute(hub.hub.ctx.sql.db)).rows[0]!;
          if (settled || row.status === 'running') return;
          settled = true;
          off();
          if (row.status !== 'succeeded') reject(new Error(`the new hub's run ended ${row.status}`));
          else resolve(row.ended_at!);
        };
        const off = hub.hub.ctx.bus.on('run', (e) => { if (e.runId === runId) void check().catch(reject); });
        void check().catch(reject);
      });
      toEnd.push(endedAt - n0);
      if (JSON.stringify(await resultOf(hub, runId)) !== JSON.stringify(expected)) throw new Error('the new hub\'s replay returned another result');
      if (launcher.children.length !== CALLS) throw new Error(`the new hub started ${launcher.children.length - CALLS} jobs`);
    }

    const rs = stats(replay);
    const ss = stats(sandbox);
    const r: ScriptReplayResult = {
      calls: CALLS, runs: RUNS, liveMs, replay: rs, sandbox: ss, journalShareMs: rs.p50 - ss.p50,
      cpu: { replay: stats(replayCpu).p50, sandbox: stats(sandboxCpu).p50 }, journalWorkMs: stats(work).p50,
      newHub: { toEndMs: stats(toEnd).p50, startMs: stats(starts).p50 }, samples: { replay, sandbox, newHub: toEnd },
    };
    out(`   the live run (${CALLS} agent() calls, one after the other, scripted children): ${f1(liveMs)} ms\n`
      + `   replay of its journal (resumeAll → run ended): median ${f1(rs.p50)} ms (${replay.map((x) => x.toFixed(0)).join(', ')}) (goal: under ${GOAL_MS} ms)\n`
      + `   the same script in the sandbox alone, answers from memory: median ${f1(ss.p50)} ms (${sandbox.map((x) => x.toFixed(0)).join(', ')})\n`
      + `   the journal's share: ${f1(r.journalShareMs)} ms (${f1(r.journalShareMs / CALLS * 1000)} µs a call); CPU, medians: replay ${f1(r.cpu.replay)} ms, sandbox alone ${f1(r.cpu.sandbox)} ms\n`
      + `   the journal's own work alone (read it as resumeAll and execute do, key, match and answer ${CALLS} calls): median ${f1(r.journalWorkMs)} ms (${work.map((x) => x.toFixed(1)).join(', ')})\n`
      + `   a new hub on the same state: start → the run ended, median ${f1(r.newHub.toEndMs)} ms (${toEnd.map((x) => x.toFixed(0)).join(', ')}; the hub's start alone ${f1(r.newHub.startMs)} ms)\n`);
    return r;
  } finally {
    await h?.stop().catch(() => undefined);
    await removeDir(dir);
  }
}

export const SCRIPT_REPLAY_GOAL_MS = GOAL_MS;

runAlone(import.meta.url, benchScriptReplay);
