// Taking over an agent through the hub's tools (attach_agent / detach_agent, what overseer
// attach calls), with a real claude child on the fake model and a real git worktree: an ended
// job whose worktree was removed is re-attached and taken over; the interactive command is the
// child's own (MCP config, hook settings) in interactive form with a token that authenticates as
// the agent; finishing settles the job with the person's result; bad input is refused and
// changes nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { startTestHub } from '../helpers/hub.js';
import { finishStep } from '../helpers/holder.js';
import { gitOut, initRepo } from '../helpers/git.js';
import { waitForJob } from '../helpers/wait.js';
import { hashToken } from '../../src/services/runner.js';
import { attempts, events, job, jobOf } from '../helpers/state.js';

const { hubWith } = scriptedHubs();

describe('taking over an agent (attach_agent / detach_agent)', () => {
  test('an ended worktree job: re-attached, its session opened with the child\'s MCP config and a working agent token, then finished by the person', { timeout: 180_000 }, async () => {
    const h = await hubWith({ quick: (ctx) => (ctx.step === 0 ? finishStep('first done') : { text: 'done' }) });
    const repo = await initRepo(join(h.dir, 'repo'));
    const id = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'Quick', cwd: repo, worktree: true })).job_id as string;
    const ended = await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 90_000);
    if (existsSync(ended.work_dir!)) await gitOut(repo, ['worktree', 'remove', '--force', ended.work_dir!]);
    assert.ok(!existsSync(ended.work_dir!), 'its worktree is gone');

    const a = await h.call('attach_agent', { job_id: id });
    assert.equal(a.session_id, ended.session_id);
    assert.equal(a.was, 'succeeded');
    assert.equal(a.reattached_worktree, true);
    assert.ok(existsSync(ended.work_dir!), 'the worktree is back');
    assert.equal((await gitOut(ended.work_dir!, ['rev-parse', '--abbrev-ref', 'HEAD'])), ended.branch, 'on the job\'s branch');
    const args = a.command.args as string[];
    assert.equal(a.command.cwd, ended.work_dir);
    assert.deepEqual(args.slice(args.indexOf('--resume'), args.indexOf('--resume') + 2), ['--resume', ended.session_id]);
    for (const f of ['--mcp-config', '--strict-mcp-config', '--settings', '--allowedTools']) assert.ok(args.includes(f), `${f} is kept`);
    for (const f of ['-p', '--output-format', '--input-format', '--permission-prompt-tool', '--disallowedTools']) assert.ok(!args.includes(f), `${f} is dropped`);
    assert.match(args[args.indexOf('--settings') + 1]!, /\/hook\?format=claude/, 'the lock hook');
    assert.match(args[args.indexOf('--mcp-config') + 1]!, /\$\{OVERSEER_TOKEN\}/);
    assert.equal(a.command.env.OVERSEER_AGENT_ID, id);
    assert.equal((await jobOf(h.hub, id))?.token_hash, hashToken(a.command.env.OVERSEER_TOKEN), 'the token authenticates as the agent');
    const row = await job(h.hub, id);
    assert.equal(row.status, 'succeeded', 'an ended job stays as it is');
    assert.match(row.status_message ?? '', /taken over by a person/);

    await assert.rejects(h.call('attach_agent', { job_id: id }), /already taken over/);
    await assert.rejects(h.call('resume_agent', { job_id: id }), /taken over by a person/, 'no headless resume behind the person\'s back');
    await assert.rejects(h.call('detach_agent', { job_id: id, then: 'finish' }), /needs result/);
    assert.equal((await job(h.hub, id)).status_message, row.status_message, 'a refused call changes nothing');

    const s = await h.call('detach_agent', { job_id: id, then: 'finish', result: 'the person fixed it by hand', outcome: 'success' });
    assert.equal(s.status, 'succeeded');
    const fin = await job(h.hub, id);
    assert.equal(fin.result, 'the person fixed it by hand');
    assert.equal(fin.token_hash, null, 'the person\'s token no longer works');
    assert.equal(fin.status_message, null);
    assert.deepEqual((await attempts(h.hub, id)).map((x) => [x.kind, x.status]), [['initial', 'succeeded'], ['takeover', 'succeeded']]);
    const kinds = (await events(h.hub, id)).map((e) => e.kind);
    assert.ok(kinds.includes('attached') && kinds.includes('detached'), kinds.join(','));

    // Leave: taken over again, left as it is.
    await h.call('attach_agent', { job_id: id });
    const left = await h.call('detach_agent', { job_id: id, then: 'leave' });
    assert.equal(left.status, 'succeeded');
    assert.equal((await job(h.hub, id)).token_hash, null);

    // Bad input.
    await assert.rejects(h.call('attach_agent', { job_id: 'nope' }), /No agent job "nope"/);
    const later = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'Later', at: new Date(Date.now() + 3_600_000).toISOString() })).job_id as string;
    await assert.rejects(h.call('attach_agent', { job_id: later }), /has no session yet/);
    assert.equal((await job(h.hub, later)).status, 'waiting', 'the refused job is untouched');
    await h.call('cancel_agent', { job_id: later });
  });

  test('the mark outlives the hub: after a restart the job is still the person\'s (no headless resume, no second attach) until detach', { timeout: 180_000 }, async () => {
    const h = await startTestHub({ scripts: { quick: (ctx) => (ctx.step === 0 ? finishStep('first done') : { text: 'done' }) } });
    let h2: Awaited<ReturnType<typeof startTestHub>> | undefined;
    try {
      const id = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'Quick' })).job_id as string;
      await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 90_000);
      await h.call('attach_agent', { job_id: id });
      await h.stop({ keep: true });
      h2 = await startTestHub({ dir: h.dir });
      await assert.rejects(h2.call('resume_agent', { job_id: id }), /taken over by a person/, 'a new hub still knows');
      await assert.rejects(h2.call('attach_agent', { job_id: id }), /already taken over[\s\S]*detach_agent/);
      const left = await h2.call('detach_agent', { job_id: id, then: 'leave' });
      assert.equal(left.status, 'succeeded');
      assert.equal((await job(h2.hub, id)).status_message, null);
      await h2.call('attach_agent', { job_id: id });
      await h2.call('detach_agent', { job_id: id, then: 'leave' });
    } finally {
      await h2?.stop();
    }
  });
});
