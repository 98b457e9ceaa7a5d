// What JobService.create reads and writes besides the job's row, now that it has no synchronous
// part (issue 29, the job-creation bridges removed): the project's check and row, a script run's
// own budget and a job's reservation as get_agent shows it — each on SQLite and PostgreSQL,
// through the layer alone (PostgreSQL has no synchronous store).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { assertProjectOpen } from '../../src/projects/service.js';
import { changeProject, ensureProject, getProject } from '../../src/store/sql/projects.js';
import { insertScriptRun } from '../../src/store/sql/scripts.js';
import { scriptRunBudget } from '../../src/scripts/view.js';
import { holdReservation, releaseReservation } from '../../src/store/sql/budgets.js';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { transact } from '../../src/store/sql/tx.js';
import { InvalidInputError, InvalidStateError } from '../../src/errors.js';
import { budgetsOver, newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';

const T = 1_764_000_000_000;

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`job creation's reads and writes on ${dialect}`, () => {
    test('a project: a bad name and an archived project are refused, the row is made once and keeps its first time', async (t) => {
      const { s } = await openDialect(dialect, t);
      const q = s.db;
      await assertProjectOpen(q, 'web');
      await assert.rejects(assertProjectOpen(q, 'bad name'), (e: unknown) => e instanceof InvalidInputError && /not a valid project name/.test(e.message));
      await transact(q, (trx) => ensureProject(trx, 'web', T));
      await ensureProject(q, 'web', T + 50);
      assert.deepEqual(await getProject(q, 'web'), { name: 'web', archived_at: null, flagged: 0, note: null, created_at: T });
      await changeProject(q, 'web', { archived: true }, T + 100);
      await assert.rejects(assertProjectOpen(q, 'web'), (e: unknown) => e instanceof InvalidStateError && /project "web" is archived .*unarchive it first/.test(e.message));
      await assertProjectOpen(q, 'api');
    });

    test('a script run\'s budget: only a script run with budget_usd has one', async (t) => {
      const { s } = await openDialect(dialect, t);
      const q = s.db;
      await insertScriptRun(q, { id: 'r-1', title: 'review', file: null, content: '', rules_json: JSON.stringify({ name: null, budget_usd: 2.5, max_concurrent: 4 }), now: T });
      await insertScriptRun(q, { id: 'r-2', title: 'free', file: null, content: '', rules_json: JSON.stringify({ name: null, budget_usd: null, max_concurrent: 4 }), now: T });
      assert.deepEqual(await scriptRunBudget(q, 'r-1'), { limitUsd: 2.5, title: 'review' });
      assert.equal(await scriptRunBudget(q, 'r-2'), undefined);
      assert.equal(await scriptRunBudget(q, 'r-none'), undefined);
    });

    test('a reservation as get_agent shows it: what is left while held, what was booked once released', async (t) => {
      const { s } = await openDialect(dialect, t);
      const q = s.db;
      const { budgets } = budgetsOver(s, { budgetUsd: 10 });
      const { status: _status, ...row } = newJob('j-a');
      await insertJob(q, { ...row, status: 'running' }, T);
      assert.equal(await budgets.view(q, { id: 'j-a', status: 'running', cost_usd: 0 }), undefined, 'no reservation: nothing to show');
      await holdReservation(q, 'j-a', 1, 0, 'test', T);
      assert.deepEqual(await budgets.view(q, { id: 'j-a', status: 'running', cost_usd: 0.25 }), { reserved_usd: 1, left_usd: 0.75, basis: 'test' });
      await updateJob(q, 'j-a', { status: 'succeeded', cost_usd: 0.4 }, T + 10);
      await releaseReservation(q, 'j-a', T + 10);
      assert.deepEqual(await budgets.view(q, { id: 'j-a', status: 'succeeded', cost_usd: 0.4 }), { reserved_usd: 1, released: true, booked_usd: 0.4, basis: 'test' });
    });
  });
}
