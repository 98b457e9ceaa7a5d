// End-to-end: where a job's worktree lives. New worktrees are created outside the repository
// (<worktreesDir>/<repo>-<hash>/<branch-slug>), listed by git, and removed with their empty
// folder when the job ends (here: on cancel). A job whose worktree an older version placed under
// <repo>/.overseer-worktrees/ still resumes there and is cleaned up the same way.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, sep } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { initRepo } from '../helpers/git.js';
import { cwdOf } from '../helpers/steps.js';
import { repoWorktreesDir } from '../../src/git/worktree.js';
import type { Script, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { updateJob } from '../../src/store/sql/jobs.js';
import { job } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

/** The process's working directory as Claude Code last reported it to the model (the system
 * prompt keeps the first run's text on resume; this environment note follows the real cwd). */
const processCwd = (ctx: StepContext): string => [...JSON.stringify(ctx.body.messages).matchAll(/Primary working directory: ([^\\"\s]+)/g)].pop()?.[1] ?? '.';

const worktreeList = (repo: string): string => execFileSync('git', ['worktree', 'list', '--porcelain'], { cwd: repo, encoding: 'utf8' });

describe('worktree placement', () => {
  test('a worktree job works outside the repository; cancel removes the worktree and its empty folder', { timeout: 120_000 }, async () => {
    const h = await startTestHub({ scripts: { slow: [{ delayMs: 60_000, text: 'never' }] } });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'), { 'test/a.test.js': 'x\n' });
    const { job_id } = await h.call('spawn_agent', { prompt: '@script:slow', cwd: repo, worktree: true, title: 'Slow one' });
    // work_dir is set while the job runs, with no event of its own: check the row until it is there.
    const wt = await eventually('the worktree', async () => { const j = await job(h.hub, job_id); return j.status === 'running' && j.work_dir !== null ? j.work_dir : undefined; }, 60_000);
    const slot = repoWorktreesDir(join(h.dir, 'worktrees'), repo);
    assert.ok(wt.startsWith(slot + sep), `${wt} is under ${slot}`);
    assert.ok(!wt.startsWith(repo + sep), 'outside the repository');
    assert.ok(existsSync(join(wt, 'test', 'a.test.js')), 'the worktree is checked out');
    assert.match(worktreeList(repo), new RegExp(`^worktree ${wt.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: repo, encoding: 'utf8' }), '', 'the main checkout stays clean');

    await h.call('cancel_agent', { job_id });
    await waitForJob(h.hub, job_id, (j) => j.status === 'cancelled' && j.diff_stat !== null, 30_000);
    assert.equal(existsSync(wt), false, 'worktree removed');
    assert.equal(existsSync(slot), false, 'empty per-repository folder removed');
    assert.doesNotMatch(worktreeList(repo), new RegExp(job_id));
  });

  test('an old-style worktree under <repo>/.overseer-worktrees still resumes there and is cleaned', { timeout: 120_000 }, async () => {
    const cwds: string[] = [];
    const script: Script = (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'one.txt'), content: '1\n' } }] };
      if (ctx.step === 2) {
        cwds.push(processCwd(ctx));
        return { tools: [{ name: 'Write', input: { file_path: join(processCwd(ctx), 'two.txt'), content: '2\n' } }] };
      }
      return { text: 'done' };
    };
    const h = await startTestHub({ scripts: { old: script } });
    hubs.push(h);
    const repo = await initRepo(join(h.dir, 'repo'));
    const { job_id } = await h.call('spawn_agent', { prompt: '@script:old', cwd: repo, worktree: true, title: 'Old layout' });
    const first = await waitForJob(h.hub, job_id, (j) => j.status === 'succeeded' && j.diff_stat !== null, 60_000);
    const branch = first.branch!;

    // As an older Overseer left it: the job's worktree under <repo>/.overseer-worktrees/<job id>.
    const old = join(repo, '.overseer-worktrees', job_id);
    execFileSync('git', ['worktree', 'add', '-q', old, branch], { cwd: repo });
    await updateJob(h.hub.ctx.sql.db, job_id, { work_dir: old }, Date.now());

    await h.call('resume_agent', { job_id, message: 'write two.txt' });
    await waitForJob(h.hub, job_id, (j) => j.status === 'succeeded' && j.ended_at !== null && j.diff_stat !== null && j.diff_stat.includes('two.txt'), 60_000);
    assert.deepEqual(cwds, [old], 'the resumed run worked in the old worktree');
    assert.equal(execFileSync('git', ['show', `${branch}:two.txt`], { cwd: repo, encoding: 'utf8' }), '2\n');
    assert.equal(existsSync(old), false, 'old worktree removed');
    assert.equal(existsSync(join(repo, '.overseer-worktrees')), false, 'empty .overseer-worktrees removed');
    assert.doesNotMatch(worktreeList(repo), /\.overseer-worktrees/);
  });
});
