// The usage report's grouping (template, project, model with its provider), its project and
// since filters, unpriced runs (cost null, totals a lower bound — never $0) and its text; the
// project rules (names, inheritance, archived projects hidden from status rows and the floor).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openDb } from '../../src/store/db.js';
import { insertAttempt, insertJob, listJobs } from '../../src/store/sql/jobs.js';
import type { Q } from '../../src/store/sql/tx.js';
import { addUsage } from '../../src/store/sql/usage.js';
import { bucketsBy, usageReport as reportOn, type UsageReport } from '../../src/money/usageReport.js';
import { costText, usageText } from '../../src/money/usageText.js';
import { parseSince } from '../../src/search/query.js';
import { projectNameProblem } from '../../src/contract/projectNames.js';
import { sqlOver } from '../../src/store/sql/open.js';
import { assertProjectOpen, projectForSpawn, ProjectService } from '../../src/projects/service.js';
import { ensureProject } from '../../src/store/sql/projects.js';
import { filterRows } from '../../src/cli/status.js';
import { buildFloor, type FloorInput } from '../../src/floor/model.js';
import { newJob } from '../helpers/budgetDb.js';
import type { NewJob } from '../../src/store/jobs.js';

/** The archived projects' names, read as `overseer status` and the floor are given them. */
const archivedProjects = async (q: Q): Promise<string[]> =>
  (await sql<{ name: string }>`SELECT name FROM projects WHERE archived_at IS NOT NULL ORDER BY name`.execute(q)).rows.map((r) => r.name);

const DAY = 86_400_000;
const T0 = Date.parse('2026-05-10T12:00:00Z');

async function attempt(q: Q, jobId: string, n: number, at: number, cost: number, unknown = 0, tokens = { i: 1000, o: 100, cr: 50, cc: 10 }): Promise<void> {
  await insertAttempt(q, { job_id: jobId, n, kind: n === 1 ? 'initial' : 'retry', status: 'ended', started_at: at, ended_at: at + 1000, session_id: null, pid: null, exit_code: 0, signal: null, turns: 1, cost_usd: cost, failure_class: null, error: null, diagnosis: null, transcript: '/dev/null' });
  await sql`UPDATE attempts SET cost_unknown = ${unknown}, input_tokens = ${tokens.i}, output_tokens = ${tokens.o}, cache_read_tokens = ${tokens.cr}, cache_creation_tokens = ${tokens.cc}
    WHERE job_id = ${jobId} AND n = ${n}`.execute(q);
}

/** The layer over a fresh in-memory state database, seeded. */
async function seeded(): Promise<Q> {
  const db = sqlOver(openDb(':memory:')).db;
  const add = (id: string, o: Partial<NewJob>): Promise<void> => insertJob(db, newJob(id, o), T0 - 10 * DAY);
  await add('j-a', { project: 'web', template: 'reviewer', model: 'claude-sonnet-4-5', labels_json: '["ui","docs"]' });
  await add('j-b', { project: 'web', template: null, model: 'claude-opus-5-5' });
  await add('j-c', { project: 'api', template: 'reviewer', provider: 'codex', model: 'gpt-5.4' });
  await add('j-d', { project: null, provider: 'codex', model: 'gpt-unpriced-x' });
  await attempt(db, 'j-a', 1, T0 - 8 * DAY, 0.5);
  await attempt(db, 'j-a', 2, T0 - 1 * DAY, 0.25);
  await attempt(db, 'j-b', 1, T0 - 2 * DAY, 1.0);
  await attempt(db, 'j-c', 1, T0 - 3 * DAY, 0.125);
  await attempt(db, 'j-d', 1, T0 - 1 * DAY, 0, 1, { i: 7000, o: 700, cr: 0, cc: 0 });
  // A retry diagnosis the hub ran for j-b: counted under j-b's project and template.
  await addUsage(db, { jobId: 'j-b', kind: 'diagnosis', usage: { model: 'claude-haiku-4-5', costUsd: 0.01, tokens: { input: 300, output: 30 } }, now: T0 - 2 * DAY });
  return db;
}

/** The report through the layer over this connection. */
const usageReport = (q: Q, o?: Parameters<typeof reportOn>[1]): Promise<UsageReport> => reportOn(q, o);

const key = <T extends { key: string }>(bs: T[], k: string): T | undefined => bs.find((b) => b.key === k);

