// A lost worker in the store (issue 30 point 3; src/store/sql/workers.ts markWorkerLost, src/store/sql/
// transcriptTail.ts, src/services/workerLost.ts workerLostSeed) on both databases: the lost mark is a
// compare-and-set on the worker's epoch (two connections at once: one marks it; a worker that
// registered again under a new epoch is not touched; a lost worker's beat is fenced), and the seed of
// the next attempt is the lost attempt's text and tool calls, newest kept within the budget.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { transcriptIndex } from '../../src/search/sqlIndex.js';
import { beatWorker, markWorkerLost, registerWorker, workerOfHub, type WorkerIdentity } from '../../src/store/sql/workers.js';
import { transcriptTail } from '../../src/store/sql/transcriptTail.js';
import { workerLostSeed, WORKER_LOST } from '../../src/services/workerLost.js';
import { attemptsOf, eventInsert, insertAttempt, insertJob } from '../../src/store/sql/jobs.js';
import { PromptLibrary } from '../../src/prompts/load.js';
import { packageRoot } from '../../src/config.js';
import { newJob } from '../helpers/budgetDb.js';
import { dialectSuite, type Dialect } from '../helpers/sqlDialect.js';
import type { AttemptRow } from '../../src/store/jobs.js';

const w = (name: string, o: Partial<WorkerIdentity> = {}): WorkerIdentity => ({
  name, host: 'box-1', pid: 4242, capacity: 2, labels: [], clis: { claude: '2.0.0 (Claude Code)' }, version: 'test', leaseMs: 60_000, ...o,
});

const attempt = (jobId: string, n: number, o: Partial<AttemptRow> = {}): AttemptRow => ({
  job_id: jobId, n, kind: n === 1 ? 'initial' : 'retry', status: 'running', started_at: 1, ended_at: null, session_id: null, pid: null,
  exit_code: null, signal: null, turns: 0, cost_usd: 0, failure_class: null, error: null, diagnosis: null, transcript: `/x/attempt-${n}.jsonl`, ...o,
});

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe(`a lost worker in the store on ${dialect}`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-lost-', other: true });

    test('lost once, on its epoch: the second mark and an old epoch match nothing, its beat is fenced, the name is free again', async () => {
      const { s } = layer;
      assert.deepEqual(await registerWorker(s.db, s.dialect, w('alpha')), { ok: true, epoch: 1 });
      await s.db.updateTable('workers').set({ hub_id: 'h-alpha' }).where('name', '=', 'alpha').execute();
      assert.equal((await workerOfHub(s.db, 'h-alpha'))?.name, 'alpha');
      assert.equal(await workerOfHub(s.db, 'h-plain'), undefined, 'a plain hub is no worker');
      assert.equal(await markWorkerLost(s.db, s.dialect, 'alpha', 2), undefined, 'another epoch is not marked');
      const row = await markWorkerLost(s.db, s.dialect, 'alpha', 1);
      assert.equal(row?.state, 'lost');
      assert.ok(Number(row?.lost_at) > 0);
      assert.equal(await markWorkerLost(s.db, s.dialect, 'alpha', 1), undefined, 'lost once');
      assert.equal(await beatWorker(s.db, s.dialect, 'alpha', 1), false, 'a lost worker cannot beat: it is fenced');
      assert.deepEqual(await registerWorker(s.db, s.dialect, w('alpha')), { ok: true, epoch: 2 }, 'the name is free for the next epoch');
      assert.equal(await markWorkerLost(s.db, s.dialect, 'alpha', 1), undefined, 'the old epoch does not mark the new registration lost');
      assert.equal((await s.db.selectFrom('workers').select('state').where('name', '=', 'alpha').executeTakeFirstOrThrow()).state, 'live');
    });

    test('two connections mark one worker lost at once: exactly one does', async () => {
      const { s, other } = layer;
      for (let round = 0; round < 10; round++) {
        const name = `race-${round}`;
        assert.equal((await registerWorker(s.db, s.dialect, w(name))).ok, true);
        const got = await Promise.all([markWorkerLost(s.db, s.dialect, name, 1), markWorkerLost(other.db, other.dialect, name, 1)]);
        assert.equal(got.filter((r) => r !== undefined).length, 1, `round ${round}: ${JSON.stringify(got.map((r) => r?.state))}`);
      }
    });

    test('the seed: the lost attempt\'s text and tool calls, newest kept within the budget, only after a worker_lost attempt', async () => {
      const { s } = layer;
      await insertJob(s.db, newJob('j-seed', { placement: 'queue', queue_name: 'att_claude' }), 1);
      await insertAttempt(s.db, attempt('j-seed', 1, { status: 'interrupted', ended_at: 5, failure_class: 'interrupted', error: `${WORKER_LOST}: worker alpha (host box-1) stopped heartbeating` }));
      const rows = [
        ['text', null, 'I will start by reading the old parser.'],
        ['tool_call', 'Read', '{"file_path":"src/parser.ts"}'],
        ['tool_result', 'Read', 'the whole file, which the seed leaves out'],
        ['text', null, 'The bug is in tokenize(): it drops the last token.'],
        ['tool_call', 'Edit', '{"file_path":"src/parser.ts","old":"i < n - 1","new":"i < n"}'],
      ] as const;
      // Written as the search indexer writes them (src/search/sqlIndex.ts).
      await transcriptIndex(s.dialect).insert(s.db, rows.map(([kind, tool, text], i) => ({ jobId: 'j-seed', attempt: 1, line: i + 1, at: 1000 + i, kind, text, ...(tool ? { tool } : {}) })));
      const all = await transcriptTail(s.db, 'j-seed', 1, 10_000);
      assert.deepEqual(all.rows.map((r) => r.kind), ['text', 'tool_call', 'text', 'tool_call'], 'tool results left out, oldest first');
      assert.equal(all.omitted, 0);
      const newest = await transcriptTail(s.db, 'j-seed', 1, 120);
      assert.deepEqual(newest.rows.map((r) => r.body), [rows[3][2], rows[4][2]], 'the newest that fit the budget');
      assert.equal(newest.omitted, 2);

      const prompts = new PromptLibrary(join(packageRoot(), 'prompts'));
      await insertAttempt(s.db, attempt('j-seed', 2, { kind: 'retry' }));
      const attempts = await attemptsOf(s.db, 'j-seed');
      assert.equal(await workerLostSeed(s.db, prompts, 'j-seed', 'retry', attempts), undefined, 'no worker_lost event for attempt 1: no seed');
      await eventInsert(s.db, 'j-seed', 6, WORKER_LOST, { attempt: 1, worker: 'alpha', host: 'box-1', heartbeat_at: 4 }).execute();
      const seed = await workerLostSeed(s.db, prompts, 'j-seed', 'retry', attempts);
      assert.match(seed ?? '', /worker `alpha` \(host box-1\)/);
      assert.match(seed ?? '', /fresh from the base/);
      assert.match(seed ?? '', /said: The bug is in tokenize\(\)/);
      assert.match(seed ?? '', /called Edit: \{"file_path":"src\/parser.ts"/);
      assert.doesNotMatch(seed ?? '', /which the seed leaves out/);
      assert.equal(await workerLostSeed(s.db, prompts, 'j-seed', 'resume', attempts), undefined, 'only a new attempt (kind retry) is seeded');
    });
  });
}
