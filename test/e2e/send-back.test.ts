// End-to-end (a real hub, real confined claude children on the fake model, real git): a worktree
// job whose check fails on the merged result is sent back to its own agent, which fixes the file
// in its session, and its branch merges on round 2; a branch that conflicts with main is sent back
// with main merged in and the conflict left, the agent removes the markers, and it merges
// (issue 31 point 2, src/branches/sendBack.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { initRepo, gitOut } from '../helpers/git.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { finishStep } from '../helpers/holder.js';
import type { Script, Step, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { events, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith } = scriptedHubs();

const processCwd = (ctx: StepContext): string => [...JSON.stringify(ctx.body.messages).matchAll(/Primary working directory: ([^\\"\s]+)/g)].pop()?.[1] ?? '.';

/** The tools the model called in its last answer (none: a new user turn starts). */
function lastTools(ctx: StepContext): string[] {
  const msgs = ctx.body.messages as { role: string; content: unknown }[];
  const last = [...msgs].reverse().find((m) => m.role === 'assistant');
  if (!last || !Array.isArray(last.content)) return [];
  return (last.content as { type: string; name?: string }[]).filter((b) => b.type === 'tool_use').map((b) => b.name!);
}

/**
 * A turn: `act` (a tool call) when the user's turn starts, then finish, then a last word. Which
 * act: `sentBack` once the send-back message is in the conversation, else `first`.
 */
const agent = (first: (ctx: StepContext) => Step, sentBack: (ctx: StepContext) => Step): Script => (ctx) => {
  const tools = lastTools(ctx);
  if (tools.includes('mcp__overseer__finish')) return { text: 'done' };
  if (tools.length) return finishStep('done');
  return ctx.userTexts.some((t) => t.includes('NOT merged')) ? sentBack(ctx) : first(ctx);
};
const write = (ctx: StepContext, file: string, content: string): Step => ({ tools: [{ name: 'Write', input: { file_path: join(processCwd(ctx), file), content } }] });

describe('send back with real agents', () => {
  test('a failing check goes back to the agent, which fixes the file; the branch merges on round 2', { timeout: 300_000 }, async () => {
    const h = await hubWith({ fixer: agent((c) => write(c, 'app.txt', 'broken\n'), (c) => write(c, 'app.txt', 'fixed\n')) });
    const repo = await initRepo(join(h.dir, 'repo'), { 'app.txt': 'start\n', 'check.sh': 'exit 0\n' });
    const s = await h.call('spawn_agent', { prompt: '@script:fixer make the app', title: 'fixer', cwd: repo, worktree: true, checks: ['command:sh check.sh'] });
    await waitForJob(h.hub, s.job_id, (j) => j.status === 'succeeded' && j.diff_stat !== null, 180_000);
    // main's check now wants the fix: only the merged result fails.
    writeFileSync(join(repo, 'check.sh'), 'grep -q fixed app.txt || { echo "APP-NOT-FIXED: $(cat app.txt)"; exit 1; }\n');
    await gitOut(repo, ['commit', '-qam', 'a stricter check']);
    const before = await gitOut(repo, ['rev-parse', 'main']);

    const r = await h.call('merge_branch', { job_id: s.job_id, on_failure: 'send_back' });
    assert.equal(r.reason, 'checks_failed');
    assert.deepEqual([r.send_back?.sent, r.send_back?.round, r.send_back?.max], [true, 1, 2], r.message);
    assert.equal(await gitOut(repo, ['rev-parse', 'main']), before, 'not merged while its check fails');
    const merged = await eventually('the merge on round 2', async () => (await rows(h.hub, sql<{ commit_sha: string }>`SELECT commit_sha FROM job_merges WHERE job_id = ${s.job_id}`))[0], 240_000, 200);
    assert.equal(await gitOut(repo, ['rev-parse', 'main']), merged.commit_sha);
    assert.equal(readFileSync(join(repo, 'app.txt'), 'utf8'), 'fixed\n');
    // The model saw the check's output in the send-back message, in the same session.
    const sent = h.fake.requests.map((q) => JSON.stringify(q.body)).find((b) => b.includes('NOT merged'));
    assert.ok(sent, 'the resumed session got the send-back message');
    assert.match(sent, /APP-NOT-FIXED: broken/);
    assert.match(sent, /make the app/, 'on its own session: the first task is in the same conversation');
    const kinds = (await events(h.hub, s.job_id)).map((e) => e.kind);
    assert.ok(kinds.includes('sent_back') && kinds.includes('merged'), kinds.join(','));
    assert.deepEqual((await h.call('get_agent', { job_id: s.job_id })).send_back, { round: 1, max: 2, status: 'merged', reason: 'checks_failed' });
  });

  test('a conflicting branch goes back with the conflict left; the agent resolves the markers and it merges (config mergeOnFailure: send_back)', { timeout: 300_000 }, async () => {
    let seen = '';
    const h = await hubWith({
      resolver: agent((c) => write(c, 'shared.txt', 'alpha\nbeta by the agent\ngamma\n'), (c) => {
        seen = readFileSync(join(processCwd(c), 'shared.txt'), 'utf8');
        return write(c, 'shared.txt', 'alpha\nbeta by main and the agent\ngamma\n');
      }),
    }, { mergeOnFailure: 'send_back' });
    const repo = await initRepo(join(h.dir, 'repo'), { 'shared.txt': 'alpha\nbeta\ngamma\n' });
    const s = await h.call('spawn_agent', { prompt: '@script:resolver change beta', title: 'resolver', cwd: repo, worktree: true });
    await waitForJob(h.hub, s.job_id, (j) => j.status === 'succeeded' && j.diff_stat !== null, 180_000);
    writeFileSync(join(repo, 'shared.txt'), 'alpha\nbeta by main\ngamma\n');
    await gitOut(repo, ['commit', '-qam', 'main changes beta']);

    const r = await h.call('merge_branch', { job_id: s.job_id });
    assert.equal(r.reason, 'conflict');
    assert.deepEqual(r.send_back?.files, ['shared.txt'], r.message);
    const merged = await eventually('the merge after the conflict was resolved', async () => (await rows(h.hub, sql<{ commit_sha: string }>`SELECT commit_sha FROM job_merges WHERE job_id = ${s.job_id}`))[0], 240_000, 200);
    assert.match(seen, /<<<<<<<[\s\S]*=======[\s\S]*>>>>>>>/, 'the agent found the conflict markers in its worktree');
    assert.equal(await gitOut(repo, ['rev-parse', 'main']), merged.commit_sha);
    assert.equal(readFileSync(join(repo, 'shared.txt'), 'utf8'), 'alpha\nbeta by main and the agent\ngamma\n');
    assert.equal(await gitOut(repo, ['status', '--porcelain']), '');
  });
});
