// Where agents run, as the readers show it (issue 30 step 5), on both databases: `status --json`
// gives each job its host (its worker, else its hub's host, else this machine); `overseer hosts`
// counts a worker's running jobs of its current lease epoch; the floor read from the database has
// a lost worker (its heartbeat made old here) in NEEDS YOU and drops it once the row is live again,
// and a worker registered again while a job of its old epoch still shows running is fenced; and
// `overseer status`, a person's view, prints the lost worker's line, then no longer.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { sql } from 'kysely';
import { buildCli, overseer } from '../helpers/cli.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect, type Dialect } from '../helpers/sqlDialect.js';
import { insertJob } from '../../src/store/sql/jobs.js';
import { registerWorker, type WorkerIdentity } from '../../src/store/sql/workers.js';
import { statusJson } from '../../src/cli/status.js';
import { readFloor } from '../../src/floor/source.js';
import type { SqlDb } from '../../src/store/sql/open.js';
import type { HostJson } from '../../src/cli/hosts.js';

before(buildCli);

const w = (name: string, o: Partial<WorkerIdentity> = {}): WorkerIdentity => ({
  name, host: `${name}.lan`, pid: 4242, capacity: 4, labels: [], clis: { claude: '2.0.0 (Claude Code)' }, version: 'test', leaseMs: 30_000, ...o,
});

const floorOf = (s: SqlDb) => readFloor(s.db, { now: Date.now(), hub: null, cap: 8, source: 'database' });
const workerNeeds = async (s: SqlDb) => (await floorOf(s)).needs_you.filter((n) => n.kind.startsWith('worker_')).map((n) => `${n.kind} ${n.key}`);

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  test(`${dialect}: a host on every job, running per worker, and lost or fenced workers on the floor`, { timeout: 120_000 }, async (t) => {
    const { s, home, url } = await openDialect(dialect, t);
    const env = { OVERSEER_HOME: home, ...(url ? { OVERSEER_DATABASE_URL: url } : {}) };
    const now = Date.now();
    await sql`INSERT INTO hubs (id, host, pid, url, state_dir, version, started_at, heartbeat_at, stopped_at, dead_at) VALUES ('h-far', 'far-hub', 1, NULL, '/x', 'test', ${now}, ${now}, ${now}, NULL)`.execute(s.db);
    await insertJob(s.db, newJob('j-onworker', { status: 'running' }), now);
    await insertJob(s.db, newJob('j-onhub', { status: 'succeeded' }), now);
    await insertJob(s.db, newJob('j-here', { status: 'queued' }), now);
    await sql`UPDATE jobs SET worker = 'box-7', worker_epoch = 1, hub_id = 'h-far' WHERE id = 'j-onworker'`.execute(s.db);
    await sql`UPDATE jobs SET hub_id = 'h-far' WHERE id = 'j-onhub'`.execute(s.db);
    assert.deepEqual(await registerWorker(s.db, s.dialect, w('box-7')), { ok: true, epoch: 1 });
    assert.deepEqual(await registerWorker(s.db, s.dialect, w('box-9')), { ok: true, epoch: 1 });

    // status --json: the function and the built CLI agree.
    const hosts = (rows: Record<string, unknown>[]): Record<string, unknown> => Object.fromEntries(rows.map((r) => [r.job_id, r.host]));
    const expected = { 'j-onworker': 'box-7', 'j-onhub': 'far-hub', 'j-here': hostname() };
    assert.deepEqual(hosts(await statusJson({ sql: s }, {})), expected);
    const cli = await overseer(home, ['status', '--json'], env);
    assert.equal(cli.code, 0, cli.stderr);
    assert.deepEqual(hosts(JSON.parse(cli.stdout) as Record<string, unknown>[]), expected);

    // overseer hosts: running = the worker's jobs holding a slot under its current epoch.
    const listed = async (): Promise<Record<string, number>> => {
      const r = await overseer(home, ['hosts', '--json'], env);
      assert.equal(r.code, 0, r.stderr);
      return Object.fromEntries((JSON.parse(r.stdout) as HostJson[]).map((h) => [h.name, h.running]));
    };
    assert.deepEqual(await listed(), { 'box-7': 1, 'box-9': 0 });

    // The floor: every row has its host; with workers, rows show it.
    const f = await floorOf(s);
    assert.equal(f.show_host, true);
    assert.deepEqual(Object.fromEntries([...f.running, ...f.queued, ...f.done].map((j) => [j.job_id, j.host])), expected);
    assert.deepEqual(await workerNeeds(s), []);

    // box-9's heartbeat 40 s old (lease 30 s): lost, on the floor and in `overseer status`.
    await sql`UPDATE workers SET heartbeat_at = heartbeat_at - 40000 WHERE name = 'box-9'`.execute(s.db);
    assert.deepEqual(await workerNeeds(s), ['worker_lost worker:box-9']);
    const st = await overseer(home, ['status'], env);
    assert.equal(st.code, 0, st.stderr);
    assert.match(st.stdout, /\n! worker box-9 on box-9\.lan lost: no heartbeat since \d\d:\d\d:\d\d UTC \(its lease is 30s\) — .* — overseer hosts\n/);
    // Live again: the warning goes.
    await sql`UPDATE workers SET heartbeat_at = heartbeat_at + 40000 WHERE name = 'box-9'`.execute(s.db);
    assert.deepEqual(await workerNeeds(s), []);
    assert.doesNotMatch((await overseer(home, ['status'], env)).stdout, /worker box-9/);

    // box-7 cut off past its lease and registered again (epoch 2) while j-onworker (epoch 1) still shows running: fenced.
    await sql`UPDATE workers SET heartbeat_at = heartbeat_at - 40000 WHERE name = 'box-7'`.execute(s.db);
    assert.deepEqual(await registerWorker(s.db, s.dialect, w('box-7')), { ok: true, epoch: 2 });
    assert.deepEqual(await workerNeeds(s), ['worker_fenced fenced:box-7']);
    assert.deepEqual(await listed(), { 'box-7': 0, 'box-9': 0 }, 'the old epoch\'s job is not the new epoch\'s');
    // Its old job settled (interrupted, as a hub does): the warning goes.
    await sql`UPDATE jobs SET status = 'interrupted', ended_at = ${Date.now()} WHERE id = 'j-onworker'`.execute(s.db);
    assert.deepEqual(await workerNeeds(s), []);
  });
}
