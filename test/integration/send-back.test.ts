// Work goes back to its owner (issue 31 point 2, src/branches/sendBack.ts) on a real hub over real
// git repositories, with children that start no process (ScriptedLauncher: each turn writes and
// commits files in the child's worktree). A merge whose checks fail, or that conflicts, resumes
// the job's own agent with the checks' output or the conflicting files; when it finishes its
// branch is merged again; after the bound the person is asked and nothing merges.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { makeTempDir } from '../helpers/claude.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { ScriptedLauncher, type ScriptedTurn } from '../helpers/fakeLauncher.js';
import { eventually, waitEnded } from '../helpers/wait.js';
import { events, job, rows } from '../helpers/state.js';
import type { SpawnCmd } from '../../src/launch/types.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { recordFailure, takeRound } from '../../src/store/sql/sendBacks.js';

/** What the scripted agent of a job does with each prompt; keyed by a word in its task. */
type Agent = (prompt: string, cmd: SpawnCmd) => ScriptedTurn | Promise<ScriptedTurn>;

/**
 * Scripted agents keyed by a word of their task (`task <key>` in the prompt). A resumed session's
 * prompt does not repeat its task: its agent is found by the worktree it runs in.
 */
function scriptedAgents(): { agents: Map<string, Agent>; launcher: ScriptedLauncher } {
  const agents = new Map<string, Agent>();
  const byCwd = new Map<string, Agent>();
  const launcher = new ScriptedLauncher((prompt, cmd) => {
    const key = [...agents.keys()].find((k) => prompt.includes(`task ${k}`));
    const a = (key ? agents.get(key) : undefined) ?? byCwd.get(cmd.cwd);
    if (key && a) byCwd.set(cmd.cwd, a);
    return a ? a(prompt, cmd) : { resultText: 'done' };
  });
  return { agents, launcher };
}

