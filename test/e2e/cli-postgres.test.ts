// End to end (the built CLI as its own process) against a PostgreSQL database given by
// OVERSEER_DATABASE_URL, with no hub: the readers (status, status --json/--floor/--watch, logs,
// events, search, overlaps, usage, templates, projects, kb, doctor) print the rows a database
// holds (written here through the layer's own insert functions, as a hub writes them); `status
// --watch` sees a change made after it started; a database without Overseer's schema, or with an
// older one, fails with what to do and is left as it was; no state.db appears in the state directory.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Kysely } from 'kysely';
import { MAIN, buildCli, cliEnv, overseer } from '../helpers/cli.js';
import { freshDatabase } from '../helpers/postgres.js';
import { newJob } from '../helpers/budgetDb.js';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/sql/migrate.js';
import { addEvent, insertAttempt, insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { raiseWarning } from '../../src/store/sql/warnings.js';
import { addOverlaps } from '../../src/store/sql/overlaps.js';
import { transcriptIndex } from '../../src/search/sqlIndex.js';

before(buildCli);
const root = mkdtempSync(join(tmpdir(), 'overseer-cli-pg-'));
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A state directory of its own (where the CLI would create state.db on SQLite). */
function homeDir(): string {
  const home = join(root, `home-${++n}`);
  mkdirSync(home, { recursive: true });
  return home;
}

const NOW = Date.now();

/** A migrated database (as a hub leaves it) with a crew's rows in it. */
async function crew(t: TestContext): Promise<{ url: string; home: string; s: SqlDb }> {
  const d = await freshDatabase();
  t.after(() => d.drop());
  const home = homeDir();
  const s = await openSql({ home, databaseUrl: d.url });
  t.after(() => s.close());
  const q = s.db;
  await insertJob(q, newJob('j-pg1a', { status: 'running', title: 'build the parser', labels_json: '["tests"]' }), NOW - 60_000);
  await insertJob(q, newJob('j-pg2b', { status: 'succeeded', title: 'write the docs' }), NOW - 50_000);
  await updateJob(q, 'j-pg2b', { ended_at: NOW - 10_000, result: 'docs written', cost_usd: 0.5, turns: 3 }, NOW - 10_000);
  const transcript = join(home, 'attempt-1.jsonl');
  writeFileSync(transcript, `${JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'parsing the grammar now' }] } })}\n`);
  await insertAttempt(q, { job_id: 'j-pg1a', n: 1, kind: 'initial', status: 'running', started_at: NOW - 59_000, ended_at: null, session_id: 'sess-j-pg1a', pid: null, exit_code: null, signal: null, turns: 1, cost_usd: 0, failure_class: null, error: null, diagnosis: null, transcript });
  await addEvent(q, 'j-pg1a', NOW - 59_000, 'started', { attempt: 1 });
  await raiseWarning(q, 'j-pg1a', 'stalled', 'no output for 10 min', NOW - 1000);
  await addOverlaps(q, { repoRoot: '/repo', a: 'j-pg1a', b: 'j-pg2b', files: ['src/lexer.ts'], locksConflict: false, now: NOW - 500 });
  await transcriptIndex('postgres').insert(q, [{ jobId: 'j-pg1a', attempt: 1, line: 1, at: NOW - 58_000, kind: 'text', text: 'the lexer handles unicode identifiers' }]);
  return { url: d.url, home, s };
}

const env = (home: string, url: string): NodeJS.ProcessEnv => ({ OVERSEER_HOME: home, OVERSEER_DATABASE_URL: url, OVERSEER_LOG_LEVEL: 'silent' });

async function publicTables(url: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1")).rows.map((r: { table_name: string }) => r.table_name);
  } finally {
    await c.end();
  }
}

