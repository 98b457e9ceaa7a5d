// The send-back store's decisions (src/store/sql/sendBacks.ts) on both databases: a round is taken
// only from `failed` and only under the bound, and with two connections taking the same round at
// once exactly one wins; a sent-back job's re-merge is claimed once.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSql } from '../../src/store/sql/open.js';
import { insertJob } from '../../src/store/sql/jobs.js';
import { getSendBack, giveBackRound, moveSendBack, recordFailure, sendBackView, takeRound } from '../../src/store/sql/sendBacks.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect, type Dialect } from '../helpers/sqlDialect.js';

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  describe(`send-backs on ${dialect}`, () => {
    test('rounds are taken from failed only, under the bound; a refused resume gives its round back; the view says where it stands', async (t) => {
      const { s } = await openDialect(dialect, t);
      const q = s.db;
      await insertJob(q, newJob('j-sb1', { worktree: 1, branch: 'b1', status: 'succeeded' }), 1);
      assert.equal(await takeRound(q, 'j-sb1', 2), undefined, 'nothing failed: no round');
      await recordFailure(q, 'j-sb1', { reason: 'checks_failed', detail: { target: 'main' }, options: { mode: 'merge' }, maxRounds: 2, now: 3 });
      assert.equal(await takeRound(q, 'j-sb1', 4), 1);
      assert.equal(await takeRound(q, 'j-sb1', 5), undefined, 'out already: a second taker gets nothing');
      await giveBackRound(q, 'j-sb1', 6);
      assert.deepEqual(sendBackView(await getSendBack(q, 'j-sb1')), { round: 0, max: 2, status: 'failed', reason: 'checks_failed' });
      assert.equal(await takeRound(q, 'j-sb1', 7), 1);
      assert.equal(await moveSendBack(q, 'j-sb1', ['out'], 'merging', 8), true);
      assert.equal(await moveSendBack(q, 'j-sb1', ['out'], 'merging', 9), false, 'the re-merge is claimed once');
      await recordFailure(q, 'j-sb1', { reason: 'conflict', detail: { target: 'main', files: ['a'] }, options: { mode: 'merge' }, maxRounds: 5, now: 10 });
      assert.equal(await takeRound(q, 'j-sb1', 11), 2);
      await moveSendBack(q, 'j-sb1', ['out'], 'merging', 12);
      await recordFailure(q, 'j-sb1', { reason: 'conflict', detail: { target: 'main', files: ['a'] }, options: { mode: 'merge' }, maxRounds: 5, now: 13 });
      assert.equal(await takeRound(q, 'j-sb1', 14), undefined, 'the bound first recorded (2) holds');
      assert.equal(await moveSendBack(q, 'j-sb1', ['failed'], 'asked', 15, { request_id: 'r-1' }), true);
      assert.deepEqual(sendBackView(await getSendBack(q, 'j-sb1')), { round: 2, max: 2, status: 'asked', reason: 'conflict', request_id: 'r-1' });
    });

    test('two connections take the same round at once: exactly one wins, the round counts once', async (t) => {
      const { s, home, url } = await openDialect(dialect, t);
      const other = await openSql({ home, databaseUrl: url });
      t.after(() => other.close());
      for (let i = 0; i < 20; i++) {
        const id = `j-race${i}`;
        await insertJob(s.db, newJob(id, { worktree: 1, branch: `b${i}`, status: 'succeeded' }), i);
        await recordFailure(s.db, id, { reason: 'checks_failed', detail: { target: 'main' }, options: {}, maxRounds: 3, now: i });
        const won = await Promise.all([takeRound(s.db, id, 100 + i), takeRound(other.db, id, 100 + i), takeRound(s.db, id, 100 + i)]);
        assert.deepEqual(won.filter((r) => r !== undefined), [1], `race ${i}: ${JSON.stringify(won)}`);
        const claims = await Promise.all([moveSendBack(s.db, id, ['out'], 'merging', 200), moveSendBack(other.db, id, ['out'], 'merging', 200)]);
        assert.equal(claims.filter(Boolean).length, 1, `race ${i}: the re-merge claimed once`);
      }
    });
  });
}
