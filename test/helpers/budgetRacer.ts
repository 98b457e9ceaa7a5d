// Worker thread of the cross-connection budget race (test/integration/budget-store.test.ts):
// opens the shared state database on its own connection (SQLite: the state file; PostgreSQL: a
// pool of its own), waits for the start signal, then checks and reserves one job in one
// transaction — as JobService.create does (Budgets.check takes the spawn lock first) — and
// reports whether the budget let it pass.
import { parentPort, workerData } from 'node:worker_threads';
import { openSql } from '../../src/store/sql/open.js';
import { transact } from '../../src/store/sql/tx.js';
import { insertJob } from '../../src/store/sql/jobs.js';
import { BudgetExceededError } from '../../src/errors.js';
import { budgetsOver, newJob } from './budgetDb.js';

const { home, url, id, houseUsd, askUsd, start } = workerData as { home: string; url?: string; id: string; houseUsd: number; askUsd: number; start: SharedArrayBuffer };
const s = await openSql({ home, databaseUrl: url });
const { budgets } = budgetsOver(s, { budgetUsd: houseUsd });
// One round trip first, so the race is about the decision and not about connecting.
await s.db.selectFrom('jobs').select('id').limit(1).execute();
const flag = new Int32Array(start);
parentPort!.postMessage({ ready: true });
Atomics.wait(flag, 0, 0);
let passed = false;
let error = '';
try {
  await transact(s.db, async (trx) => {
    const r = await budgets.check(trx, { parentId: null, provider: 'claude', model: null, template: null, labels: [], budgetUsd: askUsd }, 'lead');
    await insertJob(trx, newJob(id, { budget_usd: askUsd }), Date.now());
    if (r) await budgets.hold(trx, id, r, Date.now());
  });
  passed = true;
} catch (err) {
  if (!(err instanceof BudgetExceededError)) throw err;
  error = err.message;
}
await s.close();
parentPort!.postMessage({ id, passed, error });
