// Benchmark 3: wait_for_agents wake-up after a child ends.
// A wait_for_agents call is in flight (sent right after spawn_agent; the fake child runs for
// BENCH_EXIT_DELAY first); the child stamps its exit time right before it prints its result
// and exits. Wake-up = the moment the wait_for_agents call returns in the lead client − that
// stamp. This INCLUDES the hub noticing the process exit (pipe close + exit status), ending
// the attempt in SQLite, the bus event, the wait's re-check and the MCP reply. 30 samples.
// Run alone: node --import tsx bench/wait-wakeup.ts
import { pathToFileURL } from 'node:url';
import { clockSkewMs, f1, fixture, out, readStamps, startBenchHub, stampOf, statLine, stats, wallMs, type Stats } from './common.js';
import { getJob } from '../src/store/sql/jobs.js';

const RUNS = 30;
const WARMUP = 3;
const EXIT_DELAY_S = '0.1';

export interface WaitWakeupResult {
  wakeup: Stats;
  /** child exit stamp → job row ended_at (ms resolution): the hub noticing the exit. */
  exitNoticed: Stats;
  /** job row ended_at → wait_for_agents returned in the client. */
  endedToReturn: Stats;
  /** Samples whose wait had not been sent before the child ended (left out). */
  skipped: number;
}

export async function benchWaitWakeup(): Promise<WaitWakeupResult> {
  const h = await startBenchHub({ claudeBin: fixture('fake-agent.sh'), env: { BENCH_EXIT_DELAY: EXIT_DELAY_S }, config: { maxAgents: 8 } });
  try {
    const skew = clockSkewMs();
    if (Math.abs(skew) > 2) out(`  (note: Date.now() − performance clock = ${f1(skew)} ms; the system clock stepped)\n`);
    const wake: number[] = [];
    const noticed: number[] = [];
    const endedToRet: number[] = [];
    let skipped = 0;
    for (let i = -WARMUP; i < RUNS; i++) {
      const { job_id } = await h.call<{ job_id: string }>('spawn_agent', { prompt: `bench wait ${i}`, title: `wait ${i}` });
      const sent = wallMs();
      const w = await h.call('wait_for_agents', { job_ids: [job_id], timeout_s: 60 });
      const tRet = wallMs();
      if (w.done?.[0]?.status !== 'succeeded') throw new Error(`job ${job_id} did not succeed: ${JSON.stringify(w).slice(0, 500)}`);
      if (i < 0) continue;
      const exit = stampOf(readStamps(h.stampFile), job_id, 'exit');
      if (exit === undefined) throw new Error(`no exit stamp from job ${job_id}`);
      if (sent >= exit) {
        skipped++;
        continue;
      }
      wake.push(tRet - exit);
      const ended = (await getJob(h.hub.ctx.sql.db, job_id))?.ended_at;
      if (ended != null) {
        noticed.push(ended - exit);
        endedToRet.push(tRet - ended);
      }
    }
    const wakeup = stats(wake);
    const exitNoticed = stats(noticed);
    const endedToReturn = stats(endedToRet);
    out(
      statLine(`wait_for_agents wake-up: child exit stamp → wait returns in the client (${RUNS} samples; includes the hub noticing the exit)`, wakeup) +
        statLine('  of which exit stamp → job ended_at (hub notices the exit; ms resolution)', exitNoticed) +
        statLine('  of which job ended_at → wait returns', endedToReturn) +
        (skipped ? `  (${skipped} sample(s) skipped: the child ended before the wait was sent)\n` : ''),
    );
    return { wakeup, exitNoticed, endedToReturn, skipped };
  } finally {
    await h.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchWaitWakeup().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
