// A message waiting for its recipient is pushed into the conversation once: whoever pushes (the
// child's start, a `deliver` that found the child running, another hub) first takes the rows with
// one conditional UPDATE (src/store/sql/messages.ts `takeUndelivered`). Two connections take
// while messages keep arriving: every message is taken, none twice — on both databases.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSql } from '../../src/store/sql/open.js';
import { addMessage, takeUndelivered, untake, undelivered } from '../../src/store/sql/messages.js';
import { openDialect, type Dialect } from '../helpers/sqlDialect.js';

for (const dialect of ['sqlite', 'postgres'] as Dialect[]) {
  test(`${dialect}: two takers while messages arrive — each message taken exactly once; untaken ones wait again`, { timeout: 60_000 }, async (t) => {
    const { s: a, home, url } = await openDialect(dialect, t);
    const b = await openSql({ home, databaseUrl: url });
    t.after(() => b.close());
    const N = 150;
    const ids: number[] = [];
    const taken = new Map<number, number>();
    let writing = true;
    const taker = async (q: typeof a.db): Promise<void> => {
      for (;;) {
        const last = !writing; // one more round after the writer is done
        for (const m of await takeUndelivered(q, 'j-r', 1)) taken.set(m.id, (taken.get(m.id) ?? 0) + 1);
        if (last) return;
        await new Promise((r) => setImmediate(r));
      }
    };
    const writer = (async () => {
      for (let i = 0; i < N; i++) ids.push(await addMessage(a.db, { from: 'lead', to: 'j-r', text: `m${i}`, now: i, delivered: false }));
      writing = false;
    })();
    await Promise.all([writer, taker(a.db), taker(b.db)]);
    assert.equal(ids.length, N);
    assert.deepEqual([...taken.keys()].sort((x, y) => x - y), ids, 'every message was taken');
    assert.deepEqual([...taken.values()].filter((n) => n !== 1), [], 'no message was taken twice');
    assert.deepEqual(await undelivered(a.db, 'j-r'), []);

    await untake(a.db, ids.slice(0, 2));
    assert.deepEqual((await undelivered(b.db, 'j-r')).map((m) => m.id), ids.slice(0, 2), 'a message that could not be pushed waits again');
    assert.deepEqual((await takeUndelivered(b.db, 'j-r', 9)).map((m) => m.id), ids.slice(0, 2), 'oldest first');
  });
}
