// The lead digest's read (src/store/sql/digest.ts): one statement returns the jobs that ended, the
// pending requests that opened and the unseen open warnings raised in [since, until), each in its
// order, with nothing outside the window or of the wrong state — on both databases.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { digestBetween } from '../../src/store/sql/digest.js';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { insertRequest } from '../../src/store/sql/requests.js';
import { clearWarning, markWarningsSeen, raiseWarning } from '../../src/store/sql/warnings.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect, type Dialect } from '../helpers/sqlDialect.js';

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe(`lead digest read, ${dialect}`, () => {
    it('returns the window\'s ended jobs, pending requests and unseen warnings, each in order', async (t) => {
      const { s } = await openDialect(dialect, t);
      const q = s.db;
      const end = async (id: string, status: string, at: number, extra: Record<string, unknown> = {}): Promise<void> => {
        await insertJob(q, newJob(id), 100);
        await updateJob(q, id, { status: status as never, ended_at: at, ...extra }, at);
      };
      await end('j-late', 'succeeded', 1_500, { result: 'done\nmore' });
      await end('j-early', 'failed', 1_100, { error: 'boom', failure_class: 'crashed' });
      await end('j-before', 'succeeded', 999);
      await end('j-after', 'cancelled', 2_000);
      await insertJob(q, newJob('j-live'), 100);
      await updateJob(q, 'j-live', { status: 'running', started_at: 1_200 }, 1_200);
      const req = (id: string, at: number) => insertRequest(q, {
        id, job_id: 'j-live', kind: 'question', summary: `ask ${id}`, plan_json: null, options_json: null, created_at: at,
        tool_name: null, tool_input_json: null, expires_at: null, who: 'any',
      });
      await req('r-2', 1_300);
      await req('r-1', 1_050);
      await req('r-out', 900);
      await raiseWarning(q, 'j-live', 'stalled', 'quiet', 1_400);
      const seen = await raiseWarning(q, 'j-live', 'turns_high', 'many', 1_401);
      await markWarningsSeen(q, [seen!.id], 1_402);
      await raiseWarning(q, 'j-live', 'budget_high', 'spent', 1_403);
      await clearWarning(q, 'j-live', 'budget_high', 1_404);
      await raiseWarning(q, 'j-live', 'time_high', 'long', 1_405);

      const d = await digestBetween(q, 1_000, 2_000);
      assert.deepEqual(d.ended, [
        { id: 'j-early', title: 'title of j-early', status: 'failed', failure_class: 'crashed', result: null, error: 'boom', ended_at: 1_100 },
        { id: 'j-late', title: 'title of j-late', status: 'succeeded', failure_class: null, result: 'done\nmore', error: null, ended_at: 1_500 },
      ]);
      assert.deepEqual(d.requests, [
        { id: 'r-1', job_id: 'j-live', kind: 'question', summary: 'ask r-1', created_at: 1_050 },
        { id: 'r-2', job_id: 'j-live', kind: 'question', summary: 'ask r-2', created_at: 1_300 },
      ]);
      assert.deepEqual(d.warnings, [
        { job_id: 'j-live', kind: 'stalled', detail: 'quiet', raised_at: 1_400 },
        { job_id: 'j-live', kind: 'time_high', detail: 'long', raised_at: 1_405 },
      ]);
      assert.deepEqual(await digestBetween(q, 3_000, 4_000), { ended: [], requests: [], warnings: [] });
    });
  });
}
