// End-to-end: sessions and messages of real claude children — message_agent into a running
// conversation, stop + resume of the same session, retries (same / analyze), completion
// checks, limits, worktrees, and the overseer MCP server failing to connect.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob, waitEnded } from '../helpers/wait.js';
import { initRepo } from '../helpers/git.js';
import { NodeLauncher } from '../../src/launch/process.js';
import type { Script, StepContext } from '../../src/fakemodel/fakeAnthropic.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

async function hubWith(scripts: Record<string, Script>, opts: Parameters<typeof startTestHub>[0] = {}): Promise<TestHub> {
  const h = await startTestHub({ scripts, ...opts });
  hubs.push(h);
  return h;
}

const cwdOf = (ctx: StepContext): string => /working directory is `([^`]+)`/.exec(ctx.system)?.[1] ?? '.';

describe('messages and sessions', () => {
  test('message_agent reaches a running child inside its conversation', async () => {
    const h = await hubWith({
      chat: (ctx) => {
        const said = ctx.userTexts.find((t) => t.includes('PINEAPPLE'));
        if (said) return { tools: ctx.step < 3 ? [{ name: 'mcp__overseer__finish', input: { result: `heard: ${said.slice(0, 80)}` } }] : [], text: 'got it' };
        return { delayMs: 1500, text: 'thinking' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:chat wait for a word' })).job_id;
    await waitForJob(h.hub, id, (j) => j.pid !== null);
    await h.fake.waitForRequest((r) => r.script === 'chat', 30_000);
    const m = await h.call('message_agent', { job_id: id, text: 'the word is PINEAPPLE' });
    assert.equal(m.delivered, true);
    const req = await h.fake.waitForRequest((r) => JSON.stringify(r.body.messages).includes('PINEAPPLE'), 30_000);
    assert.equal(req.script, 'chat');
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(w.done[0].status, 'succeeded');
    assert.match(w.done[0].result, /PINEAPPLE/);
  });

  test('a message that arrives during a tool turn is injected into that turn, and the job still ends', async () => {
    const h = await hubWith({
      tooly: (ctx) => {
        if (ctx.step === 0) return { delayMs: 1500, tools: [{ name: 'Bash', input: { command: 'true' } }] };
        const said = ctx.userTexts.find((t) => t.includes('MANGO'));
        if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: said ? 'heard MANGO mid-turn' : 'heard nothing' } }] };
        return { text: 'end' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:tooly' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'tooly' && r.step === 0, 30_000);
    assert.equal((await h.call('message_agent', { job_id: id, text: 'MANGO' })).delivered, true);
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(w.done[0].status, 'succeeded');
    assert.equal(w.done[0].result, 'heard MANGO mid-turn');
  });

  test('pause stop keeps the session; resume_agent continues it with the new message', async () => {
    const h = await hubWith({
      sess: (ctx) => {
        const follow = ctx.userTexts.find((t) => t.includes('CONTINUE-NOW'));
        if (follow) return { text: `resumed with ${ctx.body.messages.filter((m: any) => m.role === 'assistant').length} earlier assistant turns` };
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'step one' } }] };
        return { delayMs: 120_000, text: 'never' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:sess' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'sess' && r.step === 1, 30_000);
    const stopped = await h.call('pause_agent', { job_id: id, mode: 'stop' });
    assert.equal(stopped.status, 'interrupted');
    const sessionId = stopped.session_id;
    assert.ok(sessionId);
    const r = await h.call('resume_agent', { job_id: id, message: 'CONTINUE-NOW please' });
    assert.ok(['queued', 'running'].includes(r.status));
    const req = await h.fake.waitForRequest((q) => JSON.stringify(q.body.messages).includes('CONTINUE-NOW'), 30_000);
    assert.ok(req.body.messages.some((m: any) => m.role === 'assistant'), 'history of the first run was carried into the resumed session');
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(w.done[0].status, 'succeeded');
    assert.equal(w.done[0].session_id, sessionId, 'same session');
    assert.deepEqual(w.done[0].attempts.map((a: any) => a.kind), ['initial', 'resume']);
  });
});

describe('retries and checks', () => {
  test('retry same: a failed first attempt is retried and the job succeeds; attempts are visible', async () => {
    // Every request of the first attempt fails; the retry's prompt carries prompts/retry.md.
    const h = await hubWith({ flaky: (ctx) => (ctx.prompt.includes('Previous attempt') ? { text: 'ok now' } : { error: { status: 400, message: 'first attempt fails' } }) });
    const id = (await h.call('spawn_agent', { prompt: '@script:flaky', retry: 'same' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(w.done[0].status, 'succeeded');
    const a = w.done[0].attempts;
    assert.deepEqual(a.map((x: any) => [x.kind, x.status]), [['initial', 'failed'], ['retry', 'succeeded']]);
    assert.equal(a[0].failure_class, 'api_error');
  });

  test('retry analyze: a diagnosis agent reads the failed transcript and its advice reaches the retry prompt', async () => {
    // One script plays three parts: the failing first attempt, the diagnosis agent (its prompt,
    // prompts/retry-analysis.md, quotes the task and so carries the same marker) and the retry.
    const h = await hubWith({
      task: (ctx) => {
        if (ctx.prompt.includes('Diagnose why')) return { text: ctx.prompt.includes('scripted failure XYZ') ? 'Diagnosis: USE-THE-OTHER-DOOR' : 'no transcript seen' };
        if (ctx.prompt.includes('Previous attempt')) return { text: ctx.prompt.includes('USE-THE-OTHER-DOOR') ? 'followed the advice' : 'no advice seen' };
        return { error: { status: 400, message: 'scripted failure XYZ' } };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:task do it', retry: 'analyze' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 90 });
    const job = w.done[0];
    assert.equal(job.attempts.length, 2);
    assert.match(job.attempts[0].diagnosis ?? '', /USE-THE-OTHER-DOOR/);
    assert.equal(job.status, 'succeeded');
    assert.equal(job.result, 'followed the advice');
  });

  test('checks decide success: command:false fails the job with check_failed; diff_not_empty passes when a file was written', async () => {
    const h = await hubWith({
      write: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'new.txt'), content: 'n' } }] } : { text: 'wrote' }),
      idle: [{ text: 'did nothing' }],
    });
    const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# r\n' });
    const ok = (await h.call('spawn_agent', { prompt: '@script:write', cwd: repo, checks: ['diff_not_empty', 'command:test -f new.txt'] })).job_id;
    // A separate repository: the writer's new file must not count as this job's change.
    const quiet = await initRepo(join(h.dir, 'quiet'), { 'README.md': '# q\n' });
    const bad = (await h.call('spawn_agent', { prompt: '@script:idle', cwd: quiet, checks: ['diff_not_empty'] })).job_id;
    const cmd = (await h.call('spawn_agent', { prompt: '@script:idle', cwd: repo, checks: ['command:exit 3'] })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [ok, bad, cmd], timeout_s: 60 });
    const by = Object.fromEntries(w.done.map((d: any) => [d.job_id, d]));
    assert.equal(by[ok].status, 'succeeded');
    assert.equal(by[bad].status, 'failed');
    assert.equal(by[bad].failure_class, 'check_failed');
    assert.match(by[bad].error, /diff_not_empty/);
    assert.equal(by[cmd].failure_class, 'check_failed');
    assert.match(by[cmd].error, /exited 3/);
  });

  test('max_turns and budget_usd end the run with their failure classes', async () => {
    const loop: Script = (ctx) => ({ tools: [{ name: 'mcp__overseer__report_status', input: { message: `turn ${ctx.step}` } }], usage: { input_tokens: 100_000, output_tokens: 1000 } });
    const h = await hubWith({ loop });
    const turns = (await h.call('spawn_agent', { prompt: '@script:loop', max_turns: 2 })).job_id;
    const budget = (await h.call('spawn_agent', { prompt: '@script:loop', budget_usd: 0.5 })).job_id;
    const w = await waitEnded(h, [turns, budget], 90);
    const by = Object.fromEntries(w.done.map((d: any) => [d.job_id, d]));
    assert.equal(by[turns].failure_class, 'max_turns');
    assert.equal(by[budget].failure_class, 'budget');
    assert.ok(by[budget].cost_usd > 0.5, 'cost recorded past the budget');
  });
});

describe('work trees and connectivity', () => {
  test('worktree: the job runs on its own branch, its work is committed there, the worktree is removed', async () => {
    const h = await hubWith({ wt: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'feature.txt'), content: 'feature\n' } }] } : { text: 'done' }) });
    const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
    const s = await h.call('spawn_agent', { prompt: '@script:wt add a feature', cwd: repo, worktree: true, title: 'Add feature' });
    const w = await h.call('wait_for_agents', { job_ids: [s.job_id], timeout_s: 60 });
    const job = w.done[0];
    assert.equal(job.status, 'succeeded');
    assert.match(job.branch, /^overseer\/add-feature-/);
    assert.match(job.diff_stat, /feature\.txt/);
    assert.match(job.git_note ?? '', /no remote|origin/i);
    assert.equal(existsSync(job.worktree), false, 'worktree removed');
    const show = execFileSync('git', ['show', `${job.branch}:feature.txt`], { cwd: repo, encoding: 'utf8' });
    assert.equal(show, 'feature\n');
    assert.equal(existsSync(join(repo, 'feature.txt')), false, 'main checkout untouched');
  });

  test('a child whose overseer MCP server cannot connect fails fast with mcp_unavailable', async () => {
    const real = new NodeLauncher();
    const h = await hubWith({ any: [{ text: 'should not matter' }] }, {
      processes: { launch: (cmd) => real.launch({ ...cmd, env: { ...cmd.env, OVERSEER_TOKEN: 'not-a-valid-token' } }) },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:any' })).job_id;
    const j = await waitForJob(h.hub, id, (r) => r.status === 'failed', 60_000);
    assert.equal(j.failure_class, 'mcp_unavailable');
  });
});
