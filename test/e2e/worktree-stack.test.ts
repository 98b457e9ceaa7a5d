// End-to-end (a real hub, real claude children on the fake model, real git): dependencies carry
// context and code (docs/worktrees.md). A worktree job with one worktree dependency branches from
// its branch, with several the branches are merged first (a conflict fails the job as
// dependency_conflict, names the files and comes back to the lead as attention); its first
// message has "## Results of your dependencies"; base: <job id> stacks on a job and waits for it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { initRepo, gitOut, makeBareRemote } from '../helpers/git.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { finishStep } from '../helpers/holder.js';
import type { Script, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { job, row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith } = scriptedHubs();

/** The working directory Claude Code reports to the model (the worktree). */
const processCwd = (ctx: StepContext): string => [...JSON.stringify(ctx.body.messages).matchAll(/Primary working directory: ([^\\"\s]+)/g)].pop()?.[1] ?? '.';

/** Write `file` with `text` in the job's worktree, then finish with `result`. */
const writer = (file: string, text: string, result: string): Script => (ctx) => {
  if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(processCwd(ctx), file), content: text } }] };
  if (ctx.step === 1) return finishStep(result);
  return { text: 'done' };
};

describe('stacked dependencies', () => {
  test('a dependent worktree job starts from its dependencies\' merged branches and is told their results; a conflict is reported, not half-merged', { timeout: 240_000 }, async () => {
    const seen = new Map<string, { prompt: string; files: Record<string, string | undefined> }>();
    const look = (name: string): Script => (ctx) => {
      if (ctx.step === 0) {
        const dir = processCwd(ctx);
        const read = (f: string): string | undefined => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : undefined);
        seen.set(name, { prompt: ctx.userTexts.join('\n'), files: { 'shared.txt': read('shared.txt'), 'other.txt': read('other.txt') } });
        return finishStep(`${name} looked`);
      }
      return { text: 'done' };
    };
    const h = await hubWith({
      one: writer('shared.txt', 'one\n', 'wrote shared.txt saying one'),
      two: writer('shared.txt', 'two\n', 'wrote shared.txt saying two'),
      other: writer('other.txt', 'other\n', 'wrote other.txt for the parser'),
      merged: look('merged'), conflicted: look('conflicted'), based: look('based'),
    });
    const repo = await initRepo(join(h.dir, 'repo'));
    const spawn = (script: string, extra: Record<string, unknown> = {}) => h.call('spawn_agent', { prompt: `@script:${script}`, title: script, cwd: repo, worktree: true, ...extra });
    const one = await spawn('one');
    const two = await spawn('two');
    const other = await spawn('other');
    const merged = await spawn('merged', { depends_on: [one.job_id, other.job_id] });
    const conflicted = await spawn('conflicted', { depends_on: [one.job_id, two.job_id] });
    const based = await spawn('based', { base: other.job_id });
    assert.deepEqual((await job(h.hub, based.job_id)).depends_on_json, JSON.stringify([other.job_id]), 'base: <job id> makes it a dependency');

    const m = await waitForJob(h.hub, merged.job_id, (j) => j.status === 'succeeded' && j.diff_stat !== null, 180_000);
    const seenMerged = seen.get('merged')!;
    assert.deepEqual(seenMerged.files, { 'shared.txt': 'one\n', 'other.txt': 'other\n' }, 'both dependencies\' commits are in the worktree at the first request');
    const jOne = await job(h.hub, one.job_id);
    const jOther = await job(h.hub, other.job_id);
    assert.match(seenMerged.prompt, /## Results of your dependencies/);
    for (const d of [jOne, jOther]) {
      assert.ok(seenMerged.prompt.includes(`### ${d.title} (${d.id}, succeeded)`), `names ${d.id}`);
      assert.ok(seenMerged.prompt.includes(`Branch: ${d.branch}`), `gives ${d.id}'s branch`);
      assert.ok(seenMerged.prompt.includes(d.result!), `quotes ${d.id}'s result`);
    }
    assert.match(seenMerged.prompt, new RegExp(`starts from ${jOne.branch}.*with ${jOther.branch} merged in`));
    // Git agrees: the dependent branch contains both dependency branches, and its own diff excludes theirs.
    for (const b of [jOne.branch!, jOther.branch!]) await gitOut(repo, ['merge-base', '--is-ancestor', b, m.branch!]);
    assert.equal(m.diff_stat, '(no changes)', 'the merged dependencies are not counted as the job\'s own changes');

    const c = await waitForJob(h.hub, conflicted.job_id, (j) => j.status === 'failed', 60_000);
    assert.equal(c.failure_class, 'dependency_conflict');
    assert.match(c.error!, new RegExp(`merging ${(await job(h.hub, two.job_id)).branch} \\(${two.job_id}\\) into ${jOne.branch} \\(${one.job_id}\\) conflicts in shared\\.txt`));
    assert.equal(seen.has('conflicted'), false, 'the conflicted job\'s child never started');
    const w = await h.call('wait_for_agents', { job_ids: [conflicted.job_id], timeout_s: 5 });
    const item = w.attention.find((a: { kind: string }) => a.kind === 'dependency_conflict');
    assert.ok(item, `attention for the lead: ${JSON.stringify(w.attention)}`);
    assert.equal(item.job_id, conflicted.job_id);
    assert.match(item.detail, /shared\.txt/);

    await waitForJob(h.hub, based.job_id, (j) => j.status === 'succeeded', 60_000);
    assert.equal(seen.get('based')!.files['other.txt'], 'other\n', 'base: <job id> starts from that job\'s branch');
    assert.equal(seen.get('based')!.files['shared.txt'], undefined);
  });

  test('a dependency is settled once its worktree is committed and closed: its dependent waits, and so does wait_for_agents', { timeout: 120_000 }, async () => {
    const seen = new Map<string, string | undefined>();
    const h = await hubWith({
      first: writer('shared.txt', 'first\n', 'wrote shared.txt'),
      after: (ctx) => {
        if (ctx.step === 0) {
          const f = join(processCwd(ctx), 'shared.txt');
          seen.set('after', existsSync(f) ? readFileSync(f, 'utf8') : undefined);
          return finishStep('looked');
        }
        return { text: 'done' };
      },
    });
    const repo = await initRepo(join(h.dir, 'repo'));
    // Closing the worktree pushes to origin; the remote's pre-receive hook holds the push until
    // the test opens the gate, so the job's end is written while its worktree is still closing.
    const remote = await makeBareRemote(join(h.dir, 'remote.git'));
    const gate = join(h.dir, 'gate');
    const entered = join(h.dir, 'entered');
    writeFileSync(join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\ntouch '${entered}'\nwhile [ ! -f '${gate}' ]; do sleep 0.05; done\n`);
    chmodSync(join(remote, 'hooks', 'pre-receive'), 0o755);
    await gitOut(repo, ['remote', 'add', 'origin', remote]);
    let first!: { job_id: string };
    let after!: { job_id: string };
    let late!: { job_id: string; status: string };
    try {
      first = await h.call('spawn_agent', { prompt: '@script:first', title: 'first', cwd: repo, worktree: true });
      after = await h.call('spawn_agent', { prompt: '@script:after', title: 'after', cwd: repo, worktree: true, depends_on: [first.job_id] });
      await eventually('the push of the first job\'s branch', () => existsSync(entered), 60_000);
      assert.equal((await job(h.hub, first.job_id)).status, 'succeeded', 'the end is written before the worktree is closed');
      assert.equal((await job(h.hub, after.job_id)).status, 'waiting', 'the dependent is not queued while its dependency\'s worktree closes');
      late = await h.call('spawn_agent', { prompt: '@script:after', title: 'late', cwd: repo, worktree: true, depends_on: [first.job_id] });
      assert.equal(late.status, 'waiting', 'a job spawned on it meanwhile waits too');
      const w = await h.call('wait_for_agents', { job_ids: [first.job_id], timeout_s: 1 });
      assert.deepEqual(w.pending, [first.job_id], `wait_for_agents does not report it settled yet: ${JSON.stringify(w)}`);
    } finally {
      writeFileSync(gate, ''); // the push goes on, whatever happened
    }
    const done = await waitForJob(h.hub, after.job_id, (j) => j.status === 'succeeded', 60_000);
    await waitForJob(h.hub, late.job_id, (j) => j.status === 'succeeded', 60_000);
    assert.equal(seen.get('after'), 'first\n', 'the dependent started from the dependency\'s committed branch');
    assert.equal((await job(h.hub, first.job_id)).diff_stat?.includes('shared.txt'), true);
    assert.ok(done.branch);
  });

  test('bad base: not a worktree job, unknown, or without worktree: a clear error and no job', { timeout: 60_000 }, async () => {
    const h = await hubWith({});
    const repo = await initRepo(join(h.dir, 'repo'));
    const jobCount = async (): Promise<number> => Number((await row(h.hub, sql<{ c: number | string }>`SELECT COUNT(*) AS c FROM jobs`))!.c);
    const before = await jobCount();
    const bad = async (args: Record<string, unknown>, re: RegExp): Promise<void> => {
      const r = await h.callRaw('spawn_agent', { prompt: 'x', cwd: repo, ...args });
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(r.text, re);
    };
    await bad({ worktree: true, base: 'no-such-branch' }, /base "no-such-branch" is neither a job id nor a branch of .*Pass a worktree job's id/);
    await bad({ base: 'main' }, /base is only used with worktree: true/);
    await bad({ bootstrap: false }, /bootstrap is only used with worktree: true/);
    assert.equal(await jobCount(), before, 'nothing was created');
    const ok = await h.call('spawn_agent', { prompt: '@script:none', cwd: repo, worktree: true, base: 'main', title: 'on main' });
    assert.equal((await row(h.hub, sql<{ base: string }>`SELECT base FROM job_setup WHERE job_id = ${ok.job_id}`))?.base, 'branch:main');
    await h.call('cancel_agent', { job_id: ok.job_id });
  });
});