describe('usage report', () => {
  test('buckets by template and by project, with runs and distinct jobs; the hub\'s own runs count under their job\'s', async () => {
    const r = await usageReport(await seeded());
    assert.equal(key(r.by_project, 'web')!.cost_usd, 1.76);
    assert.equal(key(r.by_project, 'web')!.runs, 4, 'two attempts of j-a, one of j-b, j-b\'s diagnosis');
    assert.equal(key(r.by_project, 'web')!.jobs, 2);
    assert.equal(key(r.by_project, 'api')!.cost_usd, 0.125);
    assert.equal(key(r.by_project, '(no project)')!.cost_usd, null, 'j-d alone, unpriced');
    assert.equal(key(r.by_template, 'reviewer')!.cost_usd, 0.875);
    assert.equal(key(r.by_template, 'reviewer')!.jobs, 2);
    assert.equal(key(r.by_template, '(no template)')!.runs, 3);
    assert.equal(key(r.by_template, '(no template)')!.input_tokens, 1000 + 300 + 7000);
    assert.equal(key(r.by_template, '(no template)')!.cache_read_tokens, 50);
    assert.equal(key(r.by_template, '(no template)')!.cache_creation_tokens, 10);
    // Codex and Claude side by side: by provider, and each model with its provider.
    assert.deepEqual(r.by_provider.map((b) => b.key).sort(), ['claude', 'codex']);
    assert.equal(key(r.by_model, 'gpt-5.4')!.provider, 'codex');
    assert.equal(key(r.by_model, 'claude-opus-5-5')!.provider, 'claude');
    assert.equal(key(r.by_kind, 'diagnosis')!.cost_usd, 0.01);
    assert.deepEqual(bucketsBy(r, 'template'), r.by_template);
  });

  test('an unpriced model is unpriced (cost null), never $0; every bucket it is in and the totals are marked as lower bounds', async () => {
    const r = await usageReport(await seeded());
    const m = key(r.by_model, 'gpt-unpriced-x')!;
    assert.equal(m.cost_usd, null);
    assert.equal(m.cost_unknown, true);
    assert.equal(m.unpriced_runs, 1);
    assert.equal(m.input_tokens, 7000, 'its tokens still count');
    const codex = key(r.by_provider, 'codex')!;
    assert.equal(codex.cost_usd, 0.125, 'the priced part of the provider');
    assert.equal(codex.cost_unknown, true, '… a lower bound');
    assert.equal(key(r.by_provider, 'claude')!.cost_unknown, false);
    assert.equal(r.totals.cost_unknown, true);
    assert.equal(r.totals.unpriced_runs, 1);
    assert.equal(r.totals.cost_usd, 1.885);
    assert.equal(costText(m), 'unpriced');
    assert.equal(costText(codex), '≥ $0.1250');
    const text = usageText(r, [{ by: 'model', buckets: r.by_model }]);
    assert.match(text, /^Usage \(all projects, all time\): ≥ \$1\.8850 over 6 run\(s\) of 4 job\(s\)/);
    assert.match(text, /gpt-unpriced-x\s+codex\s+7,000\s+700\s+0\s+0\s+unpriced\s+1\s+1/);
    assert.match(text, /lower bounds/);
    assert.doesNotMatch(text.split('\n').find((l) => l.startsWith('gpt-unpriced-x'))!, /\$0/);
  });

  test('--project keeps one project\'s runs (its diagnosis too); since drops older runs', async () => {
    const db = await seeded();
    const web = await usageReport(db, { project: 'web' });
    assert.equal(web.project, 'web');
    assert.equal(web.totals.runs, 4);
    assert.equal(web.totals.cost_usd, 1.76);
    assert.deepEqual(web.by_project.map((b) => b.key), ['web']);
    assert.equal((await usageReport(db, { project: 'nope' })).totals.runs, 0);
    const recent = await usageReport(db, { sinceMs: parseSince('7d', T0) });
    assert.equal(recent.totals.runs, 5, 'j-a\'s first attempt (8 days ago) is out');
    assert.equal(key(recent.by_project, 'web')!.cost_usd, 1.26);
    assert.equal(recent.since, new Date(T0 - 7 * DAY).toISOString());
    assert.equal((await usageReport(db, { sinceMs: parseSince('36h', T0) })).totals.runs, 2);
    assert.equal((await usageReport(db, { sinceMs: parseSince('2026-05-08T00:00Z', T0) })).totals.runs, 4, 'j-a #2, j-b, its diagnosis, j-d');
    assert.match(usageText(await usageReport(db, { project: 'nope' }), []), /no model runs/);
  });

  test('since: how long ago or an ISO time; anything else, and the future, are refused with what to give', () => {
    assert.equal(parseSince('24h', T0), T0 - DAY);
    assert.equal(parseSince('7d', T0), T0 - 7 * DAY);
    assert.equal(parseSince('2026-05-01T10:00Z', T0), Date.parse('2026-05-01T10:00Z'));
    assert.throws(() => parseSince('yesterday', T0), /not a time: give how long ago \("30m", "2h", "7d", "1w"\) or an ISO time/);
    assert.throws(() => parseSince('2027-01-01', T0), /in the future/);
  });
});

