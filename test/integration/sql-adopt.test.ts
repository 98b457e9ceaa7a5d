// Who drives a run, workflow or debate, decided by the database (src/store/sql/claims.ts `adopt`,
// `drives`, `takeOver`; src/store/sql/runs.ts `reopenRun`), on both databases, with real
// concurrent connections (racer processes, test/helpers/sqlRacers.ts): of four hubs that try at
// once to adopt each of a dead hub's and unowned rows, exactly one gets each; a live hub's row is
// adopted by none; two resumes of one ended run at once reopen it once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import type { Schema } from '../../src/store/sql/schema.js';
import { dialectSuite, type Dialect } from '../helpers/sqlDialect.js';
import { drives, takeOver, type OwnedKind } from '../../src/store/sql/claims.js';

const RACERS = 4;

async function addOwned(db: Kysely<Schema>, table: OwnedKind, id: string, hub: string | null, status = 'running'): Promise<void> {
  if (table === 'runs') {
    await sql`INSERT INTO runs (id, title, content, format, rules_json, status, created_at, updated_at, kind, hub_id)
      VALUES (${id}, ${id}, 'x', 'toml', '{}', ${status}, 1, 1, 'dispatch', ${hub})`.execute(db);
  } else if (table === 'debates') {
    await sql`INSERT INTO debates (id, title, task, status, cwd, sides_json, max_rounds, loops, post_action_side, verify, created_at, updated_at, hub_id)
      VALUES (${id}, ${id}, 't', ${status}, '/tmp', '[]', 3, 1, 0, 0, 1, 1, ${hub})`.execute(db);
  } else {
    const seq = Number((await sql<{ n: number }>`SELECT COUNT(*) AS n FROM workflows`.execute(db)).rows[0]!.n) + 1;
    await sql`INSERT INTO workflows (id, seq, title, task, status, cycle, phase, cwd, implementer_json, reviewer_json, max_cycles, approve_plan, plan_approved,
      checks_json, state_json, created_at, updated_at, hub_id)
      VALUES (${id}, ${seq}, ${id}, 't', ${status}, 0, 'assess', '/tmp', '{}', '{}', 3, 0, 0, '[]', '{}', 1, 1, ${hub})`.execute(db);
  }
}

const hubRow = (id: string, o: { dead?: boolean; stopped?: boolean }) => ({
  id, host: 'x', pid: 1, url: null, state_dir: '/s', version: 'v', started_at: 1, heartbeat_at: 1, stopped_at: o.stopped ? 3 : null, dead_at: o.dead ? 2 : null,
});

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe(`adoption of runs, workflows and debates (${dialect})`, () => {
    const layer = dialectSuite(dialect, { prefix: 'overseer-sql-adopt-', racers: { n: RACERS, warm: [{ op: 'call', module: 'claims', fn: 'drives', args: ['runs', 'none', 'h-0'] }, { op: 'call', module: 'runs', fn: 'getRun', args: ['none'] }] } });

    test('four hubs adopt at once: each unowned or dead or stopped hub\'s row goes to exactly one of them, a live hub\'s to none', async () => {
      const db = layer.s.db;
      await db.insertInto('hubs').values([hubRow('h-dead', { dead: true }), hubRow('h-gone', { stopped: true }), hubRow('h-live', {})]).execute();
      const rows: { table: OwnedKind; id: string; from: string | null }[] = [];
      for (const table of ['runs', 'workflows', 'debates'] as OwnedKind[]) {
        for (let i = 0; i < 8; i++) {
          const from = [null, 'h-dead', 'h-gone', 'h-live'][i % 4]!;
          const id = `${table[0]}-${i}`;
          await addOwned(db, table, id, from);
          rows.push({ table, id, from });
        }
      }
      for (const r of rows) {
        const won = await Promise.all(layer.racers.map((x, i) => x.send({ op: 'call', module: 'claims', fn: 'adopt', args: [r.table, r.id, `h-${i}`] })));
        const winners = won.map((a, i) => (a.value ? `h-${i}` : null)).filter((x) => x !== null);
        const owner = (await db.selectFrom(r.table).select('hub_id').where('id', '=', r.id).executeTakeFirstOrThrow()).hub_id;
        if (r.from === 'h-live') {
          assert.deepEqual(winners, [], `${r.id} of a live hub is adopted by nobody`);
          assert.equal(owner, 'h-live');
        } else {
          assert.equal(winners.length, 1, `${r.id} (from ${r.from}) adopted by exactly one: ${JSON.stringify(winners)}`);
          assert.equal(owner, winners[0]);
          assert.equal(await drives(db, r.table, r.id, winners[0]!), true);
          assert.equal(await drives(db, r.table, r.id, 'h-dead'), false);
        }
      }
      // A lead's restart takes it whoever drove it; drives says so.
      await takeOver(db, 'runs', 'r-3', 'h-lead');
      assert.equal(await drives(db, 'runs', 'r-3', 'h-lead'), true);
      assert.equal(await drives(db, 'runs', 'r-3', 'h-live'), false);
    });

    test('four resumes of one ended run at once: it is reopened once, driven by that hub', async () => {
      const db = layer.s.db;
      for (let round = 0; round < 6; round++) {
        const id = `r-ended-${round}`;
        await addOwned(db, 'runs', id, 'h-dead', 'failed');
        const won = await Promise.all(layer.racers.map((x, i) => x.send({ op: 'call', module: 'runs', fn: 'reopenRun', args: [id, [], null, 10 + round, `h-${i}`] })));
        const winners = won.map((a, i) => (a.value ? `h-${i}` : null)).filter((x) => x !== null);
        assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(winners)}`);
        assert.deepEqual(await db.selectFrom('runs').select(['status', 'hub_id']).where('id', '=', id).executeTakeFirstOrThrow(), { status: 'running', hub_id: winners[0] });
      }
    });
  });
}