describe('the CLI on PostgreSQL (OVERSEER_DATABASE_URL, no hub)', () => {
  test('status, status --json and --floor, logs, events, search, overlaps, usage, templates, projects, kb: the database\'s rows, and no state.db', async (t) => {
    const { url, home } = await crew(t);
    const e = env(home, url);
    const run = async (args: string[]): Promise<string> => {
      const r = await overseer(home, args, e);
      assert.equal(r.code, 0, `overseer ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    };

    const status = await run(['status']);
    assert.match(status, /j-pg1a\s+running\s.*build the parser/);
    assert.match(status, /j-pg2b\s+succeeded\s.*\$0\.5000.*write the docs/);
    assert.match(status, /2 jobs: 1 running .* 1 succeeded/);
    assert.match(status, /! j-pg1a "build the parser" .*no output for 10 min/, 'what needs the person, read through the floor on PostgreSQL');
    const json = JSON.parse(await run(['status', '--json'])) as { job_id: string; status: string }[];
    assert.deepEqual(json.map((j) => [j.job_id, j.status]).sort(), [['j-pg1a', 'running'], ['j-pg2b', 'succeeded']]);
    const floor = JSON.parse(await run(['status', '--floor'])) as { source: string; running: { job_id: string }[]; needs_you: { kind: string }[] };
    assert.equal(floor.source, 'database');
    assert.deepEqual(floor.running.map((r) => r.job_id), ['j-pg1a']);
    assert.ok(floor.needs_you.some((x) => x.kind === 'warning'));

    assert.match(await run(['logs', 'pg1']), /parsing the grammar now/, 'a job by prefix, its transcript');
    assert.match(await run(['events', '--job', 'j-pg1a']), /j-pg1a\s+started/);
    assert.match(await run(['search', 'unicode']), /j-pg1a #1\s+build the parser[\s\S]*unicode/, 'the transcript index on PostgreSQL');
    assert.match(await run(['overlaps']), /src\/lexer\.ts/);
    const usage = JSON.parse(await run(['usage', '--json'])) as Record<string, unknown>;
    assert.ok(usage.totals, 'usage read from the database');
    assert.deepEqual((JSON.parse(await run(['templates', '--json'])) as { templates: unknown[] }).templates, []);
    assert.match(await run(['projects']), /No projects yet/);
    assert.match(await run(['kb', 'list']), /The knowledge base is empty/);

    assert.equal(existsSync(join(home, 'state.db')), false, 'the CLI created no SQLite state');
  });

  test('status --watch sees a job added after it started', async (t) => {
    const { url, home, s } = await crew(t);
    const child = spawn(process.execPath, [MAIN, 'status', '--watch'], { cwd: home, env: cliEnv(env(home, url)), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const waiters: (() => void)[] = [];
    child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; for (const w of waiters.splice(0)) w(); });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { err += d; });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    t.after(() => { child.kill('SIGKILL'); });
    const until = async (pred: () => boolean, what: string, ms = 20_000): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!pred()) {
        const left = deadline - Date.now();
        if (left <= 0) assert.fail(`${what} not printed within ${ms} ms; stdout: ${out.slice(-2000)}; stderr: ${err}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), new Promise((r) => setTimeout(r, left).unref()), exited]);
        if (child.exitCode !== null && !pred()) assert.fail(`the watch exited ${child.exitCode}: ${err}`);
      }
    };
    await until(() => /j-pg1a/.test(out) && /from the database/.test(out), 'the first render');
    assert.doesNotMatch(out, /j-pg3c/);
    await insertJob(s.db, newJob('j-pg3c', { title: 'a job added while watching' }), Date.now());
    await until(() => /j-pg3c\s+queued\s.*a job added while watching/.test(out), 'the new job');
    child.kill('SIGINT');
    assert.equal(await exited, 0, err);
    assert.equal(existsSync(join(home, 'state.db')), false);
  });

  test('a database without Overseer\'s schema, or with an older one: a clear error naming the fix, the password masked, nothing created', async (t) => {
    const d = await freshDatabase();
    t.after(() => d.drop());
    const home = homeDir();
    const password = new URL(d.url).password;
    for (const args of [['status'], ['status', '--floor'], ['logs', 'j-1'], ['kb', 'list']]) {
      const r = await overseer(home, args, env(home, d.url));
      assert.equal(r.code, 2, `overseer ${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /the database postgres:\/\/[^:]+:\*\*\*@.* has no Overseer schema yet \(a reader never creates it\): start a hub of this version on it once \(overseer serve/);
      assert.doesNotMatch(r.stderr, new RegExp(password));
    }
    assert.deepEqual(await publicTables(d.url), [], 'the readers created nothing');
    assert.equal(existsSync(join(home, 'state.db')), false);

    // Older: the baseline only (as an old hub left it).
    const s = await openSql({ home, databaseUrl: d.url }, { migrate: false }).catch((err: Error) => err);
    assert.ok(s instanceof Error, 'openSql without migrating refuses the empty database too');
    const c = new pg.Pool({ connectionString: d.url });
    const { Kysely: K, PostgresDialect } = await import('kysely');
    const k = new K<unknown>({ dialect: new PostgresDialect({ pool: c }) }) as Kysely<unknown>;
    await migratePostgres(k, { '0026-baseline': PG_MIGRATIONS['0026-baseline']! });
    await k.destroy();
    const tables = await publicTables(d.url);
    const r = await overseer(home, ['status'], env(home, d.url));
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /has an older Overseer schema \(without 0027-hubs, .*a reader never migrates\): start a hub of this version on it once .* to upgrade it/);
    assert.deepEqual(await publicTables(d.url), tables, 'not migrated');
  });

  test('doctor: a migrated database is OK', async (t) => {
    const { url, home } = await crew(t);
    const r = await overseer(home, ['doctor', '--json'], { ...env(home, url), OVERSEER_CONFINE: 'auto' });
    const checks = (JSON.parse(r.stdout) as { checks: { name: string; status: string; detail: string }[] }).checks;
    assert.match(checks.find((c) => c.name === 'state db')!.detail, /the state is in the PostgreSQL database/, 'no talk of a SQLite file the hub would create');
    const db = checks.find((c) => c.name === 'database');
    assert.ok(db, r.stdout);
    assert.match(db.detail, /migrations applied \(current\)/);
    const confined = checks.find((c) => c.name === 'confinement')!.status === 'ok';
    // The test server's URL carries a password: OK when agents run confined, else the exposure warning.
    assert.equal(db.status, confined ? 'ok' : 'warn', db.detail);
  });
});
