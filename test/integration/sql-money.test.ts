// Money, merges and takeover over the Kysely layer (src/store/sql/branches.ts, usage.ts,
// takeover.ts; src/branches/mergeJobs.ts on top), on SQLite and PostgreSQL. The decisions: a job's
// branch is recorded merged once — two processes (each its own connection) recording the same
// job at once: one records it, the other is given the first merge, and one `merged` event is
// written; two merges of one job at once through the service: one merges (git and the record),
// the other is told it was already merged and git is not run again. Usage rows added by two
// processes at once all count in the report's totals. Also the reads that moved with them
// (the merge queue's rows, id prefixes, unclosed worktrees, taken-over marks) on both databases.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addEvent, insertJob, updateJob } from '../../src/store/sql/jobs.js';
import { jobIdsWithPrefix, mergesOf, unclosedWorktrees, unmergedBranches, type NewMerge } from '../../src/store/sql/branches.js';
import { markedJobs } from '../../src/store/sql/takeover.js';
import { usageReport } from '../../src/money/usageReport.js';
import { MergeService } from '../../src/branches/mergeJobs.js';
import { Attachments, TAKEN_OVER } from '../../src/takeover/attachments.js';
import { InvalidStateError } from '../../src/errors.js';
import type { Racer } from '../helpers/sqlRacers.js';
import { newJob } from '../helpers/budgetDb.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { dialectSuite } from '../helpers/sqlDialect.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tmp = (p: string): string => { const d = mkdtempSync(join(tmpdir(), p)); dirs.push(d); return d; };

