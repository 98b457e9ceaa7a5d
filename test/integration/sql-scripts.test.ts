// Script runs and their journal over the Kysely layer (src/store/sql/scripts.ts), on SQLite and
// PostgreSQL, with two processes (test/helpers/sqlRacer.ts, each its own connection) at once:
// what the store decides (docs/decisions.md "Script runs on the layer").
// - a call's seq is allocated once: two writers journaling calls of one run at once never take one
//   seq (on PostgreSQL both wait for the run's row lock — without it they would read the same
//   MAX(seq) and the primary key would refuse one: a call lost);
// - a call is answered once: of two answers at once one ends it, the other is told it changed nothing;
// - a run's status moves only from the states it may: of two pauses, two ends or two resumes at
//   once one takes effect; an ended run is not paused, a running one not resumed.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import {
  addLog, beginCall, callsOf, endCall, endScriptRun, findScriptRun, insertScriptRun, listScriptRuns, logOf, reopenScriptRun, scriptRun, setPaused,
} from '../../src/store/sql/scripts.js';
import { freshDatabase } from '../helpers/postgres.js';
import { all, startRacer, type Racer } from '../helpers/sqlRacers.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const NOW = 1_764_000_000_000;
const call = (runId: string, i: number) => ({ run_id: runId, kind: 'agent', args_json: JSON.stringify([`task ${i}`]), label: null, phase: null, started_at: NOW + i });

/** Resolves when `n` other sessions wait for a row lock taken with FOR UPDATE (PostgreSQL; deadline 10 s). */
async function rowLockWaiters(s: SqlDb, n: number): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const r = await sql<{ c: number }>`SELECT count(*)::int AS c FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%for update%'`.execute(s.db);
    if (r.rows[0]!.c >= n) return;
    if (Date.now() > until) throw new Error(`${n} sessions did not wait for the run's row lock within 10 s (${r.rows[0]!.c} do)`);
    await new Promise((res) => setImmediate(res));
  }
}

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`script runs on ${dialect}`, () => {
    const config = { home: '', databaseUrl: undefined as string | undefined };
    let drop = async (): Promise<void> => undefined;
    let s: SqlDb;
    const racers: Racer[] = [];
    const run = (id: string, status = 'running'): Promise<void> => insertScriptRun(s.db, { id, title: `title ${id}`, file: null, content: 'return 1', rules_json: '{}', now: NOW })
      .then(async () => { if (status !== 'running') await endScriptRun(s.db, id, status as 'failed', 'x', NOW); });
    before(async () => {
      config.home = mkdtempSync(join(tmpdir(), 'overseer-sql-scripts-'));
      dirs.push(config.home);
      if (dialect === 'postgres') {
        const fresh = await freshDatabase();
        config.databaseUrl = fresh.url;
        drop = fresh.drop;
      }
      s = await openSql(config);
      racers.push(await startRacer(), await startRacer());
      await all(racers, { op: 'open', home: config.home, url: config.databaseUrl });
      await all(racers, { op: 'call', module: 'scripts', fn: 'callsOf', args: ['nobody'] });
    });
    after(async () => {
      await all(racers, { op: 'close' }).catch(() => racers.forEach((r) => r.kill()));
      await s?.close();
      await drop();
    });

    test('the run, its journal and its log read back; prefixes, listing without bundled runs', async () => {
      await run('r-read-1');
      await insertScriptRun(s.db, { id: 'r-wf', title: 'wf', file: null, content: 'x', rules_json: JSON.stringify({ bundled: 'implement-review' }), now: NOW });
      assert.equal(await beginCall(s.db, { ...call('r-read-1', 1), job_id: 'j-1' }), 1);
      assert.equal(await beginCall(s.db, { ...call('r-read-1', 2), scope: '/w:abc#0', source: 'return 2', request_id: 'q-1' }), 2);
      const [c1, c2] = await callsOf(s.db, 'r-read-1');
      assert.deepEqual([c1!.seq, c1!.job_id, c1!.status, c1!.scope, c1!.started_at], [1, 'j-1', 'running', '', NOW + 1]);
      assert.deepEqual([c2!.seq, c2!.request_id, c2!.scope, c2!.source], [2, 'q-1', '/w:abc#0', 'return 2']);
      await addLog(s.db, 'r-read-1', 'log', 'one', NOW);
      await addLog(s.db, 'r-read-1', 'phase', 'Two', NOW + 1);
      assert.deepEqual((await logOf(s.db, 'r-read-1')).map((l) => [l.n, l.kind, l.text, l.at]), [[1, 'log', 'one', NOW], [2, 'phase', 'Two', NOW + 1]]);
      assert.equal((await findScriptRun(s.db, 'r-read-'))?.id, 'r-read-1');
      assert.equal(await findScriptRun(s.db, 'r-%'), undefined, 'a LIKE wildcard is a character');
      const listed = (await listScriptRuns(s.db, { limit: 50 })).map((r) => r.id);
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
        await s.db.transaction().execute(async (trx) => {
          await trx.selectFrom('runs').select('id').where('id', '=', 'r-seq').forUpdate().execute();
          waiting = Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: 'beginCall', args: [call('r-seq', 1000 + i)] })));
          await rowLockWaiters(s, 2);
        });
        await waiting;
      }
      const seqs = (await callsOf(s.db, 'r-seq')).map((c) => c.seq);
      const n = 3 * rounds + (dialect === 'postgres' ? 2 : 0);
      assert.deepEqual(seqs, Array.from({ length: n }, (_, i) => i + 1));
      assert.deepEqual((await logOf(s.db, 'r-seq')).map((l) => l.n), Array.from({ length: rounds }, (_, i) => i + 1));
    });

    test('a call is answered once: of two answers at once one ends it, and its outcome stays', async () => {
      await run('r-end');
      for (let round = 0; round < 10; round++) {
        const seq = await beginCall(s.db, call('r-end', round));
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: 'endCall', args: ['r-end', seq, { status: i ? 'failed' : 'done', outcome: `racer ${i}`, at: NOW + i }] })));
        const won = answers.map((a) => a.value);
        assert.equal(won.filter((v) => v === true).length, 1, `round ${round}: exactly one answer ends the call (${JSON.stringify(won)})`);
        const row = (await callsOf(s.db, 'r-end')).find((c) => c.seq === seq)!;
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
        assert.equal((await scriptRun(s.db, id))?.paused, 1);
        const ended = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'scripts', fn: 'endScriptRun', args: [id, i ? 'cancelled' : 'failed', `by ${i}`, NOW] })));
        const winner = ended.findIndex((a) => a.value === true);
        assert.deepEqual(ended.map((a) => a.value).sort(), [false, true], 'one end');
        assert.deepEqual([(await scriptRun(s.db, id))?.status, (await scriptRun(s.db, id))?.note], [winner ? 'cancelled' : 'failed', `by ${winner}`]);
        assert.equal(await setPaused(s.db, id, false, NOW), false, 'an ended run is not unpaused');
        const resumed = await all(racers, { op: 'call', module: 'scripts', fn: 'reopenScriptRun', args: [id, 'return 2', '{"replaying":true}', NOW] });
        assert.deepEqual(resumed.map((a) => a.value).sort(), [false, true], 'one resume');
        const r = await scriptRun(s.db, id);
        assert.deepEqual([r?.status, r?.paused, r?.note, r?.content, r?.ended_at], ['running', 0, null, 'return 2', null]);
        assert.equal(await reopenScriptRun(s.db, id, 'x', '{}', NOW), false, 'a running run is not resumed');
      }
    });
  });
}
