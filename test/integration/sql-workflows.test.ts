// Workflow rows over the Kysely layer (src/store/sql/workflows.ts), on SQLite and PostgreSQL:
// what the store decides (docs/decisions.md "Workflows on the layer"), each raced by two real
// processes with a connection each (test/helpers/workflowRacer.ts):
//   - a phase is started once: two starts of one step at once, each a job row and the claim of
//     the workflow's current_job in one transaction — one claim wins, the other's job is rolled
//     back (one job);
//   - a check-off is applied once: two check-offs of one milestone at once — one applies, the
//     other is told it was not open, and the record keeps the winner's job;
//   - a status moves only from the states it may: a cancel and a finish at once — one wins.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { SqlDb } from '../../src/store/sql/open.js';
import {
  checkOffMilestone, claimPhase, deleteWorkflow, getWorkflow, insertWorkflow, listWorkflows, milestonesOf, moveWorkflow, recentWorkflowIds,
  reopenMilestone, setPlan, updateWorkflow, workflowsByStatus, type NewWorkflow,
} from '../../src/store/sql/workflows.js';
import { dialectSuite } from '../helpers/sqlDialect.js';

const RACER = join(import.meta.dirname, '../helpers/workflowRacer.ts');


const NOW = 1_764_000_000_000;
const ROUNDS = 15;

const wf = (id: string, o: Partial<NewWorkflow> = {}): NewWorkflow => ({
  id, title: `workflow ${id}`, task: 't', status: 'running', cycle: 0, phase: 'assess', cwd: '/r', repo_root: null, worktree_path: null, branch: null,
  base_commit: null, implementer_json: '{}', reviewer_json: '{}', max_cycles: 5, approve_plan: 0, plan_approved: 0, checks_json: '[]', template: null,
  phase_limits_json: null, state_json: '{}', blocked_json: null, current_job: null, approval_request: null, pr_url: null, git_note: null,
  created_at: NOW, ended_at: null, plan_text: null, project: null, ...o,
});