describe('projects', () => {
  test('names: letters, digits and -_./, 1..100 characters', () => {
    for (const ok of ['web', 'acme/api', 'q3-migration_2.0']) assert.equal(projectNameProblem(ok), undefined, ok);
    assert.match(projectNameProblem('a b')!, /" " is not allowed/);
    assert.match(projectNameProblem('*')!, /"\*" is not allowed/);
    assert.match(projectNameProblem('x'.repeat(101))!, /101 characters long/);
    assert.match(projectNameProblem('')!, /empty/);
  });

  test('a sub-agent inherits its parent\'s project; asking for another one (or one under a parent without) is refused', () => {
    assert.equal(projectForSpawn(undefined, 'web'), 'web');
    assert.equal(projectForSpawn(undefined, undefined), null);
    assert.equal(projectForSpawn({ id: 'j-p', project: 'web' }, undefined), 'web');
    assert.equal(projectForSpawn({ id: 'j-p', project: 'web' }, 'web'), 'web');
    assert.throws(() => projectForSpawn({ id: 'j-p', project: 'web' }, 'api'), /belongs to its parent's project \("web"\) and an agent cannot put it in another one/);
    assert.throws(() => projectForSpawn({ id: 'j-p', project: null }, 'api'), /parent's project \(none\)/);
  });

  test('archive, flag, note; an archived project refuses new jobs and is hidden from status rows and the floor unless named', async () => {
    const q = await seeded();
    const ps = new ProjectService(q, () => T0);
    await ensureProject(q, 'web', T0 - DAY);
    await assert.rejects(ps.update({ name: 'nope', archived: true }), /No project "nope": no job was ever started in it\. Known projects: api, web/);
    await assert.rejects(ps.update({ name: 'web' }), /changes nothing/);
    const v = await ps.update({ name: 'web', archived: true, flagged: true, note: 'paused for the release' });
    assert.equal(v.archived, true);
    assert.equal(v.flagged, true);
    assert.equal(v.note, 'paused for the release');
    assert.equal(v.jobs, 2);
    assert.deepEqual(v.by_status, { queued: 2 });
    assert.deepEqual(await archivedProjects(q), ['web']);
    await assert.rejects(assertProjectOpen(q, 'web'), /project "web" is archived .*unarchive it first \(update_project \{ name: "web", archived: false \}, or overseer project web --unarchive\)/);
    await assertProjectOpen(q, 'api');
    await assert.rejects(assertProjectOpen(q, 'bad name'), /not a valid project name/);
    assert.deepEqual((await ps.list({ archived: true })).projects.map((p) => p.name), ['web']);
    const api = (await ps.list({ archived: false })).projects.find((p) => p.name === 'api')!;
    assert.equal(api.cost_usd, 0, 'list_projects reads jobs.cost_usd (not set by hand-made attempts here)');

    const rows = await listJobs(q, { limit: 100 });
    const archived = await archivedProjects(q);
    assert.deepEqual(filterRows(rows, {}, archived).map((j) => j.id), ['j-c', 'j-d'], 'status hides the archived project');
    assert.deepEqual(filterRows(rows, { project: 'web' }, archived).map((j) => j.id), ['j-a', 'j-b'], '… unless named');
    assert.deepEqual((await listJobs(q, { limit: 100, hideArchived: true })).map((j) => j.id), ['j-c', 'j-d']);
    assert.deepEqual((await listJobs(q, { limit: 100, project: 'web' })).map((j) => j.id), ['j-a', 'j-b']);

    const input: FloorInput = {
      jobs: rows, requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 4, source: 'database',
      archived,
    };
    const ids = (f: ReturnType<typeof buildFloor>) => f.queued.map((j) => j.job_id);
    assert.deepEqual(ids(buildFloor(input, T0)), ['j-c', 'j-d']);
    assert.deepEqual(ids(buildFloor({ ...input, project: 'web' }, T0)), ['j-a', 'j-b']);
    assert.equal(buildFloor({ ...input, project: 'web' }, T0).queued[0]!.project, 'web');
    assert.equal(buildFloor({ ...input, project: 'api' }, T0).totals.queued, 1);
    await ps.update({ name: 'web', archived: false });
    assert.deepEqual(await archivedProjects(q), []);
    await assertProjectOpen(q, 'web');
  });
});
