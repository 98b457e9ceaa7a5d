// READY TO SHIP (issue 31 point 1) on a real hub over a real git repository: finished worktree
// jobs are made directly (a branch with real commits, a job row), no children needed. Which jobs
// are in the lane (merged and dismissed ones not; a job whose checks failed is, marked failed),
// what a row carries (diff stat, checks, overlaps, age), and the verbs through the floor's API
// with the lead token: ship merges through the merge service (its checks on the merged result),
// a job whose checks failed is refused with why and nothing merged, dismiss keeps the branch.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { newJob } from '../helpers/budgetDb.js';
import type { NewJob } from '../../src/store/jobs.js';
import { addEvent, insertJob } from '../../src/store/sql/jobs.js';
import { DISMISSED, readShipRows } from '../../src/floor/ship.js';
import { openDialect } from '../helpers/sqlDialect.js';
import { rows } from '../helpers/state.js';
import type { Floor, ShipItem } from '../../src/floor/types.js';
import { openFloorStream } from '../helpers/floorStream.js';

describe('READY TO SHIP', () => {
  let h: TestHub;
  let repo = '';
  let wts = '';
  let base = '';
  let lead = '';
  let n = 0;

  before(async () => {
    const dir = await makeTempDir('ovs-ship');
    repo = await initRepo(join(dir, 'repo'), { 'README.md': 'one\ntwo\n', 'shared.txt': 'alpha\nbeta\n' });
    wts = join(dir, 'wts');
    await mkdir(wts, { recursive: true });
    h = await startTestHub({ project: repo });
    base = new URL(h.hub.http!.url).origin;
    lead = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
  });
  after(async () => { await h?.stop(); });

  const tip = (ref = 'main') => gitOut(repo, ['rev-parse', ref]);
  const q = () => h.hub.ctx.sql.db;

  /** A finished worktree job: branch from main with `files` committed; `over` sets its row (status, checks…). */
  async function finishedJob(files: Record<string, string>, o: Partial<NewJob> & { failure_class?: string; error?: string } = {}): Promise<{ id: string; branch: string }> {
    const { failure_class: failureClass = null, error = null, ...over } = o;
    n += 1;
    const id = `job-s${n}`;
    const branch = `overseer/s${n}`;
    const wt = join(wts, `s${n}`);
    await gitOut(repo, ['worktree', 'add', '-q', '-b', branch, wt, 'main']);
    for (const [f, c] of Object.entries(files)) await writeFile(join(wt, f), c);
    await gitOut(wt, ['add', '-A']);
    await gitOut(wt, ['commit', '-q', '-m', `work of ${id}`]);
    await gitOut(repo, ['worktree', 'remove', '--force', wt]);
    const ended = Date.now() - 60_000 + n;
    await insertJob(q(), newJob(id, {
      title: `ship ${n}`, cwd: repo, work_dir: wt, repo_root: repo, worktree: 1, branch, base_commit: await tip(), status: 'succeeded', ...over,
    }), ended);
    await sql`UPDATE jobs SET ended_at = ${ended}, diff_stat = ${`${Object.keys(files).length} file changed`}, failure_class = ${failureClass}, error = ${error} WHERE id = ${id}`.execute(q());
    return { id, branch };
  }

  const floor = async (): Promise<Floor> => {
    const r = await fetch(`${base}/api/floor`, { headers: { authorization: `Bearer ${lead}` } });
    assert.equal(r.status, 200);
    return await r.json() as Floor;
  };
  const lane = async (): Promise<ShipItem[]> => (await floor()).ready_to_ship ?? [];
  const post = (path: string, token = lead) => fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const merged = async (id: string) => (await rows(h.hub, sql<{ commit_sha: string }>`SELECT commit_sha FROM job_merges WHERE job_id = ${id}`)).length;

  test('the lane: finished unmerged worktree jobs with diff stat, checks, overlaps and age; merged, dismissed, live and non-worktree jobs are not in it', async () => {
    const plain = await finishedJob({ 'a.txt': 'a\n' });
    const checked = await finishedJob({ 'b.txt': 'b\n' }, { checks_json: JSON.stringify(['command:test -f b.txt']) });
    const failing = await finishedJob({ 'c.txt': 'c\n' }, { status: 'failed', failure_class: 'check_failed', error: 'completion checks failed: command:npm test (exited 1)\nmore', checks_json: JSON.stringify(['command:npm test']) });
    const other = await finishedJob({ 'd.txt': 'd\n' }, { status: 'failed', failure_class: 'crashed' });
    const running = await finishedJob({ 'e.txt': 'e\n' }, { status: 'running' });
    await insertJob(q(), newJob('job-nowt', { title: 'no worktree', cwd: repo, status: 'succeeded' }), Date.now());
    // The conflict guard saw `plain` and the live `running` job change the same file.
    await q().insertInto('overlaps').values({ repo_root: repo, file: 'a.txt', job_a: plain.id, job_b: running.id, locks_conflict: 0, detected_at: Date.now(), cleared_at: null, lead_seen_at: null }).execute();

    const l = await lane();
    const ids = l.map((x) => x.job_id);
    assert.deepEqual(ids.filter((id) => [plain.id, checked.id, failing.id, other.id, running.id, 'job-nowt'].includes(id)), [plain.id, checked.id, failing.id], 'succeeded and check-failed worktree jobs, oldest first');
    const by = new Map(l.map((x) => [x.job_id, x]));
    assert.equal(by.get(plain.id)!.checks, 'not_run');
    assert.equal(by.get(checked.id)!.checks, 'passed');
    assert.equal(by.get(failing.id)!.checks, 'failed');
    assert.equal(by.get(failing.id)!.check_detail, 'completion checks failed: command:npm test (exited 1)');
    assert.equal(by.get(plain.id)!.diff_stat, '1 file changed');
    assert.deepEqual(by.get(plain.id)!.overlaps, [{ job_id: running.id, title: 'ship 5', files: ['a.txt'] }]);
    assert.ok(by.get(plain.id)!.age_ms! >= 50_000, 'its age is the time since it ended');
    assert.equal(by.get(plain.id)!.branch, plain.branch);
  });

  test('ship merges the branch through the merge service (recorded, main moved); it leaves the lane', async () => {
    const j = await finishedJob({ 'ship-me.txt': 'x\n' }, { checks_json: JSON.stringify(['command:test -f ship-me.txt']) });
    assert.ok((await lane()).some((x) => x.job_id === j.id));
    const before = await tip();
    const r = await post(`/api/floor/ready/${j.id}/ship`);
    const body = await r.json() as { merged: boolean; message: string; commit: string };
    assert.equal(r.status, 200, JSON.stringify(body));
    assert.equal(body.merged, true, body.message);
    assert.notEqual(await tip(), before, 'main moved');
    assert.equal(await tip(), body.commit);
    assert.equal(await merged(j.id), 1, 'the merge is recorded as merge_branch records it');
    assert.ok(!(await lane()).some((x) => x.job_id === j.id), 'a merged job is not in the lane');
    const again = await post(`/api/floor/ready/${j.id}/ship`);
    assert.equal(again.status, 409);
    assert.match(((await again.json()) as { error: { message: string } }).error.message, /already merged/);
  });

  test('bad input: ship of a job whose checks failed is refused with why, and nothing is merged', async () => {
    const j = await finishedJob({ 'broken.txt': 'x\n' }, { status: 'failed', failure_class: 'check_failed', error: 'completion checks failed: command:npm test (exited 1)', checks_json: JSON.stringify(['command:npm test']) });
    const before = await tip();
    const r = await post(`/api/floor/ready/${j.id}/ship`);
    assert.equal(r.status, 409);
    const e = (await r.json() as { error: { code: string; message: string } }).error;
    assert.equal(e.code, 'invalid_state');
    assert.match(e.message, /refused to ship job .*its checks failed \(completion checks failed: command:npm test \(exited 1\)\).*Nothing was merged/);
    assert.equal(await tip(), before, 'main did not move');
    assert.equal(await merged(j.id), 0);
    assert.ok((await lane()).some((x) => x.job_id === j.id && x.checks === 'failed'), 'it stays in the lane, its checks shown failed');
  });

  test('a failed check on the merged result: not merged, the reason returned, main unchanged', async () => {
    const j = await finishedJob({ 'nocheck.txt': 'x\n' }, { checks_json: JSON.stringify(['command:test -f missing-file']) });
    const before = await tip();
    const r = await post(`/api/floor/ready/${j.id}/ship`);
    const body = await r.json() as { merged: boolean; reason: string; message: string };
    assert.equal(r.status, 200);
    assert.deepEqual([body.merged, body.reason], [false, 'checks_failed']);
    assert.equal(await tip(), before);
    assert.equal(await merged(j.id), 0);
  });

  test('dismiss takes a job out of the lane and keeps its branch; bad ids and agents are refused', async () => {
    const j = await finishedJob({ 'keep.txt': 'x\n' });
    const r = await post(`/api/floor/ready/${j.id}/dismiss`);
    assert.equal(r.status, 200);
    assert.match(((await r.json()) as { message: string }).message, /its branch overseer\/s\d+ is kept/);
    assert.ok(!(await lane()).some((x) => x.job_id === j.id), 'dismissed: out of the lane');
    assert.equal((await gitOut(repo, ['branch', '--list', j.branch])).trim().replace(/^\*?\s*/, ''), j.branch, 'the branch is kept');
    const again = await post(`/api/floor/ready/${j.id}/ship`);
    assert.equal(again.status, 409);
    assert.match(((await again.json()) as { error: { message: string } }).error.message, /dismissed from READY TO SHIP/);

    const missing = await post('/api/floor/ready/job-nope/ship');
    assert.equal(missing.status, 404);
    assert.equal((await post(`/api/floor/ready/job-nowt/ship`)).status, 400, 'no branch of its own');
    assert.equal((await fetch(`${base}/api/floor/ready/${j.id}/ship`, { headers: { authorization: `Bearer ${lead}` } })).status, 405);
    assert.equal((await post(`/api/floor/ready/${j.id}/ship`, 'not-a-token')).status, 401);
  });

  test('a merge outside the lane (merge_branch) drops the row from an open floor stream at once', async () => {
    const j = await finishedJob({ 'outside.txt': 'x\n' });
    const s = await openFloorStream(base, lead);
    try {
      const inLane = (f: Floor) => (f.ready_to_ship ?? []).some((x) => x.job_id === j.id);
      await s.next(inLane, 10_000);
      const r = await h.call('merge_branch', { job_id: j.id });
      assert.equal(r.merged, true, r.message);
      // Nothing else moves on this hub: only the merge's own event can bring this frame.
      await s.next((f) => !inLane(f), 5_000);
    } finally {
      s.close();
    }
  });
});

