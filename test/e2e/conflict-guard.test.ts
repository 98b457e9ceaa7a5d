// End-to-end (a real hub, real claude children on the fake model, real git): the conflict guard
// (docs/worktrees.md). Two children editing the same file in separate worktrees raise one
// overlap; both receive a message naming the other agent and the file; the lead hears it once in
// wait_for_agents attention; get_agent, list_overlaps, `overseer overlaps` and the floor show it;
// it closes when the jobs end.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { initRepo } from '../helpers/git.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { finishStep } from '../helpers/holder.js';
import { gate } from '../helpers/gate.js';
import type { Script, StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { overlapsText, listOverlaps } from '../../src/branches/overlapView.js';
import { buildFloor } from '../../src/floor/model.js';
import { readFloorInput } from '../../src/floor/source.js';
import { row, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith, cleanups } = scriptedHubs();

const processCwd = (ctx: StepContext): string => [...JSON.stringify(ctx.body.messages).matchAll(/Primary working directory: ([^\\"\s]+)/g)].pop()?.[1] ?? '.';

describe('the conflict guard', () => {
  test('two children editing the same file in separate worktrees raise one overlap, and both are told', { timeout: 180_000 }, async () => {
    const found = gate(120_000);
    cleanups.push(async () => found.open());
    const heard = new Map<string, string>();
    const editor = (name: string, text: string): Script => async (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(processCwd(ctx), 'shared.txt'), content: text } }] };
      if (heard.has(name)) return { text: 'done' };
      if (ctx.step === 1) await found.wait;
      const told = ctx.userTexts.find((t) => t.includes('conflict guard'));
      if (told || ctx.step > 8) { heard.set(name, told ?? ''); return finishStep(`${name} done`); }
      return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'editing' } }] };
    };
    const h = await hubWith({ a: editor('a', 'from a\n'), b: editor('b', 'from b\n'), solo: editor('solo', 'solo\n') });
    const repo = await initRepo(join(h.dir, 'repo'));
    const other = await initRepo(join(h.dir, 'other'));
    const a = await h.call('spawn_agent', { prompt: '@script:a', title: 'edits a', cwd: repo, worktree: true });
    const b = await h.call('spawn_agent', { prompt: '@script:b', title: 'edits b', cwd: repo, worktree: true });
    // The same file name in another repository is no overlap.
    const solo = await h.call('spawn_agent', { prompt: '@script:solo', title: 'other repo', cwd: other, worktree: true });

    const overlaps = await eventually('the overlap', async () => {
      const r = await rows(h.hub, sql<{ file: string; job_a: string; job_b: string; cleared_at: number | null }>`SELECT * FROM overlaps`);
      return r.length ? r : undefined;
    }, 90_000);
    assert.deepEqual(overlaps.map((r) => [r.file, [r.job_a, r.job_b].sort()]), [['shared.txt', [a.job_id, b.job_id].sort()]], 'one overlap: the pair and the file');
    const ga = await h.call('get_agent', { job_id: a.job_id });
    assert.deepEqual(ga.overlaps, [{ with: b.job_id, title: 'edits b', files: ['shared.txt'], locks_conflict: false }]);
    const w = await h.call('wait_for_agents', { job_ids: [a.job_id, b.job_id, solo.job_id], timeout_s: 30 });
    const items = w.attention.filter((x: { kind: string }) => x.kind === 'overlap');
    assert.equal(items.length, 1, `the lead hears it once: ${JSON.stringify(w.attention)}`);
    assert.deepEqual([...items[0].job_ids].sort(), [a.job_id, b.job_id].sort());
    assert.deepEqual(items[0].files, ['shared.txt']);
    const listed = await h.call('list_overlaps', {});
    assert.equal(listed.overlaps.length, 1);
    assert.match(overlapsText(await listOverlaps(h.hub.ctx.sql.db)), new RegExp(`! ${a.job_id}|! ${b.job_id}`));
    const floor = buildFloor(await readFloorInput(h.hub.ctx.sql.db, { now: Date.now(), hub: null, cap: 8, source: 'hub' }), Date.now());
    assert.ok(floor.needs_you.some((n) => n.kind === 'overlap' && /shared\.txt/.test(n.text)), 'NEEDS YOU shows it (status, watch, the page)');
    found.open();

    for (const id of [a.job_id, b.job_id, solo.job_id]) await waitForJob(h.hub, id, (j) => j.status === 'succeeded', 90_000);
    assert.match(heard.get('a') ?? '', new RegExp(`agent ${b.job_id} \\("edits b"\\) is also changing shared\\.txt`), 'a is told about b');
    assert.match(heard.get('b') ?? '', new RegExp(`agent ${a.job_id} \\("edits a"\\) is also changing shared\\.txt`), 'b is told about a');
    assert.equal(heard.get('solo'), '', 'the agent in the other repository is told nothing');
    const msgs = (await rows(h.hub, sql<{ to_id: string }>`SELECT to_id FROM messages WHERE from_id = 'overseer' AND text LIKE '%conflict guard%' ORDER BY to_id`)).map((r) => r.to_id);
    assert.deepEqual(msgs, [a.job_id, b.job_id].sort(), 'one message to each, once');
    await eventually('closed when the jobs ended', async () => Number((await row(h.hub, sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM overlaps WHERE cleared_at IS NULL`))!.n) === 0, 10_000);
    assert.equal((await h.call('list_overlaps', {})).overlaps.length, 0);
    assert.equal((await h.call('list_overlaps', { all: true })).overlaps[0].open, false);
  });
});
