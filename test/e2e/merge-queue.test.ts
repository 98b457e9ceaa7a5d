// End-to-end (a real hub, real claude children on the fake model, real git): two worktree jobs
// finish with real commits on their branches; the merge queue lists them and ships both into the
// repository's branch, the job's command check running again on the merged result
// (docs/merge.md).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { initRepo, gitOut } from '../helpers/git.js';
import { waitForJob } from '../helpers/wait.js';
import { finishStep } from '../helpers/holder.js';
import type { Script, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { events } from '../helpers/state.js';

const { hubWith } = scriptedHubs();

const processCwd = (ctx: StepContext): string => [...JSON.stringify(ctx.body.messages).matchAll(/Primary working directory: ([^\\"\s]+)/g)].pop()?.[1] ?? '.';

const writer = (file: string, text: string): Script => (ctx) => {
  if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(processCwd(ctx), file), content: text } }] };
  if (ctx.step === 1) return finishStep(`wrote ${file}`);
  return { text: 'done' };
};

describe('merge queue with real agents', () => {
  test('two finished worktree jobs are queued and shipped; the check runs on the merged result', { timeout: 240_000 }, async () => {
    const h = await hubWith({ small: writer('small.txt', 'small\n'), large: writer('large.txt', 'l1\nl2\nl3\nl4\n') });
    const repo = await initRepo(join(h.dir, 'repo'));
    const spawn = (script: string, checks: string[] = []) => h.call('spawn_agent', { prompt: `@script:${script}`, title: script, cwd: repo, worktree: true, checks });
    // the large job's check runs at its end in its worktree, and again at the merge on the merged result
    const large = await spawn('large', ['command:test -f large.txt']);
    const small = await spawn('small');
    const jl = await waitForJob(h.hub, large.job_id, (j) => j.status === 'succeeded' && j.diff_stat !== null, 180_000);
    const js = await waitForJob(h.hub, small.job_id, (j) => j.status === 'succeeded' && j.diff_stat !== null, 180_000);
    assert.equal(existsSync(jl.work_dir!), false, 'the worktree folders were removed at the end of the jobs');

    const q = await h.call('merge_queue', {});
    assert.deepEqual(q.queue.map((e: { job_id: string }) => e.job_id), [js.id, jl.id], 'smallest first');
    assert.equal(q.queue[0].target, 'main');
    const r = await h.call('merge_queue', { ship: true });
    assert.deepEqual(r.merged.map((m: { job_id: string }) => m.job_id), [js.id, jl.id], r.message);
    assert.equal(r.failed, undefined);
    assert.equal(readFileSync(join(repo, 'small.txt'), 'utf8'), 'small\n');
    assert.equal(readFileSync(join(repo, 'large.txt'), 'utf8'), 'l1\nl2\nl3\nl4\n');
    assert.equal(await gitOut(repo, ['rev-parse', 'main']), r.merged[1].commit);
    const ev = (await events(h.hub, jl.id)).find((e) => e.kind === 'merged');
    assert.deepEqual(JSON.parse(ev!.data_json!).checks, ['command:test -f large.txt']);
    assert.deepEqual((await h.call('merge_queue', {})).queue, []);
    await assert.rejects(h.call('merge_branch', { job_id: js.id }), /already merged/);
  });
});
