// End to end (the built CLI as its own process): `overseer status` shows what needs the person
// under its table, and `overseer status --watch [--json]` renders again when the floor changes
// — from the running hub's stream (a real hub, a real claude child on the fake model), and from
// the database read-only when no hub runs — until Ctrl-C.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildCli, overseer } from '../helpers/cli.js';
import { watch } from '../helpers/cliWatch.js';
import { scriptedHubs } from '../helpers/scripted.js';
import type { TestHub } from '../helpers/hub.js';
import { gate } from '../helpers/gate.js';
import { finishStep } from '../helpers/holder.js';
import { eventually } from '../helpers/wait.js';
import { openDb, type Db } from '../../src/store/db.js';
import type { NewJob } from '../../src/store/jobs.js';
import { insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { raiseWarning } from '../../src/store/sql/warnings.js';
import { sqlOver, type SqlDb } from '../../src/store/sql/open.js';
import type { Floor } from '../../src/floor/types.js';
import { insertRequestRow } from '../helpers/requests.js';
import { job, row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith } = scriptedHubs();
before(buildCli);

describe('status --watch with a hub', () => {
  const end = gate();
  let h: TestHub;
  before(async () => {
    h = await hubWith({
      asker: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'looking at the schema' } }] };
        if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__ask_lead', input: { question: 'Which database should I target?', options: ['sqlite', 'postgres'] } }] };
        if (ctx.step === 2) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'migrating to sqlite' } }] };
        if (ctx.step === 3) { await end.wait; return finishStep('migrated'); }
        return { text: 'done' };
      },
    });
  });
  after(() => end.open());

  test('renders on every change from the hub\'s stream: a question needs you, then it is answered and the agent reports', { timeout: 120_000 }, async () => {
    const id = (await h.call('spawn_agent', { prompt: '@script:asker', title: 'Schema work' })).job_id as string;
    const req = await eventually('the question to be pending', () => row(h.hub, sql<{ id: string }>`SELECT * FROM requests WHERE status = 'pending' ORDER BY created_at LIMIT 1`), 60_000);

    const w = watch(h.home, ['status', '--watch']);
    const first = await w.until((t) => t.includes('Which database should I target?'), 'the question in a render');
    assert.match(first.text, /overseer status --watch · \d\d:\d\d:\d\d · live from the hub \(pid \d+, up \d+s\) · 1 running of 8 · 0 queued · 1 need you/);
    assert.match(first.text, new RegExp(`\\? question ${req.id} from ${id} "Schema work": Which database should I target\\? — overseer respond ${req.id} --answer "sqlite"\\|"postgres"`));
    assert.match(first.text, new RegExp(`${id}\\s+needs_input`), 'the table is the status table');

    // Answered: the agent goes on and reports; the render after that no longer has the question.
    const mark = w.out().length;
    let reportedAt = NaN;
    // The moment of the event, kept across the read that says it is the one looked for.
    const off = h.hub.ctx.bus.on('progress', (e) => {
      const at = performance.now();
      if (!Number.isNaN(reportedAt) || e.jobId !== id) return;
      void job(h.hub, id).then((j) => { if (Number.isNaN(reportedAt) && j.status_message === 'migrating to sqlite') reportedAt = at; });
    });
    await h.call('respond', { request_id: req.id, answer: 'sqlite' });
    const next = await w.until((t) => t.includes('migrating to sqlite'), 'the new status line in a render', 60_000, mark);
    off();
    const lastRender = next.text.slice(next.text.lastIndexOf('overseer status --watch'));
    assert.doesNotMatch(lastRender, /Which database/, 'the answered question is gone');
    assert.match(lastRender, / 0 need you /);
    assert.ok(!Number.isNaN(reportedAt), 'report_status reached the bus');
    const lag = next.at - reportedAt;
    assert.ok(lag < 1000, `the render came ${lag.toFixed(0)} ms after the change (stream frame ≤ 250 ms, plus the CLI's table)`);

    const bye = await w.interrupt();
    assert.equal(bye.code, 0, bye.stderr);
    assert.equal(bye.stderr, '');
  });

  test('--watch --json: one JSON floor per line, from the hub, a line on each change; --floor prints it once', { timeout: 60_000 }, async () => {
    const w = watch(h.home, ['status', '--watch', '--json']);
    await w.until((t) => t.includes('\n'), 'the first floor');
    const f0 = JSON.parse(w.out().split('\n')[0]!) as Floor;
    assert.deepEqual([f0.source, f0.hub.pid, f0.locks.length], ['hub', process.pid, 0]);
    await h.call('lock_files', { files: ['watched.txt'] });
    await w.until((t) => t.split('\n').some((l) => l.includes('watched.txt')), 'a floor with the lock');
    const lines = w.out().trim().split('\n').map((l) => JSON.parse(l) as Floor);
    assert.ok(lines.at(-1)!.locks.some((l) => l.path.endsWith('watched.txt') && l.holder === 'lead'));
    assert.equal((await w.interrupt()).code, 0);

    const once = await overseer(h.project, ['status', '--floor'], { OVERSEER_HOME: h.home });
    assert.equal(once.code, 0, once.stderr);
    const f = JSON.parse(once.stdout) as Floor;
    assert.equal(f.source, 'hub');
    assert.ok(f.locks.some((l) => l.path.endsWith('watched.txt')));
    const bad = await overseer(h.project, ['status', '--floor', '--label', 'x'], { OVERSEER_HOME: h.home });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /filter it with jq/);
  });
});

