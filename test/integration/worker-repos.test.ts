// A worker's own clones, worktrees and pushes (issue 30 step 3; src/worker/repos.ts) and the hub's
// side of a branch a worker pushed (src/branches/workerBranch.ts), with real git: a bare remote on
// disk, the lead's clone (the hub's machine) and a worker's state directory (another machine:
// its own clone under <state>/repos). Job rows are written straight into the hub's database; no
// children are needed for what is tested here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo, makeBareRemote } from '../helpers/git.js';
import { newJob } from '../helpers/budgetDb.js';
import type { JobRow, NewJob } from '../../src/store/jobs.js';
import { getJob, insertJob } from '../../src/store/sql/jobs.js';
import { setSetupBase } from '../../src/store/sql/setup.js';
import { WorkerRepos } from '../../src/worker/repos.js';
import { SetupFailed } from '../../src/branches/jobWorktrees.js';
import { RemoteError, originUrl } from '../../src/git/remote.js';
import { diffOfJob } from '../../src/branches/jobDiff.js';

describe('a worker\'s repositories', () => {
  let h: TestHub;
  let dir = '';
  let remote = '';
  let lead = '';
  let n = 0;

  before(async () => {
    dir = await makeTempDir('ovs-wrepos');
    remote = await makeBareRemote(join(dir, 'remote.git'));
    lead = await initRepo(join(dir, 'lead'), { 'README.md': 'hello\n', 'shared.txt': 'one\ntwo\n' });
    await gitOut(lead, ['remote', 'add', 'origin', remote]);
    await gitOut(lead, ['push', '-q', 'origin', 'main']);
    h = await startTestHub({ project: lead });
  });
  after(async () => { await h?.stop(); });

  const q = () => h.hub.ctx.sql.db;
  const remoteTip = (ref: string) => gitOut(remote, ['rev-parse', ref]);
  const row = async (id: string): Promise<JobRow> => (await getJob(q(), id))!;

  /** A worktree job of the lead's repository that a worker runs (its row as a spawn leaves it: branch chosen, no worktree yet). */
  async function job(over: Partial<NewJob> = {}): Promise<JobRow> {
    n += 1;
    const id = `job-w${n}`;
    await insertJob(q(), newJob(id, { title: `task ${n}`, cwd: lead, repo_root: lead, worktree: 1, branch: `overseer/w${n}`, status: 'succeeded', repo_remote: remote, worker: 'w1', placement: 'queue', ...over }), Date.now());
    return row(id);
  }

  /** The lead commits on main and pushes it: the remote moves on. */
  async function leadCommit(file: string, text: string): Promise<string> {
    await writeFile(join(lead, file), text);
    await gitOut(lead, ['add', file]);
    await gitOut(lead, ['commit', '-q', '-m', `lead: ${file}`]);
    await gitOut(lead, ['push', '-q', 'origin', 'main']);
    return gitOut(lead, ['rev-parse', 'HEAD']);
  }

  test('originUrl: the URL of origin, a relative one made absolute, undefined without one', async () => {
    assert.equal(await originUrl(lead), remote);
    const other = await initRepo(join(dir, 'rel'));
    assert.equal(await originUrl(other), undefined);
    await gitOut(other, ['remote', 'add', 'origin', '../remote.git']);
    assert.equal(await originUrl(other), join(dir, 'remote.git'));
    assert.equal(await originUrl(join(dir, 'no-such-dir')), undefined);
  });

  test('prepare clones the repository once; a second job fetches (the remote moved on) and starts from the remote\'s new tip', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-a'));
    const a = await job();
    const pa = await repos.prepare(a);
    assert.equal(repos.clones, 1);
    assert.equal(await gitOut(pa.workDir, ['rev-parse', '--abbrev-ref', 'HEAD']), a.branch);
    assert.equal(pa.baseCommit, await remoteTip('main'));
    assert.equal(await readFile(join(pa.workDir, 'README.md'), 'utf8'), 'hello\n');
    const ra = await row(a.id);
    assert.deepEqual([ra.work_dir, ra.branch, ra.base_commit], [pa.workDir, a.branch, pa.baseCommit], 'the row records the worker\'s worktree');
    const clones = await readdir(join(dir, 'worker-a', 'repos'));
    assert.equal(clones.length, 1, `one clone under <state>/repos: ${clones.join(', ')}`);
    const clone = join(dir, 'worker-a', 'repos', clones[0]!);
    await writeFile(join(clone, '.git', 'marker-of-the-first-clone'), 'x');

    const moved = await leadCommit('later.txt', 'pushed after the clone\n');
    const b = await job();
    const pb = await repos.prepare(b);
    assert.equal(repos.clones, 1, 'the second job did not clone again');
    assert.ok(existsSync(join(clone, '.git', 'marker-of-the-first-clone')), 'the same clone is used');
    assert.equal(pb.baseCommit, moved, 'fetched: the second job starts from the remote\'s new main');
    assert.equal(await readFile(join(pb.workDir, 'later.txt'), 'utf8'), 'pushed after the clone\n');
    assert.match(await gitOut(clone, ['worktree', 'list']), new RegExp(b.branch!.replace('/', '\\/')), 'its worktree is the clone\'s');
  });

  test('a job with a recorded start commit starts there; one the remote does not have is a clear setup failure', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-a'));
    const first = await gitOut(remote, ['rev-list', '--max-parents=0', 'main']);
    const p = await repos.prepare(await job({ base_commit: first }));
    assert.equal(p.baseCommit, first);
    assert.equal(existsSync(join(p.workDir, 'later.txt')), false);
    await writeFile(join(lead, 'unpushed.txt'), 'only here\n');
    await gitOut(lead, ['add', 'unpushed.txt']);
    await gitOut(lead, ['commit', '-q', '-m', 'not pushed']);
    const unpushed = await gitOut(lead, ['rev-parse', 'HEAD']);
    await assert.rejects(repos.prepare(await job({ base_commit: unpushed })), (err: Error) => {
      assert.ok(err instanceof SetupFailed, String(err));
      assert.match(err.message, new RegExp(`${unpushed.slice(0, 12)} is not on the remote .*push the branch`));
      return true;
    });
    await gitOut(lead, ['push', '-q', 'origin', 'main']);
  });

  test('a remote out of reach is not a setup failure (the retry policy may try again): it says it could not clone, and leaves no clone', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-x'));
    await assert.rejects(repos.prepare(await job({ repo_remote: join(dir, 'no-such-remote.git') })), (err: Error) => {
      assert.ok(err instanceof RemoteError && !(err instanceof SetupFailed), String(err));
      assert.equal(err.kind, 'unreachable');
      assert.match(err.message, /could not clone .*no-such-remote\.git/);
      return true;
    });
    assert.equal(repos.clones, 0);
    assert.deepEqual(await readdir(join(dir, 'worker-x', 'repos')), [], 'no half clone left');
  });

  test('publish commits the agent\'s work and pushes the branch; a job based on it (on another worker) starts from the pushed branch', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-a'));
    const a = await job();
    const pa = await repos.prepare(a);
    await writeFile(join(pa.workDir, 'feature.txt'), 'the agent\'s work\n'); // left uncommitted, as agents do
    await repos.publish(a);
    const pushed = await remoteTip(`refs/heads/${a.branch}`);
    assert.equal(await gitOut(remote, ['show', `${pushed}:feature.txt`]), 'the agent\'s work');
    assert.equal(await gitOut(remote, ['rev-parse', `${pushed}^`]), pa.baseCommit, 'one commit on the base: the agent\'s');
    const ra = await row(a.id);
    assert.match(ra.diff_stat ?? '', /feature\.txt/);
    assert.equal(ra.git_note, null);
    assert.equal(existsSync(pa.workDir), false, 'the folder is removed, as on the hub');

    const other = new WorkerRepos(h.hub.ctx, join(dir, 'worker-b'));
    const c = await job();
    await setSetupBase(q(), c.id, `job:${a.id}`, Date.now());
    const pc = await other.prepare(c);
    assert.equal(await gitOut(pc.workDir, ['rev-parse', 'HEAD']), pushed, 'worker b starts from a\'s pushed branch');
    assert.equal(await readFile(join(pc.workDir, 'feature.txt'), 'utf8'), 'the agent\'s work\n');

    const d = await job();
    await setSetupBase(q(), d.id, 'branch:no-such-branch', Date.now());
    await assert.rejects(other.prepare(d), (err: Error) => err instanceof SetupFailed && /no-such-branch is not on the remote .*push it there/.test(err.message));

    // A later attempt of a on worker b: it continues a's pushed branch, its base kept.
    const again = await other.prepare(await row(a.id));
    assert.equal(await gitOut(again.workDir, ['rev-parse', 'HEAD']), pushed);
    assert.equal(again.baseCommit, pa.baseCommit);
  });

  test('a job depending on two workers\' jobs starts from the first\'s pushed branch with the second\'s merged in; the lane\'s diff of a worker\'s job reads the fetched branch', async () => {
    const w = new WorkerRepos(h.hub.ctx, join(dir, 'worker-d'));
    const [a, b] = [await job(), await job()];
    for (const [j, f] of [[a, 'dep-a.txt'], [b, 'dep-b.txt']] as const) {
      const p = await w.prepare(j);
      await writeFile(join(p.workDir, f), `${f}\n`);
      await w.publish(j);
    }
    const c = await job({ depends_on_json: JSON.stringify([a.id, b.id]) });
    const pc = await new WorkerRepos(h.hub.ctx, join(dir, 'worker-e')).prepare(c);
    assert.equal(await readFile(join(pc.workDir, 'dep-a.txt'), 'utf8'), 'dep-a.txt\n');
    assert.equal(await readFile(join(pc.workDir, 'dep-b.txt'), 'utf8'), 'dep-b.txt\n');
    assert.equal(await gitOut(pc.workDir, ['rev-parse', 'HEAD^1']), await remoteTip(`refs/heads/${a.branch}`), 'on a\'s branch, b merged in');
    assert.equal(pc.baseCommit, await gitOut(pc.workDir, ['rev-parse', 'HEAD']), 'its diff is measured from after the merges, as on the hub');

    const d = await diffOfJob(await row(a.id));
    assert.deepEqual(d.files.map((f) => f.path), ['dep-a.txt'], d.title);
    assert.match(d.title, new RegExp(`branch ${a.branch!.replace('/', '\\/')} against`));
  });

  test('two prepares at once on one repository (first time on this worker) both succeed, with one clone', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-c'));
    const [x, y] = [await job(), await job()];
    const [px, py] = await Promise.all([repos.prepare(x), repos.prepare(y)]);
    assert.equal(repos.clones, 1);
    assert.notEqual(px.workDir, py.workDir);
    assert.equal(await gitOut(px.workDir, ['rev-parse', '--abbrev-ref', 'HEAD']), x.branch);
    assert.equal(await gitOut(py.workDir, ['rev-parse', '--abbrev-ref', 'HEAD']), y.branch);
    const clones = await readdir(join(dir, 'worker-c', 'repos'));
    assert.equal(clones.length, 1);
    await repos.remove(await row(x.id));
    assert.equal(existsSync(px.workDir), false, 'remove: the worktree is gone');
    assert.equal(await gitOut(join(dir, 'worker-c', 'repos', clones[0]!), ['branch', '--list', x.branch!]), '', 'and its local branch');
    assert.ok(existsSync(py.workDir), 'the other job\'s worktree stays');
  });

  test('a push the remote refuses (its branch moved meanwhile) is a clear error; the remote keeps its branch', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-a'));
    const j = await job();
    const p = await repos.prepare(j);
    await writeFile(join(p.workDir, 'mine.txt'), 'worker\n');
    // Someone else pushes to the job's branch first.
    const elsewhere = await gitOut(lead, ['commit-tree', 'HEAD^{tree}', '-p', 'HEAD', '-m', 'pushed by someone else']);
    await gitOut(lead, ['push', '-q', 'origin', `${elsewhere}:refs/heads/${j.branch}`]);
    const theirs = await remoteTip(`refs/heads/${j.branch}`);
    await assert.rejects(repos.publish(j), (err: Error) => {
      assert.ok(err instanceof RemoteError, String(err));
      assert.match(err.message, new RegExp(`refused the push of ${j.branch!.replace('/', '\\/')}: .*Nothing was overwritten`));
      return true;
    });
    assert.equal(await remoteTip(`refs/heads/${j.branch}`), theirs);
    assert.match((await row(j.id)).git_note ?? '', /refused the push/);
  });

  test('the hub merges a worker\'s job: merge_queue and merge_branch fetch its branch from the remote first', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-a'));
    const j = await job({ title: 'worker feature' });
    const p = await repos.prepare(j);
    await writeFile(join(p.workDir, 'from-worker.txt'), 'made on a worker\n');
    await repos.publish(j);
    assert.equal(await gitOut(lead, ['branch', '--list', j.branch!]), '', 'the lead\'s repository does not have the branch yet');

    const queue = await h.call('merge_queue', {});
    const entry = queue.queue.find((e: { job_id: string }) => e.job_id === j.id);
    assert.ok(entry, `the worker's job is in the queue: ${JSON.stringify(queue)}`);
    assert.deepEqual(entry.files, ['from-worker.txt']);

    const r = await h.call('merge_branch', { job_id: j.id });
    assert.equal(r.merged, true, r.message);
    assert.equal(await readFile(join(lead, 'from-worker.txt'), 'utf8'), 'made on a worker\n');
    assert.equal(await gitOut(lead, ['rev-parse', j.branch!]), await remoteTip(`refs/heads/${j.branch}`));
  });

  test('a local branch that went another way than the worker\'s is never overwritten: the merge is refused, saying so', async () => {
    const repos = new WorkerRepos(h.hub.ctx, join(dir, 'worker-a'));
    const j = await job();
    const p = await repos.prepare(j);
    await writeFile(join(p.workDir, 'w.txt'), 'worker\n');
    await repos.publish(j);
    await gitOut(lead, ['branch', j.branch!, 'main']);
    await gitOut(lead, ['commit', '-q', '--allow-empty', '-m', 'elsewhere']); // main moves on
    await gitOut(lead, ['branch', '-f', j.branch!, 'HEAD']);
    const local = await gitOut(lead, ['rev-parse', j.branch!]);
    const err = await h.callRaw('merge_branch', { job_id: j.id });
    assert.equal(err.isError, true, err.text);
    assert.match(err.text, /went different ways; it was not overwritten/);
    assert.equal(await gitOut(lead, ['rev-parse', j.branch!]), local, 'the local branch is as it was');
    const queue = await h.call('merge_queue', {});
    assert.ok(queue.skipped.some((s: { job_id: string; reason: string }) => s.job_id === j.id && /went different ways/.test(s.reason)), JSON.stringify(queue.skipped));
  });
});