const jobsOf = async (s: SqlDb, workflowId: string): Promise<string[]> =>
  (await s.db.selectFrom('jobs').select('id').where('workflow_id', '=', workflowId).orderBy('id').execute()).map((r) => r.id);

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`workflows on ${dialect}`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-workflows-', racers: { n: 2, script: RACER, warm: [{ op: 'call', module: 'workflows', fn: 'getWorkflow', args: ['nobody'] }] } });
    const { racers } = layer;

    test('insert, read, list by status, update, delete; seq in order of insertion', async () => {
      await insertWorkflow(layer.s.db, wf('w-a'));
      await insertWorkflow(layer.s.db, wf('w-b', { status: 'blocked', project: 'p' }));
      const a = await getWorkflow(layer.s.db, 'w-a');
      assert.deepEqual([a?.status, a?.phase, a?.updated_at, a?.project], ['running', 'assess', NOW, null]);
      assert.ok((await getWorkflow(layer.s.db, 'w-b'))!.seq > a!.seq);
      assert.deepEqual((await listWorkflows(layer.s.db, undefined, 2)).map((w) => w.id), ['w-b', 'w-a']);
      assert.deepEqual((await listWorkflows(layer.s.db, 'blocked', 10)).map((w) => w.id), ['w-b']);
      assert.deepEqual((await workflowsByStatus(layer.s.db, ['running', 'blocked'])).map((w) => w.id), ['w-a', 'w-b']);
      assert.deepEqual(await recentWorkflowIds(layer.s.db, 1), ['w-b']);
      const u = await updateWorkflow(layer.s.db, 'w-a', { state_json: '{"runId":"r-1"}', template: undefined }, NOW + 5);
      assert.deepEqual([u?.state_json, u?.template, u?.updated_at], ['{"runId":"r-1"}', null, NOW + 5]);
      assert.equal(await updateWorkflow(layer.s.db, 'w-none', { state_json: '{}' }, NOW), undefined);
      await setPlan(layer.s.db, 'w-b', '- [ ] x', [{ text: 'x', done: false, cycle: null, job: null }], NOW);
      await deleteWorkflow(layer.s.db, 'w-b');
      assert.equal(await getWorkflow(layer.s.db, 'w-b'), undefined);
      assert.deepEqual(await milestonesOf(layer.s.db, 'w-b'), []);
    });

    test('the plan and its record: replaced whole; a check-off only of an open milestone of that text; re-opened only when done', async () => {
      await insertWorkflow(layer.s.db, wf('w-plan'));
      await setPlan(layer.s.db, 'w-plan', '- [ ] a\n- [x] b', [{ text: 'a', done: false, cycle: null, job: null }, { text: 'b', done: true, cycle: 1, job: 'j-1' }], NOW);
      assert.equal((await getWorkflow(layer.s.db, 'w-plan'))?.plan_text, '- [ ] a\n- [x] b');
      assert.deepEqual(await milestonesOf(layer.s.db, 'w-plan'), [{ text: 'a', done: false, cycle: null, job: null }, { text: 'b', done: true, cycle: 1, job: 'j-1' }]);
      assert.equal(await checkOffMilestone(layer.s.db, 'w-plan', 0, 'not a', { cycle: 2, job: 'j-2' }, NOW), false, 'another text at that place (the plan was replaced)');
      assert.equal(await checkOffMilestone(layer.s.db, 'w-plan', 1, 'b', { cycle: 2, job: 'j-2' }, NOW), false, 'done already');
      assert.equal(await checkOffMilestone(layer.s.db, 'w-plan', 0, 'a', { cycle: 2, job: 'j-2' }, NOW), true);
      assert.equal(await reopenMilestone(layer.s.db, 'w-plan', 1, 'b'), true);
      assert.equal(await reopenMilestone(layer.s.db, 'w-plan', 1, 'b'), false, 'open already');
      assert.deepEqual(await milestonesOf(layer.s.db, 'w-plan'), [{ text: 'a', done: true, cycle: 2, job: 'j-2' }, { text: 'b', done: false, cycle: null, job: null }]);
      await setPlan(layer.s.db, 'w-plan', '- [ ] c', [{ text: 'c', done: false, cycle: null, job: null }], NOW);
      assert.deepEqual(await milestonesOf(layer.s.db, 'w-plan'), [{ text: 'c', done: false, cycle: null, job: null }]);
    });

    test('a status moves only from the states named; a phase is claimed only from the job seen as current, only while running', async () => {
      await insertWorkflow(layer.s.db, wf('w-move'));
      assert.equal(await moveWorkflow(layer.s.db, 'w-move', ['waiting_approval'], { status: 'running', approval_request: null }, NOW), undefined);
      assert.equal((await moveWorkflow(layer.s.db, 'w-move', ['running'], { status: 'waiting_approval', approval_request: 'r-1' }, NOW))?.status, 'waiting_approval');
      assert.equal(await claimPhase(layer.s.db, 'w-move', null, { current_job: 'j-x' }, NOW), undefined, 'not running');
      assert.equal((await moveWorkflow(layer.s.db, 'w-move', ['waiting_approval'], { status: 'running' }, NOW))?.status, 'running');
      assert.equal((await claimPhase(layer.s.db, 'w-move', null, { current_job: 'j-1', phase: 'review', cycle: 1 }, NOW))?.current_job, 'j-1');
      assert.equal(await claimPhase(layer.s.db, 'w-move', null, { current_job: 'j-2' }, NOW), undefined, 'j-1 is current now');
      assert.equal((await claimPhase(layer.s.db, 'w-move', 'j-1', { current_job: 'j-2' }, NOW))?.current_job, 'j-2');
      assert.equal(await moveWorkflow(layer.s.db, 'w-move', [], { status: 'blocked' }, NOW), undefined);
    });

    test('a phase is started once: two starts of one step at once (two processes) make one job and one current_job', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const id = `w-phase-${round}`;
        await insertWorkflow(layer.s.db, wf(id, { current_job: round % 2 ? null : `j-before-${round}` }));
        const expected = round % 2 ? null : `j-before-${round}`;
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'startPhase', id, expected, job: `j-${round}-${i}`, now: NOW + round })));
        const won = answers.map((a) => a.value as boolean);
        assert.equal(won.filter(Boolean).length, 1, `round ${round}: exactly one start: ${JSON.stringify(won)}`);
        const winner = `j-${round}-${won.indexOf(true)}`;
        assert.deepEqual(await jobsOf(layer.s, id), [winner], `round ${round}: the loser's job was rolled back`);
        assert.equal((await getWorkflow(layer.s.db, id))?.current_job, winner);
      }
    });

    test('a check-off is applied once: two check-offs of one milestone at once (two processes) — one applies, the record keeps its job', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const id = `w-check-${round}`;
        await insertWorkflow(layer.s.db, wf(id, { phase: 'implement', cycle: 1 }));
        await setPlan(layer.s.db, id, '- [ ] a', [{ text: 'a', done: false, cycle: null, job: null }], NOW);
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'workflows', fn: 'checkOffMilestone', args: [id, 0, 'a', { cycle: i + 1, job: `j-${round}-${i}` }, NOW + i] })));
        const applied = answers.map((a) => a.value as boolean);
        assert.equal(applied.filter(Boolean).length, 1, `round ${round}: exactly one check-off: ${JSON.stringify(applied)}`);
        const i = applied.indexOf(true);
        assert.deepEqual(await milestonesOf(layer.s.db, id), [{ text: 'a', done: true, cycle: i + 1, job: `j-${round}-${i}` }], `round ${round}: the winner's check-off, not overwritten`);
      }
    });

    test('a status moves only from the states it may: a cancel and a finish at once (two processes) — one wins, the other changes nothing', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const id = `w-end-${round}`;
        await insertWorkflow(layer.s.db, wf(id, { phase: 'implement', cycle: 2 }));
        const moves = [
          { from: ['running', 'waiting_approval', 'blocked'], fields: { status: 'cancelled', ended_at: NOW + 1 } },
          { from: ['running'], fields: { status: 'succeeded', pr_url: 'https://example.test/pr/1', ended_at: NOW + 2 } },
        ];
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'workflows', fn: 'moveWorkflow', args: [id, moves[i]!.from, moves[i]!.fields, NOW + i] })));
        const rows = answers.map((a) => a.value as { status: string } | null);
        assert.equal(rows.filter(Boolean).length, 1, `round ${round}: exactly one move: ${JSON.stringify(rows.map((r) => r?.status ?? null))}`);
        const w = await getWorkflow(layer.s.db, id);
        const won = rows.findIndex(Boolean);
        assert.equal(w?.status, won ? 'succeeded' : 'cancelled');
        assert.equal(w?.pr_url, won ? 'https://example.test/pr/1' : null, `round ${round}: nothing of the loser's change`);
      }
    });

    test('two workflows started at once (two processes) get distinct numbers', async () => {
      const before = (await listWorkflows(layer.s.db, undefined, 1))[0]?.seq ?? 0;
      for (let round = 0; round < 5; round++) {
        await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'workflows', fn: 'insertWorkflow', args: [wf(`w-seq-${round}-${i}`)] })));
      }
      const seqs = (await sql<{ seq: number }>`SELECT seq FROM workflows WHERE id LIKE 'w-seq-%'`.execute(layer.s.db)).rows.map((r) => Number(r.seq));
      assert.equal(new Set(seqs).size, 10);
      assert.ok(seqs.every((n) => n > before));
    });
  });
}