describe('status without a hub', () => {
  let dir: string;
  let home: string;
  let db: Db;
  let layer: SqlDb;
  const NOW = Date.now();
  const job = (id: string, o: Partial<NewJob> = {}): NewJob => ({
    id, parent_id: null, depth: 1, title: `title ${id}`, prompt: 'p', provider: 'claude', model: null, cwd: '/r', work_dir: null, repo_root: null, worktree: 0,
    branch: null, base_commit: null, priority: 0, max_turns: null, budget_usd: null, timeout_s: null, context_json: null, template: null, checks_json: '[]',
    retry: 'none', labels_json: '[]', depends_on_json: '[]', status: 'running', session_id: `s-${id}`, token_hash: null, workflow_id: null, phase: null, cycle: null,
    json_schema: null, ...o,
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ovs-status-watch-'));
    home = join(dir, 'state');
    // SQLite's own file on purpose: this suite is about the watch polling SQLite's data_version with
    // no hub; its PostgreSQL twin is test/e2e/cli-postgres.test.ts ("status --watch sees a job added").
    db = openDb(join(home, 'state.db'));
    layer = sqlOver(db);
    await insertJob(layer.db, job('j-aaaa0001', { title: 'Stuck agent' }), NOW - 60_000);
    await updateJob(layer.db, 'j-aaaa0001', { started_at: NOW - 60_000, status_message: 'thinking' }, NOW - 60_000);
    await raiseWarning(layer.db, 'j-aaaa0001', 'stalled', 'no output for 600 s', NOW - 1000);
    insertRequestRow(db, { id: 'r-bbbb', job_id: 'j-aaaa0001', kind: 'approval', summary: 'push to origin', plan_json: null, options_json: null, created_at: NOW - 500, tool_name: null, tool_input_json: null, expires_at: null, who: 'person' });
  });
  after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('status: the table, then what needs you (requests, warnings) with the command for each', async () => {
    const r = await overseer(dir, ['status'], { OVERSEER_HOME: home });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^JOB\s+STATUS\s+PARENT/);
    assert.match(r.stdout, /\n1 jobs: 1 running/);
    assert.match(r.stdout, /\n\? approval r-bbbb from j-aaaa0001 "Stuck agent": for you only: push to origin — overseer respond r-bbbb --approve\|--reject \[--comment "<text>"\]\n/);
    assert.match(r.stdout, /\n! j-aaaa0001 "Stuck agent" stalled: no output for 600 s — overseer logs j-aaaa0001\n/);
    const filtered = await overseer(dir, ['status', '--status', 'queued'], { OVERSEER_HOME: home });
    assert.equal(filtered.stdout, 'No jobs match.\n');
  });

  test('--watch reads the database: a render at once, another when it changes, none while it does not', { timeout: 60_000 }, async () => {
    const w = watch(home, ['status', '--watch']);
    const first = await w.until((t) => t.includes('Stuck agent'), 'the first render');
    assert.match(first.text, /from the database \(no hub running\)/);
    const before = w.out().length;
    const t0 = performance.now();
    await insertJob(layer.db, job('j-cccc0002', { title: 'Newcomer', status: 'queued' }), Date.now());
    const next = await w.until((t) => t.includes('Newcomer'), 'a render with the new job', 5000, before);
    assert.ok(next.at - t0 < 1500, `rendered ${(next.at - t0).toFixed(0)} ms after the write (polls every 250 ms)`);
    assert.match(next.text, /j-cccc0002\s+queued/);
    assert.equal(w.out().split('overseer status --watch').length - 1, 2, 'one render per change, none in between');
    const bye = await w.interrupt();
    assert.equal(bye.code, 0, bye.stderr);
  });

  test('--watch with a hub that refuses the stream (an older hub): the database instead, saying why, and that hub is not asked again', { timeout: 60_000 }, async () => {
    let streamAsks = 0;
    const fake = createServer((req, res) => {
      if (req.url === '/health') return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ pid: 999_999 }));
      if (req.url?.startsWith('/api/floor/stream')) streamAsks++;
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found', message: 'no API route' } }));
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    const port = (fake.address() as AddressInfo).port;
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ pid: 999_999, port, url: `http://127.0.0.1:${port}/mcp`, started_at: new Date().toISOString(), version: '0.0.1' }));
    writeFileSync(join(home, 'lead.token'), 'x'.repeat(43));
    try {
      const w = watch(home, ['status', '--watch']);
      const first = await w.until((t) => t.includes('Stuck agent'), 'a render from the database');
      assert.match(first.text, /· from the database \(the hub at http:\/\/127\.0\.0\.1:\d+ answered \/api\/floor\/stream with HTTP 404: .*no API route.*\) · 1 running of 8/);
      // Three of its hub checks (one a second) pass: the refusing hub is not asked again.
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal(streamAsks, 1);
      assert.equal((await w.interrupt()).code, 0);
    } finally {
      rmSync(join(home, 'hub.json'), { force: true });
      rmSync(join(home, 'lead.token'), { force: true });
      await new Promise((r) => fake.close(r));
    }
  });

  test('--watch --json reads the database: one floor per change, nothing while it is unchanged', { timeout: 60_000 }, async () => {
    const w = watch(home, ['status', '--watch', '--json']);
    await w.until((t) => t.endsWith('\n'), 'the first floor');
    // Several polls (250 ms each) of an unchanged database: PRAGMA data_version says nothing changed.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(w.out().trim().split('\n').length, 1, 'no floor while nothing changed');
    await updateJob(layer.db, 'j-aaaa0001', { status_message: 'unstuck' }, Date.now());
    await w.until((t) => t.includes('unstuck'), 'a floor with the new status line');
    const floors = w.out().trim().split('\n').map((l) => JSON.parse(l) as Floor);
    assert.equal(floors.length, 2);
    assert.equal(floors[1]!.source, 'database');
    assert.equal(floors[1]!.running.find((j) => j.job_id === 'j-aaaa0001')!.last_line, 'unstuck');
    assert.deepEqual(floors[1]!.needs_you.map((n) => n.key).slice(0, 1), ['req:r-bbbb']);
    assert.equal((await w.interrupt()).code, 0);
  });
});
