// What the CLI reads through the layer (src/store/sql/cli.ts, src/cli/state.ts resolveJob, the
// status's own columns and budget line), on SQLite and PostgreSQL: a job id by its exact value or
// a unique prefix (with or without "j-", any case, % and _ literal), an ambiguous prefix and an
// unknown id as usage errors naming the candidates; archived projects, the script call, the merge
// target and the setup report of each job; the budgets line.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { archivedProjectNames, idsWithPrefix, mergeTargetsByJob, nearbyIds, scriptCallsByJob, setupReportsByJob } from '../../src/store/sql/cli.js';
import { holdReservation } from '../../src/store/sql/budgets.js';
import { recordSetup } from '../../src/store/sql/setup.js';
import { resolveJob } from '../../src/cli/state.js';
import { budgetsLine } from '../../src/cli/status.js';
import { UsageError } from '../../src/cli/errors.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`the CLI's reads on ${dialect}`, () => {
    test('job ids by prefix, nearby ids, and resolveJob\'s answers and errors', async (t) => {
      const s = (await openDialect(dialect, t)).s;
      const q = s.db;
      for (const id of ['j-ab12', 'j-ab34', 'j-c_d1', 'j-cxd2']) await insertJob(q, newJob(id), 1);
      assert.deepEqual(await idsWithPrefix(q, 'ab'), ['j-ab12', 'j-ab34']);
      assert.deepEqual(await idsWithPrefix(q, 'AB3'), ['j-ab34'], 'any case, on both databases');
      assert.deepEqual(await idsWithPrefix(q, 'j-ab3'), ['j-ab34']);
      assert.deepEqual(await idsWithPrefix(q, 'c_'), ['j-c_d1'], '_ is not a wildcard');
      assert.deepEqual(await idsWithPrefix(q, '%'), []);
      assert.deepEqual(await idsWithPrefix(q, 'j-', 3), ['j-ab12', 'j-ab34', 'j-c_d1']);
      assert.deepEqual(await nearbyIds(q, 'j-abzz', 3), ['j-ab34', 'j-ab12', 'j-cxd2'], 'same first four characters first, then the newest');

      assert.equal((await resolveJob({ sql: s }, 'j-cxd2')).id, 'j-cxd2');
      assert.equal((await resolveJob({ sql: s }, 'ab1')).title, 'title of j-ab12');
      await assert.rejects(resolveJob({ sql: s }, 'ab'), (e: Error) => e instanceof UsageError && /ambiguous: it matches j-ab12, j-ab34\. Give more characters/.test(e.message));
      await assert.rejects(resolveJob({ sql: s }, 'zz'), (e: Error) => e instanceof UsageError && /^No job "zz"\. Recent jobs: j-cxd2, j-c_d1, j-ab34, j-ab12\./.test(e.message));
      await assert.rejects(resolveJob({ sql: s }, ' '), (e: Error) => e instanceof UsageError && /empty/.test(e.message));
    });

    test('what the status table adds to each job: archived projects, script call, merge target, setup report; the budgets line', async (t) => {
      const q = (await openDialect(dialect, t)).s.db;
      await insertJob(q, newJob('j-1', { worktree: 1, labels_json: '["tests"]', status: 'running' }), 1);
      await insertJob(q, newJob('j-2'), 2);
      await updateJob(q, 'j-1', { cost_usd: 1.25 }, 3);
      await q.insertInto('projects').values([{ name: 'old', archived_at: 5, created_at: 1 }, { name: 'live', created_at: 1 }, { name: 'gone', archived_at: 6, created_at: 1 }]).execute();
      assert.deepEqual(await archivedProjectNames(q), ['gone', 'old']);

      await sql`INSERT INTO runs (id, title, content, format, rules_json, status, created_at, updated_at, kind) VALUES ('r-1', 'nightly', '', 'js', '{}', 'running', 1, 1, 'script')`.execute(q);
      await sql`INSERT INTO script_calls (run_id, seq, kind, args_json, status, job_id, started_at) VALUES ('r-1', 2, 'agent', '{}', 'running', 'j-1', 1), ('r-1', 3, 'approve', '{}', 'running', NULL, 1)`.execute(q);
      assert.deepEqual([...await scriptCallsByJob(q)], [['j-1', { run_id: 'r-1', call: 2, title: 'nightly', status: 'running' }]]);

      const merge = (target: string, id: number) => sql`INSERT INTO job_merges (job_id, repo_root, branch, target, mode, commit_sha, previous, merged_at) VALUES ('j-2', '/r', 'b', ${target}, 'merge', 'c', 'p', ${id})`.execute(q);
      await merge('dev', 1);
      await merge('main', 2);
      assert.deepEqual([...await mergeTargetsByJob(q)], [['j-2', 'main']], 'the last merge');

      const report = { status: 'ok' as const, source: 'config' as const, copied: [], commands: [{ command: 'npm ci', exit_code: 0, duration_ms: 1200 }], duration_ms: 1234 };
      await recordSetup(q, 'j-1', report as never, 4);
      assert.deepEqual([...await setupReportsByJob(q)], [['j-1', report]]);

      await holdReservation(q, 'j-1', 2, 0, 'test', 1);
      assert.equal(await budgetsLine(q, { labelBudgets: {} }), undefined);
      assert.equal(await budgetsLine(q, { budgetUsd: 10, labelBudgets: { tests: 1, docs: 2 } }),
        'budgets: house $10.00: $1.25 spent, $0.75 reserved, $8.00 left · label tests $1.00: $1.25 spent, $0.75 reserved, $0.00 left · label docs $2.00: $0.00 spent, $0.00 reserved, $2.00 left');
    });
  });
}
