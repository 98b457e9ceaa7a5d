// What steering another hub's job leaves to the database (docs/decisions.md "Steering across hubs"),
// on both databases: a command the owner finishes while its poster gives up on it is decided once
// (the owner's 'done' or the poster's withdrawal, never both), with the two on connections of their
// own; and whose a lead's locks are at a hub's start — a predecessor's lead (same state directory,
// same host) is this lead, its locks stay held; the lead of a hub that is gone loses its locks and
// waits; a live hub's lead keeps them (PostgreSQL; on SQLite a start takes every other hub for gone).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openSql } from '../../src/store/sql/open.js';
import { finishCommand, getCommand, postCommand } from '../../src/store/sql/commands.js';
import { LocalNotifier, type LayerEvents } from '../../src/store/sql/notify.js';
import { leadOf } from '../../src/domain/lead.js';
import { openDialect, type Dialect } from '../helpers/sqlDialect.js';
import { startTestHub } from '../helpers/hub.js';
import { reopen } from '../helpers/state.js';
import { freshDatabase } from '../helpers/postgres.js';
import { eventually } from '../helpers/wait.js';
import { deadHubReconciler } from '../../src/services/hubReconcile.js';
import { NO_REQUEUE } from '../../src/services/workerLost.js';

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe(`steering on ${dialect}`, () => {
    test('a command finished by its owner while its poster withdraws it is decided once', async (t) => {
      const { s, home, url } = await openDialect(dialect, t);
      // A second connection (pool) to the same database: the owner's and the poster's statements race.
      const other = await openSql({ home, databaseUrl: url });
      t.after(() => other.close());
      await sql`INSERT INTO jobs (id, seq, depth, title, prompt, provider, cwd, status, created_at, updated_at, hub_id)
        VALUES ('j-1', 1, 0, 'j-1', 'p', 'claude', '/tmp', 'running', 1, 1, 'h-owner')`.execute(s.db);
      const notifier = new LocalNotifier<LayerEvents>('h-poster');
      const N = 30;
      const ids: number[] = [];
      for (let i = 0; i < N; i++) ids.push(await s.db.transaction().execute((trx) => postCommand(trx, notifier, { jobId: 'j-1', kind: 'freeze', by: 'lead', now: i })));
      let owner = 0;
      let poster = 0;
      for (const id of ids) {
        const [a, b] = await Promise.all([finishCommand(s.db, id, 'done', 100), finishCommand(other.db, id, 'expired: the caller stopped waiting', 101)]);
        assert.equal(Number(a) + Number(b), 1, `command ${id}: exactly one of the owner and the poster decides it`);
        const row = (await getCommand(s.db, id))!;
        assert.equal(row.outcome, a ? 'done' : 'expired: the caller stopped waiting');
        if (a) owner++;
        else poster++;
      }
      t.diagnostic(`of ${N} races the owner won ${owner}, the poster ${poster}`);
    });

    test('at a hub\'s start: its predecessor\'s lead locks stay its lead\'s, a gone hub\'s lead loses its locks and waits, a live hub\'s lead keeps them', async (t) => {
      // PostgreSQL: a database of its own for the two hubs of one state directory (restarted).
      const d = dialect === 'postgres' ? await freshDatabase() : undefined;
      if (d) t.after(() => d.drop());
      const config = { databaseUrl: d?.url }; // undefined: SQLite, whatever the run's database
      const h1 = await startTestHub({ config });
      let h2: Awaited<ReturnType<typeof startTestHub>> | undefined;
      t.after(async () => {
        await h2?.stop();
        await h1.stop().catch(() => undefined);
      });
      await h1.call('lock_files', { files: ['keep.txt'], reason: 'lead keeps' });
      const first = h1.hub.hubId;
      await h1.hub.stop();
      // Two other hubs' leads: one gone (found dead), one serving; each holds a file and waits for keep.txt.
      const db = await reopen(h1.hub);
      const now = Date.now();
      for (const [hub, dead] of [['h-gone', now], ['h-live', null]] as const) {
        await db.db.insertInto('hubs').values({ id: hub, host: 'elsewhere', pid: 1, url: null, state_dir: '/x', version: 'v', started_at: now, heartbeat_at: now, stopped_at: null, dead_at: dead }).execute();
        const path = join(h1.project, `${hub}.txt`);
        await sql`INSERT INTO locks (repo, rel_path, path, holder, reason, ttl_s, acquired_at, expires_at) VALUES ('', ${path}, ${path}, ${`lead@${hub}`}, 'theirs', 600, ${now}, ${now + 600_000})`.execute(db.db);
        await sql`INSERT INTO lock_waits (holder, paths_json, reason, ttl_s, created_at) VALUES (${`lead@${hub}`}, ${JSON.stringify([join(h1.project, 'keep.txt')])}, NULL, 600, ${now})`.execute(db.db);
      }
      await db.close();

      h2 = await startTestHub({ dir: h1.dir, fake: h1.fake, config });
      const many = dialect === 'postgres';
      const holders = (await h2.hub.ctx.sql.db.selectFrom('locks').select(['holder', 'reason']).orderBy('holder').execute()).map((r) => [r.holder, r.reason]);
      const mine = leadOf(h2.hub.hubId, many);
      // SQLite: one hub per database, so a start takes every other hub for gone (src/services/reconcile.ts), their leads too.
      const expected = many ? [['lead@h-live', 'theirs'], [mine, 'lead keeps']].sort((a, b) => a[0]!.localeCompare(b[0]!)) : [[mine, 'lead keeps']];
      assert.deepEqual(holders, expected, `held after the start (hub ${first} restarted as ${h2.hub.hubId})`);
      const waits = (await h2.hub.ctx.sql.db.selectFrom('lock_waits').select('holder').execute()).map((w) => w.holder);
      // SQLite: one hub per database, every wait died with the old hub; PostgreSQL: the live hub's lead still waits.
      assert.deepEqual(waits, many ? ['lead@h-live'] : []);
      // list_locks shows this hub's lead as "lead", another hub's with its hub.
      const listed = (await h2.call('list_locks', {})).locks as { path: string; holder: string }[];
      assert.deepEqual(listed.map((l) => l.holder).sort(), many ? ['lead', 'lead@h-live'] : ['lead']);
    });
  });
}

