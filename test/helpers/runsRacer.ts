// Worker thread of the races of runs, schedules and debates (test/integration/sql-runs.test.ts): a
// hub's part on a connection of its own (SQLite: the state file; PostgreSQL: a pool of its own)
// waits for the start signal, then makes each decision in `keys` as the engine does and reports the
// ones it won. A decision that makes a job runs as JobService.create does: one transaction, the
// spawn lock (PostgreSQL), the job's row, then the module's own conditional write; losing it
// rolls the job back.
import { parentPort, workerData } from 'node:worker_threads';
import { openSql } from '../../src/store/sql/open.js';
import { transact, type Q } from '../../src/store/sql/tx.js';
import { insertJob } from '../../src/store/sql/jobs.js';
import { lockSpawns } from '../../src/store/sql/budgets.js';
import { advanceSchedule, queueDue } from '../../src/store/sql/schedules.js';
import { claimTask } from '../../src/store/sql/runs.js';
import { recordTurn, settleTurn } from '../../src/store/sql/debates.js';
import { newJob } from './budgetDb.js';

export type RaceOp = 'due' | 'next' | 'claim' | 'turn' | 'settle';

const { home, url, keys, start, me, op } = workerData as { home: string; url?: string; keys: string[]; start: SharedArrayBuffer; me: string; op: RaceOp };
const s = await openSql({ home, databaseUrl: url });
await s.db.selectFrom('jobs').select('id').limit(1).execute();
const flag = new Int32Array(start);
parentPort!.postMessage({ ready: true });
Atomics.wait(flag, 0, 0);

class Lost extends Error {}

/** A job made in one transaction with the decision `decide`; true when it was made. */
async function createWith(jobId: string, decide: (trx: Q) => Promise<boolean>): Promise<boolean> {
  try {
    await transact(s.db, async (trx) => {
      await lockSpawns(trx);
      await insertJob(trx, newJob(jobId, { status: 'waiting' }), Date.now());
      if (!(await decide(trx))) throw new Lost();
    });
    return true;
  } catch (err) {
    if (err instanceof Lost) return false;
    throw err;
  }
}

const won: string[] = [];
for (const key of keys) {
  const jobId = `j-${me}-${key}`;
  let ok: boolean;
  if (op === 'due') ok = await queueDue(s.db, key, Date.now());
  // key: a schedule whose current occurrence j-prev-<key> settled; the next one is occurrence 2.
  else if (op === 'next') ok = await createWith(jobId, (trx) => advanceSchedule(trx, key, `j-prev-${key}`, jobId, 2, Date.now()));
  // key: a pending task of run r-1.
  else if (op === 'claim') ok = await createWith(jobId, (trx) => claimTask(trx, 'r-1', key, jobId));
  // key: a round of debate d-1 (side 0 of that round's answer).
  else if (op === 'turn') ok = await createWith(jobId, (trx) => recordTurn(trx, { debate_id: 'd-1', loop: 1, kind: 'answer', round: Number(key), side: 0 }, jobId, Date.now()));
  // key: the job of a running turn; its answer is recorded once.
  else ok = await settleTurn(s.db, key, { status: 'done', position: `by ${me}` }, Date.now());
  if (ok) won.push(key);
}
await s.close();
parentPort!.postMessage({ me, won });