const NOW = 1_764_000_000_000;
const merge = (jobId: string, commit: string): NewMerge => ({
  job_id: jobId, repo_root: '/repo', branch: `ob/${jobId}`, target: 'main', mode: 'merge', strategy: null, commit_sha: commit, previous: 'p'.repeat(40), checks_json: '[]', merged_at: NOW,
});

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`money, merges and takeover on ${dialect}`, () => {
    const layer = dialectSuite(dialect, {
      prefix: 'overseer-sql-money-',
      racers: { n: 2, warm: [{ op: 'call', module: 'branches', fn: 'mergesOf', args: ['nobody'] }, { op: 'call', module: 'usage', fn: 'usageOfJob', args: ['nobody'] }] },
    });
    const { racers } = layer;

    test('a job is recorded merged once: of two processes recording it at once, one does and the other is given the first merge', async () => {
      for (let round = 0; round < 12; round++) {
        const id = `j-m${round}`;
        await insertJob(layer.s.db, newJob(id, { status: 'succeeded', worktree: 1, branch: `ob/${id}`, repo_root: '/repo' }), NOW);
        const answers = await Promise.all(racers.map((r, i) => r.send({ op: 'call', module: 'branches', fn: 'recordMerge', args: [merge(id, String(i).repeat(40)), { by: r.pid }] })));
        const values = answers.map((a) => a.value as { recorded: boolean; first?: { commit_sha: string } });
        assert.equal(values.filter((v) => v.recorded).length, 1, `round ${round}: ${JSON.stringify(values)}`);
        const rows = await mergesOf(layer.s.db, id);
        assert.equal(rows.length, 1, `round ${round}: one row`);
        const loser = values.find((v) => !v.recorded)!;
        assert.equal(loser.first!.commit_sha, rows[0]!.commit_sha, 'the one not recorded is given the merge that was');
        const events = await layer.s.db.selectFrom('events').select('data_json').where('job_id', '=', id).where('kind', '=', 'merged').execute();
        assert.equal(events.length, 1, `round ${round}: one merged event`);
      }
    });

    test('two merges of one job at once through the service: one merges, the other is told it was already merged', async () => {
      const root = await initRepo(tmp('overseer-money-repo-'));
      await gitOut(root, ['checkout', '-q', '-b', 'ob/j-twice']);
      writeFileSync(join(root, 'work.txt'), 'done\n');
      await gitOut(root, ['add', 'work.txt']);
      await gitOut(root, ['commit', '-q', '-m', 'the job\'s work']);
      await gitOut(root, ['checkout', '-q', 'main']);
      await insertJob(layer.s.db, newJob('j-twice', { status: 'succeeded', worktree: 1, branch: 'ob/j-twice', repo_root: root, cwd: root }), NOW);
      const svc = () => new MergeService({ sql: layer.s.db, now: () => NOW, worktree: { copy: [], setup: [], setupTimeoutS: 60, detect: false }, env: process.env, bus: { emit: () => undefined } });
      const results = await Promise.allSettled([svc().mergeJob('j-twice'), svc().mergeJob('j-twice')]);
      const ok = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      assert.equal(ok.length, 1, JSON.stringify(results));
      assert.equal((ok[0] as PromiseFulfilledResult<{ merged: boolean }>).value.merged, true);
      assert.equal(refused.length, 1);
      assert.ok(refused[0]!.reason instanceof InvalidStateError && /was already merged: ob\/j-twice into main at [0-9a-f]{12}/.test(refused[0]!.reason.message), String(refused[0]!.reason));
      assert.equal((await mergesOf(layer.s.db, 'j-twice')).length, 1);
      const mergeCommits = (await gitOut(root, ['rev-list', '--merges', 'main'])).split('\n').filter(Boolean);
      assert.equal(mergeCommits.length, 1, 'git merged once');
      assert.ok(!(await unmergedBranches(layer.s.db)).some((j) => j.id === 'j-twice'), 'out of the queue');
    });

    test('usage rows added by two processes at once all count: the report\'s totals add up', async () => {
      await insertJob(layer.s.db, newJob('j-use', { project: 'money' }), NOW);
      const before = (await usageReport(layer.s.db, { project: 'money' })).totals;
      const K = 40;
      const add = (r: Racer, i: number) => r.send({ op: 'call', module: 'usage', fn: 'addUsage', args: [{ jobId: 'j-use', kind: 'diagnosis', usage: { model: 'claude-haiku-4-5', costUsd: 0.001, tokens: { input: 10, output: 1 } }, now: NOW + i }] });
      await Promise.all(racers.map(async (r) => { for (let i = 0; i < K; i++) await add(r, i); }));
      const after = (await usageReport(layer.s.db, { project: 'money' })).totals;
      assert.equal(after.runs - before.runs, 2 * K);
      assert.equal(after.input_tokens - before.input_tokens, 2 * K * 10);
      assert.ok(Math.abs((after.cost_usd ?? 0) - (before.cost_usd ?? 0) - 2 * K * 0.001) < 1e-9, `cost ${after.cost_usd}`);
      // A run for a job id that names no job is the hub's (job_id null), not a dangling link.
      await racers[0]!.send({ op: 'call', module: 'usage', fn: 'addUsage', args: [{ jobId: 'j-none', kind: 'triage', usage: { costUsd: null, tokens: { input: 1, output: 1 } }, now: NOW }] });
      const hub = await layer.s.db.selectFrom('usage').selectAll().where('kind', '=', 'triage').execute();
      assert.deepEqual(hub.map((u) => [u.job_id, u.cost_unknown]), [[null, 1]]);
    });

    test('the reads that moved: queue rows, id prefixes, unclosed worktrees, taken-over marks', async () => {
      await insertJob(layer.s.db, newJob('j-pfx-a', { status: 'succeeded', worktree: 1, branch: 'ob/a', repo_root: '/r', work_dir: '/r/wt', base_commit: 'c'.repeat(40) }), NOW);
      await insertJob(layer.s.db, newJob('j-pfx-b', { status: 'failed', worktree: 1, branch: 'ob/b', repo_root: '/r', work_dir: '/r/wt2', base_commit: 'c'.repeat(40) }), NOW);
      await updateJob(layer.s.db, 'j-pfx-b', { status_message: TAKEN_OVER }, NOW);
      assert.deepEqual(await jobIdsWithPrefix(layer.s.db, 'j-pfx-', 5), ['j-pfx-a', 'j-pfx-b']);
      assert.deepEqual(await jobIdsWithPrefix(layer.s.db, 'j-pfx-b', 5), ['j-pfx-b']);
      assert.ok((await unmergedBranches(layer.s.db)).some((j) => j.id === 'j-pfx-a'));
      const unclosed = await unclosedWorktrees(layer.s.db);
      assert.ok(unclosed.includes('j-pfx-a') && unclosed.includes('j-pfx-b'), JSON.stringify(unclosed));
      await addEvent(layer.s.db, 'j-pfx-b', NOW + 5, 'attached', {});
      await addEvent(layer.s.db, 'j-pfx-b', NOW + 9, 'attached', {});
      const marked = await markedJobs(layer.s.db, TAKEN_OVER);
      assert.deepEqual(marked.filter((m) => m.id.startsWith('j-pfx')).map((m) => [m.id, m.status, Number(m.attached_at)]), [['j-pfx-b', 'failed', NOW + 9]]);
      const a = new Attachments();
      await a.load(layer.s.db, () => 0);
      assert.equal(a.get('j-pfx-b'), NOW + 9, 'a new hub finds the person\'s job, since the last attach');
    });
  });
}
