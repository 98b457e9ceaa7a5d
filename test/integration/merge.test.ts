// merge_branch, merge_queue and `overseer merge|queue` (docs/merge.md) on a real hub over real git
// repositories: finished worktree jobs are made directly (a branch with real commits, its worktree,
// a succeeded job row), no children needed. Checks run on the merged result in a scratch worktree;
// conflicts and failed checks leave the target branch and the person's checkout untouched.
import { statusText } from '../../src/cli/status.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { newJob } from '../helpers/budgetDb.js';
import { runOverseer } from '../helpers/overseerCli.js';
import type { NewJob } from '../../src/store/jobs.js';
import { insertJob } from '../../src/store/sql/jobs.js';
import { events, rows } from '../helpers/state.js';
import { sql } from 'kysely';

describe('merge and queue', () => {
  let h: TestHub;
  let repo = '';
  let wts = '';
  let n = 0;

  before(async () => {
    const dir = await makeTempDir('ovs-merge');
    repo = await initRepo(join(dir, 'repo'), { 'README.md': 'line one\nline two\nline three\n', 'shared.txt': 'alpha\nbeta\ngamma\n' });
    wts = join(dir, 'wts');
    await mkdir(wts, { recursive: true });
    h = await startTestHub({ project: repo, progressEveryMs: 100 });
  });
  let stopped = false;
  after(async () => { if (stopped) await rm(h.dir, { recursive: true, force: true }); else await h?.stop(); });

  const tip = (ref = 'main') => gitOut(repo, ['rev-parse', ref]);
  const mergeRows = (id: string) => rows(h.hub, sql<{ target: string; commit_sha: string }>`SELECT * FROM job_merges WHERE job_id = ${id}`);
  const kinds = async (id: string) => (await events(h.hub, id)).map((e) => e.kind);
  /** Out of the queue test: the job row's status set straight in the database. */
  const failed = (...ids: string[]) => sql`UPDATE jobs SET status = 'failed' WHERE id IN (${sql.join(ids)})`.execute(h.hub.ctx.sql.db);

  /** A succeeded worktree job: branch `b` from main with `files` committed in its worktree (kept unless removed). */
  async function finishedJob(files: Record<string, string>, o: { checks?: string[]; keepWorktree?: boolean; over?: Partial<NewJob> } = {}): Promise<{ id: string; branch: string; wt: string }> {
    n += 1;
    const id = `job-m${n}`;
    const branch = `overseer/m${n}`;
    const wt = join(wts, `m${n}`);
    await gitOut(repo, ['worktree', 'add', '-q', '-b', branch, wt, 'main']);
    for (const [f, c] of Object.entries(files)) await writeFile(join(wt, f), c);
    await gitOut(wt, ['add', '-A']);
    await gitOut(wt, ['commit', '-q', '-m', `work of ${id}`]);
    if (!o.keepWorktree) await gitOut(repo, ['worktree', 'remove', '--force', wt]);
    await insertJob(h.hub.ctx.sql.db, newJob(id, {
      title: `task ${n}`, cwd: repo, work_dir: wt, repo_root: repo, worktree: 1, branch, base_commit: await tip(), status: 'succeeded',
      checks_json: JSON.stringify(o.checks ?? []), ...o.over,
    }), Date.now() - 1000 + n);
    await sql`UPDATE jobs SET ended_at = ${Date.now() - 1000 + n} WHERE id = ${id}`.execute(h.hub.ctx.sql.db);
    return { id, branch, wt };
  }

  async function commitOnMain(file: string, content: string): Promise<void> {
    await writeFile(join(repo, file), content);
    await gitOut(repo, ['add', file]);
    await gitOut(repo, ['commit', '-q', '-m', `main: ${file}`]);
  }

  test('merges a finished job: its checks run on the merged result (not in the checkout); the worktree goes, the branch stays, the merge is recorded', async () => {
    const j = await finishedJob({ 'feature.txt': 'feature\n' }, { keepWorktree: true, checks: ['command:test -f feature.txt && test -f later.txt && touch check-ran-here'] });
    await commitOnMain('later.txt', 'on main after the branch left\n'); // only the merged result has both files
    const before = await tip();
    const r = await h.call('merge_branch', { job_id: j.id });
    assert.equal(r.merged, true, r.message);
    assert.equal(r.target, 'main');
    assert.equal(await tip(), r.commit);
    assert.equal(await gitOut(repo, ['rev-parse', `${r.commit}^1`]), before, 'a merge commit on top of the old main');
    assert.equal(await readFile(join(repo, 'feature.txt'), 'utf8'), 'feature\n', 'the person\'s checkout is fast-forwarded');
    assert.equal(existsSync(join(repo, 'check-ran-here')), false, 'the check ran in a scratch worktree, not in the checkout');
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
    assert.equal(existsSync(j.wt), false, 'the job\'s worktree folder was removed');
    assert.equal(r.worktree_removed, true);
    assert.ok(await gitOut(repo, ['rev-parse', '--verify', `refs/heads/${j.branch}`]), 'the branch is kept');
    assert.deepEqual((await mergeRows(j.id)).map((m) => [m.target, m.commit_sha]), [['main', r.commit]]);
    assert.ok((await kinds(j.id)).includes('merged'));
    const shown = await h.call('get_agent', { job_id: j.id });
    assert.deepEqual({ into: shown.merged.into, mode: shown.merged.mode, commit: shown.merged.commit }, { into: 'main', mode: 'merge', commit: r.commit }, 'get_agent shows the merge');
    assert.match(await statusText({ sql: h.hub.ctx.sql, home: h.home, close: async () => undefined }, {}), new RegExp(`${j.id}.*merged into main`), 'and so does status');
    assert.equal((await gitOut(repo, ['worktree', 'list', '--porcelain'])).match(/^worktree /gm)?.length, 1, 'no scratch worktree left');
    await assert.rejects(h.call('merge_branch', { job_id: j.id }), /already merged/);
  });

  test('a failing check refuses the merge, says which and its output, and leaves main untouched', async () => {
    const j = await finishedJob({ 'broken.txt': 'x\n' }, { checks: ['command:sleep 0.5; echo the-suite-is-red; exit 3'] });
    const before = await tip();
    const ticks: unknown[] = [];
    const r = await h.call('merge_branch', { job_id: j.id }, { onprogress: (p) => ticks.push(p) });
    assert.ok(ticks.length >= 1, 'progress notifications while the checks run');
    assert.equal(r.merged, false);
    assert.equal(r.reason, 'checks_failed');
    assert.match(r.message, /exited 3/);
    assert.match(r.message, /the-suite-is-red/);
    assert.equal(await tip(), before);
    assert.equal(existsSync(join(repo, 'broken.txt')), false);
    assert.equal((await mergeRows(j.id)).length, 0);
    assert.ok(!(await kinds(j.id)).includes('merged'));
    await failed(j.id); // out of the queue test
  });

  test('a conflict stops with the files listed and main restored; --leave-conflicts leaves it for a person with how to finish or abort', async () => {
    const a = await finishedJob({ 'README.md': 'line one\nchanged by A\nline three\n' });
    const b = await finishedJob({ 'README.md': 'line one\nchanged by B\nline three\n' });
    const x = await finishedJob({ 'README.md': 'line one\nchanged by X\nline three\n' }, { checks: ['command:true'] });
    assert.equal((await h.call('merge_branch', { job_id: a.id, mode: 'squash' })).merged, true);
    const before = await tip();
    const r = await h.call('merge_branch', { job_id: b.id });
    assert.equal(r.reason, 'conflict');
    assert.deepEqual(r.files, ['README.md']);
    assert.match(r.message, /README\.md/);
    assert.equal(await tip(), before);
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
    assert.equal(existsSync(join(repo, '.git', 'MERGE_HEAD')), false);
    // the same with checks to run (the merge is made in a scratch worktree, not with merge-tree)
    const rx = await h.call('merge_branch', { job_id: x.id, mode: 'squash' });
    assert.equal(rx.reason, 'conflict');
    assert.deepEqual(rx.files, ['README.md']);
    assert.equal(await tip(), before);
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
    assert.equal((await gitOut(repo, ['worktree', 'list', '--porcelain'])).match(/^worktree /gm)?.length, 1, 'no scratch worktree left');
    await failed(x.id); // out of the queue test

    const left = await h.call('merge_branch', { job_id: b.id, leave_conflicts: true });
    assert.equal(left.reason, 'conflicts_left');
    assert.deepEqual(left.files, ['README.md']);
    assert.match(left.finish, /git add README\.md && git commit --no-edit/);
    assert.match(left.abort, /git merge --abort/);
    assert.match(await readFile(join(repo, 'README.md'), 'utf8'), /<<<<<<<[\s\S]*changed by A[\s\S]*changed by B/);
    assert.equal((await mergeRows(b.id)).length, 0);
    // while the merge is left open, another merge is refused naming the dirty file
    const c = await finishedJob({ 'other.txt': 'o\n' });
    await assert.rejects(h.call('merge_branch', { job_id: c.id }), /uncommitted changes: README\.md/);
    await gitOut(repo, ['merge', '--abort']);
    assert.equal(await tip(), before);
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
    // -X theirs takes B's side
    const t = await h.call('merge_branch', { job_id: b.id, strategy: 'theirs' });
    assert.equal(t.merged, true, t.message);
    assert.match(await readFile(join(repo, 'README.md'), 'utf8'), /changed by B/);
    assert.equal((await h.call('merge_branch', { job_id: c.id, mode: 'rebase' })).merged, true);
  });

  test('a job worktree still holding uncommitted work is kept after the merge, and says why', async () => {
    const j = await finishedJob({ 'kept.txt': 'k\n' }, { keepWorktree: true });
    await writeFile(join(j.wt, 'not-committed.txt'), 'work the merge did not take\n');
    const r = await h.call('merge_branch', { job_id: j.id });
    assert.equal(r.merged, true, r.message);
    assert.equal(r.worktree_removed, false);
    assert.match(r.worktree_note, /kept: .*not-committed\.txt/);
    assert.equal(existsSync(join(j.wt, 'not-committed.txt')), true);
    await gitOut(repo, ['worktree', 'remove', '--force', j.wt]);
  });

  test('bad input: running job, no branch, deleted branch, dirty checkout, unknown job: clear errors, nothing changes', async () => {
    const before = await tip();
    const running = await finishedJob({ 'r.txt': 'r\n' }, { over: { status: 'running' } });
    await assert.rejects(h.call('merge_branch', { job_id: running.id }), new RegExp(`job ${running.id} \\(task \\d+\\) is still running: wait .*or cancel`));
    await insertJob(h.hub.ctx.sql.db, newJob('job-nobranch', { cwd: repo, status: 'succeeded' }), Date.now());
    await assert.rejects(h.call('merge_branch', { job_id: 'job-nobranch' }), /job job-nobranch \(title of job-nobranch\) has no branch to merge/);
    const gone = await finishedJob({ 'g.txt': 'g\n' });
    await gitOut(repo, ['branch', '-D', gone.branch]);
    await assert.rejects(h.call('merge_branch', { job_id: gone.id }), new RegExp(`cannot merge job ${gone.id} .*the branch ${gone.branch} no longer exists`));
    const ok = await finishedJob({ 'd.txt': 'd\n' });
    await writeFile(join(repo, 'README.md'), 'dirty\n');
    await assert.rejects(h.call('merge_branch', { job_id: ok.id }), new RegExp(`cannot merge job ${ok.id} .*uncommitted changes: README\\.md`));
    await gitOut(repo, ['checkout', '--', 'README.md']);
    await assert.rejects(h.call('merge_branch', { job_id: 'job-nope' }), /no job "job-nope"/);
    await assert.rejects(h.call('merge_branch', { job_id: ok.id, into: 'no-such-branch' }), /target branch no-such-branch does not exist/);
    await assert.rejects(h.call('merge_branch', { job_id: ok.id, into: '--force' }), /branch name.*not starting with -.*into/);
    assert.equal(await tip(), before);
    for (const id of [running.id, 'job-nobranch', gone.id, ok.id]) assert.equal((await mergeRows(id)).length, 0);
    // the CLI: a refusal exits 2 with the hub's message
    const cli = await runOverseer(h.home, ['merge', running.id]);
    assert.equal(cli.code, 2, cli.stderr);
    assert.match(cli.stderr, /is still running/);
    // clean up for the queue test: these stay out of it
    await failed(running.id, ok.id);
  });

  test('queue orders by overlaps then size; --ship merges three in that order and stops at a conflicting fourth', async () => {
    const big = await finishedJob({ 'c.txt': 'c1\nc2\nc3\nc4\nc5\n' });
    const small = await finishedJob({ 'b.txt': 'b1\n' });
    const a = await finishedJob({ 'shared.txt': 'alpha\nA was here\ngamma\n' });
    const d = await finishedJob({ 'shared.txt': 'alpha\nD was here too, with more\ngamma\n', 'd2.txt': 'more\nlines\n' });
    const cli = await runOverseer(h.home, ['queue', '--json']);
    assert.equal(cli.code, 0, cli.stderr);
    const q = JSON.parse(cli.stdout);
    assert.deepEqual(q.queue.map((e: { job_id: string }) => e.job_id), [small.id, big.id, a.id, d.id]);
    assert.deepEqual(q.queue[2].overlaps, [{ job_id: d.id, files: ['shared.txt'] }]);
    const text = await runOverseer(h.home, ['queue']);
    assert.match(text.stdout, new RegExp(`1\\. ${small.id}`));

    const before = await tip();
    const ship = await runOverseer(h.home, ['queue', '--ship', '--json']);
    assert.equal(ship.code, 1, ship.stderr);
    const r = JSON.parse(ship.stdout);
    assert.deepEqual(r.merged.map((m: { job_id: string }) => m.job_id), [small.id, big.id, a.id]);
    assert.equal(r.failed.job_id, d.id);
    assert.equal(r.failed.reason, 'conflict');
    assert.deepEqual(r.failed.files, ['shared.txt']);
    assert.match(r.message, new RegExp(`stopped at ${d.branch}.*shared\\.txt`));
    // main got exactly those three merges, in that order; the fourth left nothing behind
    const firstParents = (await gitOut(repo, ['log', '--first-parent', '--format=%s', `${before}..main`])).split('\n').reverse();
    assert.deepEqual(firstParents, [small, big, a].map((j) => `overseer: merge ${j.branch} (${j.id}: task ${j.id.slice(5)})`));
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
    const after = await h.call('merge_queue', {});
    assert.deepEqual(after.queue.map((e: { job_id: string }) => e.job_id), [d.id], 'the queue is re-computed: only the conflicting one is left');
  });
  test('without a hub: overseer queue reads the state read-only; overseer merge needs the hub and says so', async () => {
    const left = (await h.call('merge_queue', {})).queue.map((e: { job_id: string }) => e.job_id);
    await h.stop({ keep: true });
    stopped = true;
    const q = await runOverseer(h.home, ['queue', '--json']);
    assert.equal(q.code, 0, q.stderr);
    assert.deepEqual(JSON.parse(q.stdout).queue.map((e: { job_id: string }) => e.job_id), left);
    const m = await runOverseer(h.home, ['merge', left[0]]);
    assert.equal(m.code, 1);
    assert.match(m.stderr, /No Overseer hub is running|did not answer/);
  });
});
