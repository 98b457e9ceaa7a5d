// The lead's script-run attention on a real SQLite state: an ended run is told once (ack records
// it), a running one is not; the hub's bundled scripts (the implement/review workflow, rules
// `bundled`) are neither told nor on the floor's run list — their workflow speaks for them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb } from '../../src/store/db.js';
import { RunAttention } from '../../src/services/runAttention.js';
import { listScriptRuns } from '../../src/scripts/view.js';

function insertRun(db: ReturnType<typeof openDb>, id: string, status: string, rules: Record<string, unknown> = {}): void {
  db.prepare(`INSERT INTO runs (id, title, file, content, format, rules_json, status, note, deadline_at, created_at, updated_at, ended_at, kind)
    VALUES (?, ?, NULL, 'return 1', 'js', ?, ?, ?, NULL, 1000, 2000, ?, 'script')`)
    .run(id, `title ${id}`, JSON.stringify({ name: null, budget_usd: null, max_concurrent: 16, ...rules }), status, status === 'failed' ? 'Error (line 2): boom' : null, status === 'running' ? null : 2000);
}

describe('RunAttention', () => {
  test('an ended run once; not a running one; not a bundled script', () => {
    const db = openDb(':memory:');
    insertRun(db, 'r-live', 'running');
    insertRun(db, 'r-bad', 'failed');
    insertRun(db, 'r-wf', 'failed', { bundled: 'implement-review' });
    const a = new RunAttention(db);
    const first = a.untold();
    assert.deepEqual(first.items.map((i) => [i.kind, i.run_id, i.status, i.error]), [['run_ended', 'r-bad', 'failed', 'Error (line 2): boom']]);
    assert.equal(a.untold().items.length, 1, 'not told until acknowledged');
    first.ack(5000);
    assert.deepEqual(a.untold().items, []);
    assert.deepEqual(listScriptRuns(db, { limit: 10 }).map((r) => r.id).sort(), ['r-bad', 'r-live']);
  });
});
