// The lead's script-run attention, on SQLite and PostgreSQL: an ended run is told once (ack records
// it), a running one is not; the hub's bundled scripts (the implement/review workflow, rules
// `bundled`) are neither told nor on the floor's run list — their workflow speaks for them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { RunAttention } from '../../src/services/runAttention.js';
import { listScriptRuns } from '../../src/scripts/view.js';
import { beginCall, carryCall } from '../../src/store/sql/scripts.js';
import { getRequest, insertRequest } from '../../src/store/sql/requests.js';
import type { Q } from '../../src/store/sql/tx.js';
import { openDialect } from '../helpers/sqlDialect.js';

async function insertRun(q: Q, id: string, status: string, rules: Record<string, unknown> = {}): Promise<void> {
  await sql`INSERT INTO runs (id, title, file, content, format, rules_json, status, note, deadline_at, created_at, updated_at, ended_at, kind)
    VALUES (${id}, ${`title ${id}`}, NULL, 'return 1', 'js', ${JSON.stringify({ name: null, budget_usd: null, max_concurrent: 16, ...rules })}, ${status},
      ${status === 'failed' ? 'Error (line 2): boom' : null}, NULL, 1000, 2000, ${status === 'running' ? null : 2000}, 'script')`.execute(q);
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`RunAttention on ${dialect}`, () => {
    const open = async (t: { after: (fn: () => Promise<void> | void) => void }): Promise<Q> => (await openDialect(dialect, t)).s.db;

    test('an ended run once; not a running one; not a bundled script', async (t) => {
      const q = await open(t);
      await insertRun(q, 'r-live', 'running');
      await insertRun(q, 'r-bad', 'failed');
      await insertRun(q, 'r-wf', 'failed', { bundled: 'implement-review' });
      const a = new RunAttention(q);
      const first = await a.untold();
      assert.deepEqual(first.items.map((i) => [i.kind, i.run_id, i.status, i.error]), [['run_ended', 'r-bad', 'failed', 'Error (line 2): boom']]);
      assert.equal((await a.untold()).items.length, 1, 'not told until acknowledged');
      await first.ack(5000);
      assert.deepEqual((await a.untold()).items, []);
      assert.deepEqual((await listScriptRuns(q, { limit: 10 })).map((r) => r.id).sort(), ['r-bad', 'r-live']);
    });

    test('an approve() waiting for the person: one run_needs_person item with its request, once; not after it is answered', async (t) => {
      const q = await open(t);
      await insertRun(q, 'r-ask', 'running');
      const seq = await beginCall(q, { run_id: 'r-ask', kind: 'approve', args_json: '["Merge?"]', label: 'Merge?', phase: null, started_at: 3000 });
      await insertRequest(q, { id: 'q-1', job_id: 'lead', kind: 'approval', summary: 'Merge the branch?', plan_json: null, options_json: null, created_at: 3000, tool_name: null, tool_input_json: null, expires_at: null, who: 'person' });
      const a = new RunAttention(q);
      assert.deepEqual((await a.untold()).items, [], 'no item before the call names its request');
      await carryCall(q, 'r-ask', seq, { request_id: 'q-1' });
      const told = await a.untold();
      assert.deepEqual(told.items.map((i) => [i.kind, i.run_id, i.title, i.call, i.request_id, i.summary]), [['run_needs_person', 'r-ask', 'title r-ask', seq, 'q-1', 'Merge the branch?']]);
      assert.match(String(told.items[0]!.what_to_do), /overseer respond q-1 --approve\|--reject/);
      await told.ack(4000);
      assert.deepEqual((await a.untold()).items, [], 'told once');
      assert.equal((await getRequest(q, 'q-1'))!.lead_seen_at, 4000);
    });
  });
}