// The lane's read on both databases: the same statement decides who is in it.
for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`the lane's read on ${dialect}`, () => {
    test('merged and dismissed jobs are not in it; a dismissed job that ended again (resumed) is back', async (t) => {
      const { s } = await openDialect(dialect, t);
      const db = s.db;
      const add = async (id: string, o: Partial<NewJob> = {}) => {
        await insertJob(db, newJob(id, { title: id, cwd: '/r', repo_root: '/r', worktree: 1, branch: `b/${id}`, status: 'succeeded', ...o }), 1000);
        await sql`UPDATE jobs SET ended_at = 2000 WHERE id = ${id}`.execute(db);
      };
      for (const id of ['in', 'merged', 'dismissed', 'back']) await add(id);
      await add('checkfail', { status: 'failed' });
      await sql`UPDATE jobs SET failure_class = 'check_failed' WHERE id = 'checkfail'`.execute(db);
      await add('crashed', { status: 'failed' });
      await sql`INSERT INTO job_merges (job_id, repo_root, branch, target, mode, strategy, commit_sha, previous, checks_json, merged_at) VALUES ('merged', '/r', 'b/merged', 'main', 'merge', NULL, 'c', 'p', '[]', 3000)`.execute(db);
      await addEvent(db, 'dismissed', 3000, DISMISSED, {});
      await addEvent(db, 'back', 3000, DISMISSED, {});
      await sql`UPDATE jobs SET ended_at = 4000 WHERE id = 'back'`.execute(db);
      const r = await readShipRows(db);
      assert.deepEqual(r.jobs.map((j) => j.id), ['in', 'back', 'checkfail']);
      assert.deepEqual(r.overlaps, []);
    });
  });
}
