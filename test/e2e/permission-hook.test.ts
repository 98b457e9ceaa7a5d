// The children's PreToolUse hook answers the permission question when the policy settles it:
// real claude children on the fake model. An edit inside the tree is allowed by the hook (one
// round trip to the hub, no check_permission call), an edit through a symlink that leads out
// of the tree is denied by the hook with the policy's reason, and a call the policy would ask
// about still reaches check_permission and becomes a request for the lead.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/claude.js';
import { initRepo } from '../helpers/git.js';
import type { ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { lastResult } from '../helpers/steps.js';
import type { TestHub } from '../helpers/hub.js';
import { events } from '../helpers/state.js';

const { cleanups, hubWith } = scriptedHubs();
const finish = (result: string) => ({ tools: [{ name: 'mcp__overseer__finish', input: { result, outcome: 'success' } }] });

/** The `permission` events of a job, as recorded by the hub. */
async function permissionEvents(h: TestHub, jobId: string): Promise<{ tool: string; action: string; via: string; target: string }[]> {
  return (await events(h.hub, jobId)).filter((e) => e.kind === 'permission').map((e) => JSON.parse(e.data_json ?? '{}'));
}

describe('the policy answered in the hook', () => {
  test('an edit in the tree is allowed by the hook; one through a symlink out of it is denied there', async () => {
    const outside = await makeTempDir('ovs-outside');
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    const got: Record<string, ToolResultInfo> = {};
    const h = await hubWith({
      writer: (ctx) => {
        const cwd = /in (\S+) now/.exec(ctx.prompt)?.[1] ?? '';
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwd, 'inside.txt'), content: 'in\n' } }] };
        if (ctx.step === 1) {
          got.inside = lastResult(ctx);
          return { tools: [{ name: 'Write', input: { file_path: join(cwd, 'out-link', 'escaped.txt'), content: 'out\n' } }] };
        }
        if (ctx.step === 2) { got.escape = lastResult(ctx); return finish('wrote'); }
        return { text: 'done' };
      },
    });
    const repo = await initRepo(join(h.dir, 'repo'));
    symlinkSync(outside, join(repo, 'out-link'));
    const id = (await h.call('spawn_agent', { prompt: `@script:writer in ${repo} now` , cwd: repo })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 90 });
    assert.equal(w.done[0]?.status, 'succeeded', JSON.stringify(w));

    assert.equal(got.inside?.is_error, false, got.inside?.text);
    assert.equal(readFileSync(join(repo, 'inside.txt'), 'utf8'), 'in\n');
    assert.equal(got.escape?.is_error, true);
    assert.match(got.escape!.text, /hook error: Denied by Overseer policy: .*work tree/);
    assert.equal(existsSync(join(outside, 'escaped.txt')), false, 'nothing written outside the work tree');

    const perms = await permissionEvents(h, id);
    assert.deepEqual(perms.map((p) => [p.tool, p.action, p.via]), [['Write', 'allow', 'hook'], ['Write', 'deny', 'hook']], JSON.stringify(perms));
    assert.equal((await h.call('list_requests', { status: 'all' })).requests.length, 0, 'nothing was asked of the lead');
  });

  test('a call the policy asks about still goes through check_permission to the lead', async () => {
    const got: Record<string, ToolResultInfo> = {};
    const h = await hubWith({
      asker: (ctx) => {
        const cwd = /in (\S+) now/.exec(ctx.prompt)?.[1] ?? '';
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwd, 'asked.txt'), content: 'ok\n' } }] };
        if (ctx.step === 1) { got.write = lastResult(ctx); return finish('asked'); }
        return { text: 'done' };
      },
    });
    await mkdir(h.home, { recursive: true });
    writeFileSync(join(h.home, 'policy.json'), JSON.stringify({ rules: [{ action: 'ask', tool: 'Write', reason: 'writes need a yes PLUM' }, { action: 'allow', tool: 'mcp__overseer__*' }], default: 'allow' }));
    const repo = await initRepo(join(h.dir, 'repo'));
    const id = (await h.call('spawn_agent', { prompt: `@script:asker in ${repo} now`, cwd: repo })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 90 });
    assert.equal(w.attention.length, 1, JSON.stringify(w));
    const [req] = (await h.call('list_requests', {})).requests;
    assert.equal(req?.kind, 'permission');
    assert.equal(req?.tool_name, 'Write');
    assert.match(req.summary, /PLUM/);
    await h.call('respond', { request_id: req.request_id, decision: 'approved' });
    const done = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 90 });
    assert.equal(done.done[0]?.status, 'succeeded', JSON.stringify(done));
    assert.equal(got.write?.is_error, false, got.write?.text);
    assert.equal(readFileSync(join(repo, 'asked.txt'), 'utf8'), 'ok\n');
    const perms = await permissionEvents(h, id);
    assert.deepEqual(perms.map((p) => [p.tool, p.action, p.via]), [['Write', 'ask', 'check_permission']], 'one event for the ask, from check_permission');
  });
});
