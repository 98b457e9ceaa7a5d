// The crew brief on the floor (issue 31 point 6's gap): the Floor carries it (read through the
// layer with the rest of the floor) and an open /api/floor/stream gets a frame when it is set or
// cleared — with no agent running, so no message moves the floor: only the brief's own bus event.
// On a real hub (SQLite here; `npm run test:pg` runs it on PostgreSQL).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { openFloorStream } from '../helpers/floorStream.js';
import type { Floor } from '../../src/floor/types.js';

describe('the crew brief on the floor', () => {
  let h: TestHub;
  let base = '';
  let lead = '';
  before(async () => {
    h = await startTestHub();
    base = new URL(h.hub.http!.url).origin;
    lead = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
  });
  after(async () => { await h?.stop(); });

  const floor = async (): Promise<Floor> => {
    const r = await fetch(`${base}/api/floor`, { headers: { authorization: `Bearer ${lead}` } });
    assert.equal(r.status, 200);
    return await r.json() as Floor;
  };

  test('set and cleared: the floor carries it, and an open stream shows each change at once', async () => {
    assert.equal((await floor()).brief, null, 'no brief yet');
    const s = await openFloorStream(base, lead);
    try {
      await s.next((f) => f.brief === null);
      const before = Date.now();
      await h.call('set_brief', { text: 'Use pnpm.\nNever touch migrations/.' });
      const set = (await s.next((f) => f.brief?.text === 'Use pnpm.\nNever touch migrations/.', 5_000)).floor.brief!;
      assert.equal(set.version, 1);
      assert.equal(set.set_by, 'lead');
      assert.ok(set.set_at >= before - 1000 && set.set_at <= Date.now(), `set_at is epoch ms: ${set.set_at}`);
      const person = await fetch(`${base}/api/floor/brief`, { method: 'POST', headers: { authorization: `Bearer ${lead}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Ship small.' }) });
      assert.equal(person.status, 200);
      const second = (await s.next((f) => f.brief?.text === 'Ship small.', 5_000)).floor.brief!;
      assert.deepEqual([second.version, second.set_by], [2, 'person']);
      await h.call('clear_brief', {});
      await s.next((f) => f.brief === null, 5_000);
      assert.equal((await floor()).brief, null);
    } finally {
      s.close();
    }
  });
});
