// A racer process for the workflow store's decisions (test/integration/sql-workflows.test.ts),
// speaking sqlRacer.ts's protocol (run by sqlRacers.ts startRacer with this script):
//   {op: 'open', home, url?}                         openSql → {ok}
//   {op: 'call', module, fn, args}                   fn(db, ...args) of src/store/sql/<module>.ts → {ok, value}
//   {op: 'startPhase', id, expected, job, now}       what a phase start does in its job's transaction
//                                                    (src/workflow/phases.ts): the job row, then the
//                                                    claim of the workflow's current_job; a lost claim
//                                                    rolls the job back → {ok, value: won}
//   {op: 'close'}                                    → {ok}, then exits
import { serveSqlRacer } from './racerLoop.js';
import { sql } from 'kysely';
import type { SqlDb } from '../../src/store/sql/open.js';
import { transact } from '../../src/store/sql/tx.js';
import { claimPhase } from '../../src/store/sql/workflows.js';

let n = 0;

class Lost extends Error {}

async function startPhase(s: SqlDb, id: string, expected: string | null, job: string, now: number): Promise<boolean> {
  const seq = process.pid * 1000 + ++n;
  try {
    await transact(s.db, async (trx) => {
      await sql`INSERT INTO jobs (id, seq, depth, title, prompt, provider, cwd, status, created_at, updated_at, workflow_id, phase, cycle)
        VALUES (${job}, ${seq}, 1, ${`phase ${job}`}, 'p', 'claude', '/tmp', 'queued', ${now}, ${now}, ${id}, 'review', 1)`.execute(trx);
      if (!(await claimPhase(trx, id, expected, { current_job: job, phase: 'review', cycle: 1 }, now))) throw new Lost();
    });
    return true;
  } catch (err) {
    if (err instanceof Lost) return false;
    throw err;
  }
}

await serveSqlRacer({
  startPhase: async (cmd, s) => ({ ok: true, value: await startPhase(s, cmd.id as string, cmd.expected as string | null, cmd.job as string, cmd.now as number) }),
});