describe('send back', () => {
  let h: TestHub;
  let repo = '';
  const { agents, launcher } = scriptedAgents();

  before(async () => {
    const dir = await makeTempDir('ovs-sendback');
    repo = await initRepo(join(dir, 'repo'), { 'app.txt': 'start\n', 'check.sh': 'exit 0\n', 'shared.txt': 'alpha\nbeta\ngamma\n' });
    h = await startTestHub({ project: repo, processes: launcher, progressEveryMs: 100 });
  });
  after(async () => { await h?.stop(); });

  const tip = (ref = 'main') => gitOut(repo, ['rev-parse', ref]);
  const kinds = async (id: string) => (await events(h.hub, id)).map((e) => e.kind);
  const mergeRows = (id: string) => rows(h.hub, sql<{ target: string; commit_sha: string }>`SELECT target, commit_sha FROM job_merges WHERE job_id = ${id}`);
  const prompts = (jobCwd: (c: SpawnCmd) => boolean) => launcher.children.filter((c) => jobCwd(c.cmd)).map((c) => c.prompt ?? '');
  async function commitOnMain(file: string, content: string): Promise<void> {
    await writeFile(join(repo, file), content);
    await gitOut(repo, ['add', file]);
    await gitOut(repo, ['commit', '-q', '-m', `main: ${file}`]);
  }
  async function spawnFinished(key: string, checks: string[]): Promise<{ id: string; wd: string }> {
    const s = await h.call('spawn_agent', { prompt: `task ${key}`, title: key, worktree: true, checks });
    const w = await waitEnded(h, [s.job_id]);
    assert.equal(w.done[0]?.status, 'succeeded', JSON.stringify(w.done[0]));
    return { id: s.job_id, wd: (await job(h.hub, s.job_id)).work_dir! };
  }

  test('a failing check sends the branch back with the check\'s output; the agent fixes it; on round 2 the checks pass and it merges', async () => {
    agents.set('fixer', (prompt) => prompt.includes('NOT merged')
      ? { writeFiles: { 'app.txt': 'fixed\n' }, gitCommit: 'fix app.txt' }
      : { writeFiles: { 'app.txt': 'broken\n' }, gitCommit: 'app.txt' });
    const j = await spawnFinished('fixer', ['command:sh check.sh']);
    // The check main has now fails on the job's app.txt: only the merged result shows it.
    await commitOnMain('check.sh', 'grep -q fixed app.txt || { echo "APP-NOT-FIXED: $(cat app.txt)"; exit 1; }\n');
    const before = await tip();
    const r = await h.call('merge_branch', { job_id: j.id, on_failure: 'send_back' });
    assert.equal(r.merged, false);
    assert.equal(r.reason, 'checks_failed');
    assert.equal(r.send_back?.sent, true, r.message);
    assert.deepEqual([r.send_back.round, r.send_back.max], [1, 2]);
    assert.equal(await tip(), before, 'nothing merged while the check fails');
    // The agent's branch is merged again when its resumed session ends, and this time it passes.
    const merged = await eventually('the re-merge after the send-back', async () => (await mergeRows(j.id))[0], 60_000);
    assert.equal(merged.target, 'main');
    assert.equal(await tip(), merged.commit_sha);
    assert.equal(await readFile(join(repo, 'app.txt'), 'utf8'), 'fixed\n');
    const resumed = prompts((c) => c.cwd === j.wd).find((p) => p.includes('NOT merged'));
    assert.ok(resumed, 'the agent was resumed with the send-back message');
    assert.match(resumed, /APP-NOT-FIXED: broken/, 'the failing check\'s output is in its message');
    assert.match(resumed, /round 1 of 2/);
    const k = await kinds(j.id);
    assert.ok(k.includes('sent_back') && k.includes('resumed') && k.includes('merged'), k.join(','));
    const g = await h.call('get_agent', { job_id: j.id });
    assert.deepEqual(g.send_back, { round: 1, max: 2, status: 'merged', reason: 'checks_failed' });
  });

  test('past the bound: after 2 rounds that do not fix it the person is asked, and nothing merges', async () => {
    // Passes in the agent's own worktree (on its branch), fails on the merged result (a detached scratch worktree).
    agents.set('stuck', (prompt) => prompt.includes('NOT merged') ? { resultText: 'I tried' } : { writeFiles: { 'stuck.txt': 'x\n' }, gitCommit: 'stuck' });
    const j = await spawnFinished('stuck', ['command:git symbolic-ref -q HEAD >/dev/null || { echo ON-A-DETACHED-HEAD; exit 1; }']);
    const before = await tip();
    const r = await h.call('merge_branch', { job_id: j.id, on_failure: 'send_back' });
    assert.equal(r.send_back?.round, 1, r.message);
    const asked = await eventually('the question to the person', async () => {
      const g = await h.call('get_agent', { job_id: j.id });
      return g.status === 'succeeded' && g.send_back?.status === 'asked' ? g.send_back : undefined;
    }, 60_000);
    assert.equal(asked.round, 2);
    const reqs = (await h.call('list_requests', {})).requests as { request_id: string; summary: string }[];
    const q = reqs.find((x) => x.request_id === asked.request_id);
    assert.ok(q, JSON.stringify(reqs));
    assert.match(q.summary, new RegExp(`${j.id}.*after 2 round`));
    assert.equal(await tip(), before, 'nothing merged');
    assert.equal((await mergeRows(j.id)).length, 0);
    const k = await kinds(j.id);
    assert.equal(k.filter((x) => x === 'sent_back').length, 2);
    assert.ok(k.includes('send_back_bound'));
    assert.match(prompts((c) => c.cwd === j.wd).filter((p) => p.includes('NOT merged'))[1] ?? '', /round 2 of 2[\s\S]*ON-A-DETACHED-HEAD/);
    // Sending it back by hand now asks nobody new and resumes nothing.
    const again = await h.call('send_back', { job_id: j.id });
    assert.equal(again.sent, false);
    assert.equal(again.request_id, asked.request_id);
    assert.equal((await h.call('get_agent', { job_id: j.id })).status, 'succeeded');
  });

  test('a conflicting branch is sent back with the target merged in and the conflicts left; the agent resolves them and it merges', async () => {
    let seen = '';
    agents.set('resolver', async (prompt, cmd) => {
      if (!prompt.includes('NOT merged')) return { writeFiles: { 'shared.txt': 'alpha\nbeta by the agent\ngamma\n' }, gitCommit: 'beta' };
      seen = await readFile(join(cmd.cwd, 'shared.txt'), 'utf8');
      return { writeFiles: { 'shared.txt': 'alpha\nbeta by main and by the agent\ngamma\n' }, gitCommit: 'resolve' };
    });
    const j = await spawnFinished('resolver', []);
    await commitOnMain('shared.txt', 'alpha\nbeta by main\ngamma\n');
    const r = await h.call('merge_branch', { job_id: j.id, on_failure: 'send_back' });
    assert.equal(r.reason, 'conflict');
    assert.deepEqual(r.send_back?.files, ['shared.txt'], r.message);
    const merged = await eventually('the re-merge after the conflict was resolved', async () => (await mergeRows(j.id))[0], 60_000);
    assert.match(seen, /<<<<<<<[\s\S]*beta by the agent[\s\S]*=======[\s\S]*beta by main[\s\S]*>>>>>>>/, 'the agent found the conflict left in its worktree');
    assert.equal(await tip(), merged.commit_sha);
    assert.equal(await readFile(join(repo, 'shared.txt'), 'utf8'), 'alpha\nbeta by main and by the agent\ngamma\n');
    const resumed = prompts((c) => c.cwd === j.wd).find((p) => p.includes('NOT merged')) ?? '';
    assert.match(resumed, /- shared\.txt/);
  });

  test('conflict markers left in the branch: never merged (no checks at all); the next round says where they are, and it merges once they are gone', async () => {
    agents.set('marker', async (prompt) => {
      if (!prompt.includes('NOT merged')) return { writeFiles: { 'marks.txt': 'one\nagent two\nthree\n' }, gitCommit: 'marks' };
      // Round 1: commits the conflicted file as it is, markers and all. Round 2 (told about the markers): resolves it.
      if (!prompt.includes('no conflict markers left')) return { gitCommit: 'resolved (not really)' };
      return { writeFiles: { 'marks.txt': 'one\nagent and main two\nthree\n' }, gitCommit: 'resolved' };
    });
    const j = await spawnFinished('marker', []);
    await commitOnMain('marks.txt', 'one\nmain two\nthree\n');
    const before = await tip();
    const r = await h.call('merge_branch', { job_id: j.id, on_failure: 'send_back' });
    assert.equal(r.reason, 'conflict');
    assert.deepEqual(r.send_back?.files, ['marks.txt'], r.message);
    // The first re-merge finds the markers the agent committed: refused, and the job goes back for round 2.
    const refused = await eventually('the re-merge refused over the markers', async () => (await events(h.hub, j.id)).find((e) => e.kind === 'merge_refused_markers'), 60_000);
    assert.deepEqual((JSON.parse(refused.data_json ?? '{}') as { files: string[] }).files, ['marks.txt']);
    assert.equal(await tip(), before, 'a branch with conflict markers was not merged');
    const merged = await eventually('the merge after the markers were removed', async () => (await mergeRows(j.id))[0], 60_000);
    assert.equal(await tip(), merged.commit_sha);
    assert.equal(await readFile(join(repo, 'marks.txt'), 'utf8'), 'one\nagent and main two\nthree\n');
    const round2 = prompts((c) => c.cwd === j.wd).find((p) => p.includes('no conflict markers left')) ?? '';
    assert.match(round2, /marks\.txt:\d+: <<<<<<< /, 'the agent is told where the markers are');
    assert.match(round2, /round 2 of 2/);
    const sent = (await events(h.hub, j.id)).filter((e) => e.kind === 'sent_back');
    assert.equal(sent.length, 2);
  });

  test('refused, nothing changed: a job still running, one without a worktree, one with no failed merge, one whose worktree and branch were removed', async () => {
    agents.set('hanger', () => ({ hang: true }));
    const live = await h.call('spawn_agent', { prompt: 'task hanger', title: 'hanger', worktree: true });
    await launcher.launched((c) => c.prompt?.includes('hanger') ?? false);
    await assert.rejects(h.call('send_back', { job_id: live.job_id }), /still running/);
    await h.call('cancel_agent', { job_id: live.job_id });

    const plain = await h.call('spawn_agent', { prompt: 'task plain', title: 'plain' });
    await waitEnded(h, [plain.job_id]);
    await assert.rejects(h.call('send_back', { job_id: plain.job_id }), /did not work in a worktree of its own/);

    agents.set('clean', () => ({ writeFiles: { 'clean.txt': 'c\n' }, gitCommit: 'clean' }));
    const clean = await spawnFinished('clean', []);
    await assert.rejects(h.call('send_back', { job_id: clean.id }), /no failed merge to send back: merge it first/);

    agents.set('removed', () => ({ writeFiles: { 'removed.txt': 'r\n' }, gitCommit: 'r' }));
    const gone = await spawnFinished('removed', ['command:git symbolic-ref -q HEAD >/dev/null || exit 1']);
    const r = await h.call('merge_branch', { job_id: gone.id }); // on_failure: stop (the default): recorded, not sent
    assert.equal(r.reason, 'checks_failed');
    assert.equal(r.send_back, undefined);
    assert.equal((await h.call('get_agent', { job_id: gone.id })).send_back.status, 'failed');
    const branch = (await h.call('get_agent', { job_id: gone.id })).branch as string;
    await gitOut(repo, ['branch', '-D', branch]);
    await assert.rejects(h.call('send_back', { job_id: gone.id }), /worktree was removed together with its branch .*Spawn the task again/);
    const g = await h.call('get_agent', { job_id: gone.id });
    assert.deepEqual([g.status, g.send_back.round, g.send_back.status], ['succeeded', 0, 'failed'], 'nothing changed');
    assert.ok(!(await kinds(gone.id)).includes('sent_back'));
  });
});