describe('two hubs on one PostgreSQL database: each lead holds its own', () => {
  test('lead 2 is refused lead 1\'s file and cannot release it; list_locks names the other lead; the dead hub\'s reconcile releases its lead\'s locks and waits', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const one = await startTestHub({ config: { databaseUrl: d.url } });
    t.after(() => one.stop());
    const two = await startTestHub({ config: { databaseUrl: d.url }, fake: one.fake, project: one.project });
    t.after(() => two.stop());
    await one.call('lock_files', { files: ['shared.txt'], reason: 'lead 1 edits' });
    const refused = await two.callRaw('lock_files', { files: ['shared.txt'], timeout_s: 0 });
    assert.equal(refused.isError, true, refused.text);
    assert.match(refused.text, new RegExp(`held by the lead on hub ${one.hub.hubId}`));
    await two.call('release_files', {});
    const held = await two.call('list_locks', {});
    assert.deepEqual(held.locks.map((l: { holder: string }) => l.holder), [`lead@${one.hub.hubId}`], 'lead 2\'s release left lead 1\'s lock; hub 2 names it with its hub');
    assert.deepEqual((await one.call('list_locks', {})).locks.map((l: { holder: string }) => l.holder), ['lead'], 'hub 1 calls its own lead "lead"');
    // Lead 1 also waits for a file lead 2 holds (its lock_files blocks), then hub 1 is found dead.
    await two.call('lock_files', { files: ['other.txt'] });
    const waiting = one.callRaw('lock_files', { files: ['other.txt'], timeout_s: 120 });
    const db = two.hub.ctx.sql.db;
    await eventually('lead 1 waits for other.txt', async () => ((await db.selectFrom('lock_waits').select('holder').execute()).some((w) => w.holder === `lead@${one.hub.hubId}`) ? true : undefined), 10_000);
    const row = await db.selectFrom('hubs').selectAll().where('id', '=', one.hub.hubId).executeTakeFirstOrThrow();
    const dead = deadHubReconciler(two.hub.ctx, two.hub.hubId, async () => undefined, NO_REQUEUE.requeue);
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('hubs').set({ dead_at: Date.now() }).where('id', '=', row.id).execute();
      await dead.reconcile(trx, row);
    });
    dead.onReconciled(row);
    assert.deepEqual((await db.selectFrom('locks').select('holder').execute()).map((l) => l.holder), [`lead@${two.hub.hubId}`], 'the dead hub\'s lead holds nothing');
    assert.deepEqual((await db.selectFrom('lock_waits').select('holder').execute()).map((w) => w.holder), [], 'nor waits');
    await waiting.catch(() => undefined);
  });
});
