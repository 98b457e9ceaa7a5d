// Worker thread of the cross-connection budget race (test/integration/budget-store.test.ts):
// opens the shared state database on its own connection, waits for the start signal, then
// checks and reserves one job in one transaction — as JobService.create does — and reports
// whether the budget let it pass.
import { parentPort, workerData } from 'node:worker_threads';
import { openDb, tx } from '../../src/store/db.js';
import { BudgetExceededError } from '../../src/errors.js';
import { budgetsOn, newJob } from './budgetDb.js';

const { file, id, houseUsd, askUsd, start } = workerData as { file: string; id: string; houseUsd: number; askUsd: number; start: SharedArrayBuffer };
const db = openDb(file);
const { budgets, store } = budgetsOn(db, { budgetUsd: houseUsd });
const flag = new Int32Array(start);
parentPort!.postMessage({ ready: true });
Atomics.wait(flag, 0, 0);
let passed = false;
let error = '';
try {
  tx(db, () => {
    const r = budgets.check({ parentId: null, provider: 'claude', model: null, template: null, labels: [], budgetUsd: askUsd }, 'lead');
    store.insertJob(newJob(id, { budget_usd: askUsd }), Date.now());
    if (r) budgets.hold(id, r, Date.now());
  });
  passed = true;
} catch (err) {
  if (!(err instanceof BudgetExceededError)) throw err;
  error = err.message;
}
db.close();
parentPort!.postMessage({ id, passed, error });