describe('send back from the queue, the CLI, and across a hub restart', () => {
  let h: TestHub;
  let repo = '';
  const { agents, launcher } = scriptedAgents();
  before(async () => {
    const dir = await makeTempDir('ovs-sendback-q');
    repo = await initRepo(join(dir, 'repo'), { 'app.txt': 'start\n', 'check.sh': 'exit 0\n' });
    h = await startTestHub({ project: repo, processes: launcher });
  });
  after(async () => { await h?.stop(); });
  const merges = (id: string) => rows(h.hub, sql<{ commit_sha: string }>`SELECT commit_sha FROM job_merges WHERE job_id = ${id}`);
  async function spawnFinished(key: string, checks: string[]): Promise<string> {
    const s = await h.call('spawn_agent', { prompt: `task ${key}`, title: key, worktree: true, checks });
    const w = await waitEnded(h, [s.job_id]);
    assert.equal(w.done[0]?.status, 'succeeded', JSON.stringify(w.done[0]));
    return s.job_id as string;
  }

  test('queue --ship --on-failure send-back merges what passes, sends the failing branch back and goes on; it merges when its agent is done', async () => {
    agents.set('passer', () => ({ writeFiles: { 'p.txt': 'p\n' }, gitCommit: 'p' }));
    agents.set('failer', (prompt) => prompt.includes('NOT merged') ? { writeFiles: { 'app.txt': 'fixed\n' }, gitCommit: 'fix' } : { writeFiles: { 'app.txt': 'broken\n' }, gitCommit: 'app' });
    const p = await spawnFinished('passer', []);
    const f = await spawnFinished('failer', ['command:sh check.sh']);
    await writeFile(join(repo, 'check.sh'), 'grep -q fixed app.txt || { echo NOT-FIXED; exit 1; }\n');
    await gitOut(repo, ['commit', '-qam', 'stricter check']);
    const bad = await runOverseer(h.home, ['merge', f, '--on-failure', 'later']);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--on-failure "later": use stop or send-back/);
    const ship = await runOverseer(h.home, ['queue', '--ship', '--on-failure', 'send-back', '--json']);
    assert.equal(ship.code, 0, ship.stderr);
    const r = JSON.parse(ship.stdout);
    assert.deepEqual(r.merged.map((m: { job_id: string }) => m.job_id), [p]);
    assert.deepEqual(r.carried.map((c: { job_id: string; reason: string }) => [c.job_id, c.reason]), [[f, 'checks_failed']]);
    assert.match(r.carried[0].message, /sent back to its agent \(round 1 of 2\)/);
    assert.equal(r.failed, undefined);
    const m = await eventually('the sent-back branch merged', async () => (await merges(f))[0], 60_000);
    assert.equal(await gitOut(repo, ['rev-parse', 'main']), m.commit_sha);
    assert.equal(await readFile(join(repo, 'app.txt'), 'utf8'), 'fixed\n');
    const refused = await runOverseer(h.home, ['send-back', p]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /no failed merge to send back/);
  });

  test('overseer send-back after a merge that stopped; a hub restarted between the agent\'s end and the re-merge merges it when it starts', async () => {
    agents.set('late', (prompt) => prompt.includes('NOT merged') ? { writeFiles: { 'late.txt': 'fixed\n' }, gitCommit: 'fix' } : { writeFiles: { 'late.txt': 'broken\n' }, gitCommit: 'late' });
    const id = await spawnFinished('late', ['command:grep -q fixed late.txt || git symbolic-ref -q HEAD >/dev/null']);
    const r = await runOverseer(h.home, ['merge', id, '--json']);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(JSON.parse(r.stdout).reason, 'checks_failed');
    const sent = await runOverseer(h.home, ['send-back', id]);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(sent.stdout, /sent back to its agent \(round 1 of 2\)/);
    await eventually('the re-merge', async () => (await merges(id))[0], 60_000);

    // The same state once more, as a hub that stopped right after the agent's end leaves it: sent back (out), the job succeeded.
    const again = await spawnFinished('late', ['command:grep -q fixed late.txt || git symbolic-ref -q HEAD >/dev/null']);
    await recordFailure(h.hub.ctx.sql.db, again, { reason: 'checks_failed', detail: { target: 'main', failed_checks: [{ check: 'x' }] }, options: { mode: 'merge' }, maxRounds: 2, now: Date.now() });
    assert.equal(await takeRound(h.hub.ctx.sql.db, again, Date.now()), 1);
    // late.txt was 'broken' on its branch; fix it there as its agent would have, then restart.
    const wd = (await job(h.hub, again)).work_dir!;
    await gitOut(repo, ['worktree', 'add', '-q', wd, (await job(h.hub, again)).branch!]);
    await writeFile(join(wd, 'late.txt'), 'fixed\n');
    await gitOut(wd, ['commit', '-qam', 'fixed while no hub ran']);
    await gitOut(repo, ['worktree', 'remove', wd]);
    await h.stop({ keep: true });
    h = await startTestHub({ dir: h.dir, project: repo, processes: launcher });
    const m = await eventually('the re-merge by the new hub', async () => (await merges(again))[0], 60_000);
    assert.equal(await gitOut(repo, ['rev-parse', 'main']), m.commit_sha);
    assert.equal((await h.call('get_agent', { job_id: again })).send_back.status, 'merged');
  });
});
