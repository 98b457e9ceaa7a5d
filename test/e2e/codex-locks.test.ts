// End-to-end: file locks and REAL codex children (codex-cli 0.169.0) in an in-process hub. The
// PreToolUse lock hook (installed with -c hooks.PreToolUse and --dangerously-bypass-hook-trust)
// denies an apply_patch on a file a REAL claude child holds; a shell write the hook cannot parse
// is caught after the turn as a lock violation. Ordering: fake requests (waitForRequest) and
// gates, never sleeps.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { TestHub } from '../helpers/hub.js';
import { codexHubs } from '../helpers/codexHub.js';
import { gate } from '../helpers/gate.js';
import { initRepo } from '../helpers/git.js';
import type { CodexScript, CodexToolOutput } from '../../src/fakemodel/fakeOpenAI.js';
import type { Script } from '../../src/fakemodel/fakeAnthropic.js';
import { job, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const { codexHub } = codexHubs();

/** A hub with claude children (fake Anthropic `scripts`) and Codex children (fake Responses `codex`). */
const mixedHub = (scripts: Record<string, Script>, codex: Record<string, CodexScript>) => codexHub(codex, { scripts });

describe('codex children and file locks', () => {
  test('the lock hook denies a codex apply_patch on a file a claude child holds, naming the holder; the file is untouched', async () => {
    const release = gate();
    const seen: { patch?: CodexToolOutput } = {};
    let h!: TestHub;
    ({ h } = await mixedHub(
      {
        holder: async (ctx) => {
          if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['shared.txt'], reason: 'claude edits it' } }] };
          if (ctx.step === 1) {
            await release.wait;
            return { tools: [{ name: 'mcp__overseer__finish', input: { result: `lock: ${ctx.lastToolResults[0]?.text ?? ''}`.slice(0, 300) } }] };
          }
          return { text: 'done' };
        },
      },
      {
        patcher: async (ctx) => {
          if (ctx.step === 0) {
            // Only once the claude child holds the lock (its next request carries the lock_files result).
            await h.fake.waitForRequest((r) => r.script === 'holder' && r.step === 1, 60_000);
            return { calls: [{ patch: '*** Begin Patch\n*** Update File: shared.txt\n@@\n-original\n+from codex\n*** End Patch\n' }] };
          }
          if (ctx.step === 1) {
            seen.patch = ctx.lastOutputs[0];
            return { text: 'the patch was blocked' };
          }
          return { text: 'done' };
        },
      },
    ));
    const shared = join(realpathSync(h.project), 'shared.txt');
    writeFileSync(shared, 'original\n');
    const holder = (await h.call('spawn_agent', { prompt: '@script:holder hold shared.txt', title: 'Claude holder' })).job_id;
    const patcher = (await h.call('spawn_agent', { prompt: '@script:patcher patch shared.txt', provider: 'codex', title: 'Codex patcher' })).job_id;

    const w1 = await h.call('wait_for_agents', { job_ids: [patcher], timeout_s: 120 });
    assert.equal(w1.done[0].status, 'succeeded', w1.done[0].error);
    assert.equal((await job(h.hub, holder)).status, 'running', 'the claude child still holds the lock');
    const held = (await h.call('list_locks', {})).locks;
    assert.deepEqual(held.map((l: any) => [l.path, l.holder]), [[shared, holder]]);

    assert.ok(seen.patch, 'the codex child made a second request with the patch result');
    assert.equal(seen.patch.name, 'apply_patch');
    assert.match(seen.patch.text, /^Command blocked by PreToolUse hook/);
    assert.match(seen.patch.text, new RegExp(holder), 'the holder job is named');
    assert.match(seen.patch.text, /Claude holder/, 'the holder title is named');
    assert.equal(readFileSync(shared, 'utf8'), 'original\n', 'the file is untouched');

    release.open();
    const w2 = await h.call('wait_for_agents', { job_ids: [holder], timeout_s: 120 });
    assert.equal(w2.done[0].status, 'succeeded', w2.done[0].error);
    assert.match(w2.done[0].result, /acquired/);
    assert.equal(readFileSync(shared, 'utf8'), 'original\n');
  });

  test('a codex child in its own worktree that writes through an unparseable shell command gets a lock violation', async () => {
    const { h } = await mixedHub({}, {
      sneaky: [
        {
          calls: [
            { patch: '*** Begin Patch\n*** Add File: patched.txt\n+through apply_patch\n*** End Patch\n' },
            { shell: 'python3 -c "open(\'x.txt\',\'w\').write(\'x\')"' },
          ],
        },
        { text: 'wrote two files' },
      ],
    });
    const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
    const id = (await h.call('spawn_agent', { prompt: '@script:sneaky write files', provider: 'codex', cwd: repo, worktree: true })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
    assert.equal(w.done[0].status, 'succeeded', w.done[0].error);
    const a = await h.call('get_agent', { job_id: id });
    assert.ok(a.worktree, 'ran in its own worktree');
    assert.ok(Array.isArray(a.lock_violations), `lock_violations: ${JSON.stringify(a.lock_violations)}`);
    // patched.txt went through the hook (auto-locked); x.txt did not.
    assert.deepEqual(a.lock_violations.map((p: string) => basename(p)), ['x.txt']);
    assert.deepEqual(a.lock_violations, [join(a.worktree, 'x.txt')], 'the path in the job\'s worktree');
    const events = await rows(h.hub, sql<{ data_json: string }>`SELECT data_json FROM events WHERE job_id = ${id} AND kind = 'lock_violation'`);
    assert.equal(events.length, 1);
  });
});
