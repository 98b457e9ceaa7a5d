// The lookups the hub's services moved onto the layer (issue 29 step 6b, the rest), on SQLite and
// PostgreSQL: an agent's rights over a job (inSubtree), the ids an unknown id's error names, titles
// and rows of several jobs at once, a job's latest merge; wait_for_agents' attention (unread
// messages from the awaited tree, warnings and overlaps the lead has not seen, each marked seen
// once); the messages waiting for a child's conversation and their delivery.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { Q } from '../../src/store/sql/tx.js';
import { getJob, inSubtree, insertJob, jobsOf, lastMergeOf, nearbyIds, titlesOf } from '../../src/store/sql/jobs.js';
import { addMessage, markDelivered, markMessagesRead, undelivered, unreadFrom } from '../../src/store/sql/messages.js';
import { clearWarning, markWarningsSeen, openWarningsOfJobs, raiseWarning, unseenWarnings } from '../../src/store/sql/warnings.js';
import { addOverlaps, clearJobOverlaps, markOverlapsSeen, unseenOverlaps } from '../../src/store/sql/overlaps.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';

for (const dialect of ['sqlite', 'postgres'] as const) {
  describe(`job lookups on ${dialect}`, () => {
    const open = async (t: { after: (fn: () => Promise<void> | void) => void }): Promise<Q> => (await openDialect(dialect, t)).s.db;

    test('rights, near ids, titles and rows of several jobs, the latest merge', async (t) => {
      const q = await open(t);
      await insertJob(q, newJob('j-aaaa1', { title: 'root' }), 1);
      await insertJob(q, newJob('j-aaaa2', { parent_id: 'j-aaaa1', depth: 2, title: 'child' }), 2);
      await insertJob(q, newJob('j-bbbb3', { parent_id: 'j-aaaa2', depth: 3, title: 'grandchild' }), 3);
      await insertJob(q, newJob('j-cccc4', { title: 'other' }), 4);
      // A job is in its own subtree and in its ancestors'; never in a sibling's or a descendant's.
      assert.equal(await inSubtree(q, 'j-aaaa1', 'j-bbbb3'), true);
      assert.equal(await inSubtree(q, 'j-aaaa2', 'j-bbbb3'), true);
      assert.equal(await inSubtree(q, 'j-bbbb3', 'j-bbbb3'), true);
      assert.equal(await inSubtree(q, 'j-bbbb3', 'j-aaaa2'), false);
      assert.equal(await inSubtree(q, 'j-cccc4', 'j-aaaa2'), false);
      assert.equal(await inSubtree(q, 'j-aaaa1', 'j-nope'), false);
      // Same first four characters first (newest first), then the newest, five at most.
      assert.deepEqual(await nearbyIds(q, 'j-aaaa9'), ['j-aaaa2', 'j-aaaa1', 'j-cccc4', 'j-bbbb3']);
      assert.deepEqual(await nearbyIds(q, 'zzz', 2), ['j-cccc4', 'j-bbbb3']);
      assert.deepEqual([...(await titlesOf(q, ['j-cccc4', 'j-aaaa1', 'j-cccc4', 'j-nope']))].sort(), [['j-aaaa1', 'root'], ['j-cccc4', 'other']]);
      assert.equal((await titlesOf(q, [])).size, 0);
      assert.deepEqual((await jobsOf(q, ['j-cccc4', 'j-nope', 'j-aaaa1', 'j-cccc4'])).map((j) => j.id), ['j-cccc4', 'j-aaaa1'], 'in the order asked, once each');
      assert.deepEqual(await jobsOf(q, []), []);
      assert.equal(await lastMergeOf(q, 'j-aaaa1'), undefined);
      for (const [sha, at] of [['c1', 10], ['c2', 20]] as const) {
        await q.insertInto('job_merges' as never).values({ job_id: 'j-aaaa1', repo_root: '/r', branch: 'b', target: 'main', mode: 'merge', commit_sha: sha, previous: 'p', merged_at: at } as never).execute();
      }
      assert.deepEqual(await lastMergeOf(q, 'j-aaaa1'), { target: 'main', mode: 'merge', commit_sha: 'c2', merged_at: 20 });
      assert.equal((await getJob(q, 'j-aaaa1'))!.title, 'root');
    });

    test('wait_for_agents\' attention: unread messages from the awaited tree, unseen warnings and overlaps, each once', async (t) => {
      const q = await open(t);
      for (const id of ['a', 'b', 'c']) await insertJob(q, newJob(id, { status: 'running' }), 1);
      const m1 = await addMessage(q, { from: 'a', to: 'lead', text: 'one', now: 1, delivered: false });
      await addMessage(q, { from: 'c', to: 'lead', text: 'not awaited', now: 2, delivered: false });
      const m3 = await addMessage(q, { from: 'b', to: 'lead', text: 'two', now: 3, delivered: false });
      await addMessage(q, { from: 'a', to: 'b', text: 'to b', now: 4, delivered: false });
      assert.deepEqual((await unreadFrom(q, 'lead', ['a', 'b'])).map((m) => m.text), ['one', 'two']);
      assert.deepEqual(await unreadFrom(q, 'lead', []), []);
      await markMessagesRead(q, [m1], 5);
      assert.deepEqual((await unreadFrom(q, 'lead', ['a', 'b'])).map((m) => m.id), [m3]);

      const w1 = (await raiseWarning(q, 'a', 'stalled', 'quiet', 10))!;
      await raiseWarning(q, 'c', 'stalled', 'quiet too', 11);
      const w3 = (await raiseWarning(q, 'b', 'turns_high', '90 of 100', 12))!;
      await raiseWarning(q, 'a', 'long_running', 'an hour', 13);
      await clearWarning(q, 'a', 'long_running', 14);
      assert.deepEqual((await unseenWarnings(q, ['a', 'b'])).map((w) => w.id), [w1.id, w3.id], 'open ones of these jobs, oldest first');
      await markWarningsSeen(q, [w1.id], 15);
      await markWarningsSeen(q, [w1.id], 99);
      assert.deepEqual((await unseenWarnings(q, ['a', 'b'])).map((w) => w.id), [w3.id]);
      assert.deepEqual(await unseenWarnings(q, []), []);
      const byJob = await openWarningsOfJobs(q, ['a', 'b', 'c', 'nope']);
      assert.deepEqual([...byJob].map(([id, ws]) => [id, ws.map((w) => w.kind)]), [['a', ['stalled']], ['b', ['turns_high']], ['c', ['stalled']], ['nope', []]], 'open ones by job, seen or not; a cleared one is not open');

      await addOverlaps(q, { repoRoot: '/r', a: 'b', b: 'a', files: ['x.ts', 'y.ts'], locksConflict: false, now: 20 });
      await addOverlaps(q, { repoRoot: '/r', a: 'c', b: 'b', files: ['z.ts'], locksConflict: true, now: 21 });
      const seen = await unseenOverlaps(q, ['a']);
      assert.deepEqual(seen.map((o) => [o.job_a, o.job_b, o.file]), [['a', 'b', 'x.ts'], ['a', 'b', 'y.ts']], 'either side of the pair');
      assert.deepEqual((await unseenOverlaps(q, ['c'])).map((o) => o.file), ['z.ts']);
      await markOverlapsSeen(q, seen.map((o) => o.id), 22);
      assert.deepEqual((await unseenOverlaps(q, ['a', 'b'])).map((o) => o.file), ['z.ts']);
      await clearJobOverlaps(q, 'c', 23);
      assert.deepEqual(await unseenOverlaps(q, ['a', 'b', 'c']), [], 'a cleared overlap is no news');
    });

    test('messages waiting for a conversation: undelivered ones oldest first, delivered once pushed', async (t) => {
      const q = await open(t);
      await insertJob(q, newJob('a'), 1);
      const m1 = await addMessage(q, { from: 'lead', to: 'a', text: 'first', now: 1, delivered: false });
      await addMessage(q, { from: 'lead', to: 'a', text: 'pushed', now: 2, delivered: true });
      const m3 = await addMessage(q, { from: 'lead', to: 'a', text: 'third', now: 3, delivered: false });
      await addMessage(q, { from: 'lead', to: 'b', text: 'elsewhere', now: 4, delivered: false });
      assert.deepEqual((await undelivered(q, 'a')).map((m) => m.text), ['first', 'third']);
      await markDelivered(q, [m1], 5);
      assert.deepEqual((await undelivered(q, 'a')).map((m) => m.id), [m3]);
      await markDelivered(q, [], 6);
      assert.deepEqual((await undelivered(q, 'a')).map((m) => m.id), [m3]);
    });
  });
}
