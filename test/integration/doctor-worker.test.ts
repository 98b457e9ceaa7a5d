// `overseer doctor --worker` (the built CLI, its own process): a worker host's checks. Against a
// fresh PostgreSQL database without Overseer's schema the database line fails saying a worker never
// creates it (and the database is left without one); against a migrated database it passes; a URL
// that does not answer fails with a clear line and no password. The clones directory: each clone's
// remote is asked (`git ls-remote`), a remote that answers passes, a gone one fails; the agent CLIs
// are listed with their versions; confinement is the hub's check.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildCli, overseer } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/postgres.js';
import { openSql } from '../../src/store/sql/open.js';
import type { Check } from '../../src/doctor/types.js';

before(buildCli);

const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

async function doctor(home: string, url: string): Promise<{ code: number | null; text: string; checks: Map<string, Check> }> {
  const env = { OVERSEER_HOME: home, OVERSEER_DATABASE_URL: url, OVERSEER_CONFINE: 'auto' };
  const text = await overseer(home, ['doctor', '--worker'], env);
  const json = await overseer(home, ['doctor', '--worker', '--json'], env);
  assert.equal(json.code, text.code, json.stderr);
  const report = JSON.parse(json.stdout) as { ok: boolean; checks: Check[] };
  return { code: text.code, text: text.stdout, checks: new Map(report.checks.map((c) => [c.name, c])) };
}

test('doctor --worker: the database and its schema, the clones and their remotes, the CLIs, confinement', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'overseer-doctor-worker-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const home = join(dir, 'state');
  mkdirSync(home);
  const d = await freshDatabase();
  t.after(() => d.drop());

  // No schema yet: the database line fails and says a worker never creates it; nothing is created.
  const empty = await doctor(home, d.url);
  const db0 = empty.checks.get('database')!;
  assert.equal(db0.status, 'fail', JSON.stringify(db0));
  assert.match(db0.detail, /no Overseer schema in it: a worker never creates it/);
  assert.match(db0.fix!, /start a hub \(overseer mcp or overseer serve\) once with this OVERSEER_DATABASE_URL/);
  assert.match(empty.text, /\n✘ database +postgres:\/\/.* no Overseer schema in it: a worker never creates it — fix: start a hub/);
  assert.match(empty.text, /Not ready: .*database.* must be fixed before this machine can serve as a worker/);
  assert.equal(empty.code, 1);
  const c = new pg.Client({ connectionString: d.url });
  await c.connect();
  const tables = (await c.query(`SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'`)).rows[0].n as number;
  await c.end();
  assert.equal(tables, 0, 'the worker\'s doctor created nothing');
  // No clones directory yet: it can be made.
  assert.equal(empty.checks.get('clones')!.status, 'ok');
  assert.match(empty.checks.get('clones')!.detail, /repos: none yet \(created at the first job/);
  const clis = empty.checks.get('agent CLIs')!;
  assert.equal(clis.status, 'ok', JSON.stringify(clis));
  assert.match(clis.detail, /claude \S/);
  assert.ok(empty.checks.has('confinement'));

  // Migrated (as a hub leaves it): the database line passes. Two clones: one whose remote answers, one whose remote is gone.
  const layer = await openSql({ home: join(dir, 'hub-state'), databaseUrl: d.url });
  await layer.close();
  const remote = join(dir, 'remote.git');
  mkdirSync(remote);
  git(remote, 'init', '-q', '--bare');
  const repos = join(home, 'repos');
  mkdirSync(repos);
  git(repos, 'clone', '-q', remote, 'good');
  git(repos, 'clone', '-q', remote, 'gone');
  git(join(repos, 'gone'), 'remote', 'set-url', 'origin', join(dir, 'nowhere.git'));
  const ready = await doctor(home, d.url);
  const db1 = ready.checks.get('database')!;
  assert.equal(db1.status, 'ok', JSON.stringify(db1));
  assert.match(db1.detail, /schema current \(\d+ migrations\)/);
  assert.match(ready.checks.get('clones')!.detail, /repos: writable, 2 clones/);
  assert.equal(ready.checks.get('clone good')!.status, 'ok', JSON.stringify(ready.checks.get('clone good')));
  assert.match(ready.checks.get('clone good')!.detail, /remote\.git answers/);
  const gone = ready.checks.get('clone gone')!;
  assert.equal(gone.status, 'fail');
  assert.match(gone.detail, /nowhere\.git does not answer: `git ls-remote origin` exited with code \d+/);
  assert.match(gone.fix!, /reaches the remote and has the credentials/);
  assert.match(ready.text, /\n✔ database +postgres:\/\/.*schema current/);
});

test('doctor --worker: a database URL that does not answer fails with a clear line and no password', { timeout: 60_000 }, async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'overseer-doctor-worker-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  const url = 'postgres://crew:s3cret-pw@127.0.0.1:1/crewdb';
  const r = await doctor(home, url);
  const db = r.checks.get('database')!;
  assert.equal(db.status, 'fail');
  assert.match(db.detail, /^cannot open the database postgres:\/\/crew:\*\*\*@127\.0\.0\.1:1\/crewdb .*ECONNREFUSED/);
  assert.match(db.fix!, /check the host, port and credentials in OVERSEER_DATABASE_URL/);
  assert.equal(r.code, 1);
  assert.doesNotMatch(r.text, /s3cret/);
  assert.match(r.text, /\n✘ database +cannot open the database postgres:\/\/crew:\*\*\*@127\.0\.0\.1:1\/crewdb .* — fix: check the host, port and credentials/);
});
