// End-to-end (real claude child, fake model): the backstop against a lock hook switched off by a
// route nobody knows yet. The test itself switches the child's hooks off (a project
// `.claude/settings.local.json` with `disableAllHooks`, written from outside before the child
// starts: the child cannot write it). The child's first guarded tool call then runs with no hook
// decision, and the hub stops it: failed with `hook_bypassed`, never retried, never "succeeded",
// the call recorded (issue 18 point 3).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { cwdOf } from '../helpers/steps.js';

const { hubWith } = scriptedHubs();

describe('hook bypass', () => {
  test('a child whose hook is off is stopped at its first unguarded write: hook_bypassed, not retried', { timeout: 180_000 }, async () => {
    const h = await hubWith({
      unguarded: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'x.txt'), content: 'written with no hook\n' } }] };
        if (ctx.step === 1) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'y.txt'), content: 'second\n' } }] };
        if (ctx.step === 2) return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'all done' } }] };
        return { text: 'done' };
      },
    });
    mkdirSync(join(h.project, '.claude'), { recursive: true });
    writeFileSync(join(h.project, '.claude', 'settings.local.json'), JSON.stringify({ disableAllHooks: true }));
    const id = (await h.call('spawn_agent', { prompt: '@script:unguarded', title: 'Unguarded', retry: 'same' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    const done = w.done[0];
    assert.equal(done.status, 'failed', JSON.stringify(done));
    assert.equal(done.failure_class, 'hook_bypassed');
    assert.match(done.error, /without the lock hook deciding/);
    const a = await h.call('get_agent', { job_id: id, events: true });
    assert.equal(a.attempts.length, 1, 'a bypass is never retried');
    const ev = a.events.find((e: any) => e.kind === 'hook_bypassed');
    assert.ok(ev, JSON.stringify(a.events.map((e: any) => e.kind)));
    assert.equal(ev.data.calls[0].tool, 'Write');
    assert.ok(!h.fake.requests.some((r) => r.script === 'unguarded' && r.step === 3), 'the child never got to finish');
  });
});
