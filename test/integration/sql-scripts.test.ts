// Script runs and their journal over the Kysely layer (src/store/sql/scripts.ts), on SQLite and
// PostgreSQL, with two processes (test/helpers/sqlRacer.ts, each its own connection) at once:
// what the store decides (docs/decisions.md "Script runs on the layer").
// - a call's seq is allocated once: two writers journaling calls of one run at once never take one
//   seq (on PostgreSQL both wait for the run's row lock — without it they would read the same
//   MAX(seq) and the primary key would refuse one: a call lost);
// - a call is answered once: of two answers at once one ends it, the other is told it changed nothing;
// - a run's status moves only from the states it may: of two pauses, two ends or two resumes at
//   once one takes effect; an ended run is not paused, a running one not resumed.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  addLog, beginCall, callsOf, endScriptRun, findScriptRun, insertScriptRun, listScriptRuns, logOf, reopenScriptRun, scriptRun, setPaused,
} from '../../src/store/sql/scripts.js';
import { all } from '../helpers/sqlRacers.js';
import { dialectSuite, rowLockWaiters } from '../helpers/sqlDialect.js';


const NOW = 1_764_000_000_000;
const call = (runId: string, i: number) => ({ run_id: runId, kind: 'agent', args_json: JSON.stringify([`task ${i}`]), label: null, phase: null, started_at: NOW + i });

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`script runs on ${dialect}`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-scripts-', racers: { n: 2, warm: [{ op: 'call', module: 'scripts', fn: 'callsOf', args: ['nobody'] }] } });
    const { racers } = layer;
    const run = (id: string, status = 'running'): Promise<void> => insertScriptRun(layer.s.db, { id, title: `title ${id}`, file: null, content: 'return 1', rules_json: '{}', now: NOW })
      .then(async () => { if (status !== 'running') await endScriptRun(layer.s.db, id, status as 'failed', 'x', NOW); });

    test('the run, its journal and its log read back; prefixes, listing without bundled runs', async () => {
      await run('r-read-1');
      await insertScriptRun(layer.s.db, { id: 'r-wf', title: 'wf', file: null, content: 'x', rules_json: JSON.stringify({ bundled: 'implement-review' }), now: NOW });
      assert.equal(await beginCall(layer.s.db, { ...call('r-read-1', 1), job_id: 'j-1' }), 1);
      assert.equal(await beginCall(layer.s.db, { ...call('r-read-1', 2), scope: '/w:abc#0', source: 'return 2', request_id: 'q-1' }), 2);
      const [c1, c2] = await callsOf(layer.s.db, 'r-read-1');
      assert.deepEqual([c1!.seq, c1!.job_id, c1!.status, c1!.scope, c1!.started_at], [1, 'j-1', 'running', '', NOW + 1]);
      assert.deepEqual([c2!.seq, c2!.request_id, c2!.scope, c2!.source], [2, 'q-1', '/w:abc#0', 'return 2']);
      await addLog(layer.s.db, 'r-read-1', 'log', 'one', NOW);
      await addLog(layer.s.db, 'r-read-1', 'phase', 'Two', NOW + 1);
      assert.deepEqual((await logOf(layer.s.db, 'r-read-1')).map((l) => [l.n, l.kind, l.text, l.at]), [[1, 'log', 'one', NOW], [2, 'phase', 'Two', NOW + 1]]);
      assert.equal((await findScriptRun(layer.s.db, 'r-read-'))?.id, 'r-read-1');
      assert.equal(await findScriptRun(layer.s.db, 'r-%'), undefined, 'a LIKE wildcard is a character');
      const listed = (await listScriptRuns(layer.s.db, { limit: 50 })).map((r) => r.id);
      assert.ok(listed.includes('r-read-1') && !listed.includes('r-wf'), 'a bundled run is not listed');
    });

    test('two writers journal calls of one run at once: every call gets its own seq, none is lost', async () => {
      await run('r-seq');
      const rounds = 15;
      for (let round = 0; round < rounds; round++) {
        await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: i ? 'addLog' : 'beginCall', args: i ? ['r-seq', 'log', `line ${round}`, NOW] : [call('r-seq', round)] })));
        await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: 'beginCall', args: [call('r-seq', 100 * i + round)] })));
      }
      if (dialect === 'postgres') {
        // The run's row held: both writers wait for it (a writer that did not would go on and collide).
        let waiting: Promise<unknown> | undefined;
        await layer.s.db.transaction().execute(async (trx) => {
          await trx.selectFrom('runs').select('id').where('id', '=', 'r-seq').forUpdate().execute();
          waiting = Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: 'beginCall', args: [call('r-seq', 1000 + i)] })));
          await rowLockWaiters(layer.s, 2, "the run's row lock");
        });
        await waiting;
      }
      const seqs = (await callsOf(layer.s.db, 'r-seq')).map((c) => c.seq);
      const n = 3 * rounds + (dialect === 'postgres' ? 2 : 0);
      assert.deepEqual(seqs, Array.from({ length: n }, (_, i) => i + 1));
      assert.deepEqual((await logOf(layer.s.db, 'r-seq')).map((l) => l.n), Array.from({ length: rounds }, (_, i) => i + 1));
    });

    test('a call is answered once: of two answers at once one ends it, and its outcome stays', async () => {
      await run('r-end');
      for (let round = 0; round < 10; round++) {
        const seq = await beginCall(layer.s.db, call('r-end', round));
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: 'endCall', args: ['r-end', seq, { status: i ? 'failed' : 'done', outcome: `racer ${i}`, at: NOW + i }] })));
        const won = answers.map((a) => a.value);
        assert.equal(won.filter((v) => v === true).length, 1, `round ${round}: exactly one answer ends the call (${JSON.stringify(won)})`);
        const row = (await callsOf(layer.s.db, 'r-end')).find((c) => c.seq === seq)!;
        const winner = won.indexOf(true);
        assert.deepEqual([row.status, row.outcome_json], [winner ? 'failed' : 'done', JSON.stringify(`racer ${winner}`)]);
      }
    });

    test('a run\'s status moves once: two pauses, two ends, two resumes at once; not from the wrong state', async () => {
      for (let round = 0; round < 5; round++) {
        const id = `r-st${round}`;
        await run(id);
        const paused = await all(racers, { op: 'call', module: 'scripts', fn: 'setPaused', args: [id, true, NOW] });
        assert.deepEqual(paused.map((a) => a.value).sort(), [false, true], 'one pause changes it');
        assert.equal((await scriptRun(layer.s.db, id))?.paused, 1);
        const ended = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: 'endScriptRun', args: [id, i ? 'cancelled' : 'failed', `by ${i}`, NOW] })));
        const winner = ended.findIndex((a) => a.value === true);
        assert.deepEqual(ended.map((a) => a.value).sort(), [false, true], 'one end');
        assert.deepEqual([(await scriptRun(layer.s.db, id))?.status, (await scriptRun(layer.s.db, id))?.note], [winner ? 'cancelled' : 'failed', `by ${winner}`]);
        assert.equal(await setPaused(layer.s.db, id, false, NOW), false, 'an ended run is not unpaused');
        const resumed = await all(racers, { op: 'call', module: 'scripts', fn: 'reopenScriptRun', args: [id, 'return 2', '{"replaying":true}', NOW] });
        assert.deepEqual(resumed.map((a) => a.value).sort(), [false, true], 'one resume');
        const r = await scriptRun(layer.s.db, id);
        assert.deepEqual([r?.status, r?.paused, r?.note, r?.content, r?.ended_at], ['running', 0, null, 'return 2', null]);
        assert.equal(await reopenScriptRun(layer.s.db, id, 'x', '{}', NOW), false, 'a running run is not resumed');
      }
    });
  });
}
