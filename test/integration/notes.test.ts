// Integration: notes through real MCP clients (lead and agents linked in memory) on a real
// hub and SQLite file — CAS, limits, watch woken by writes, listing, deletion.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { callAs } from '../helpers/mcp.js';

let h: TestHub;
let agent: Client;
let agentId: string;

before(async () => {
  h = await startTestHub({ scripts: { hang: [{ delayMs: 120_000, text: 'never' }] }, progressEveryMs: 50 });
  agentId = (await h.call('spawn_agent', { prompt: '@script:hang' })).job_id;
  await waitForJob(h.hub, agentId, (j) => j.status === 'running');
  agent = await h.connect({ role: 'agent', jobId: agentId });
});
after(async () => { await h.stop(); });

describe('notes', () => {
  test('write, read, version grows, author recorded', async () => {
    const w1 = await h.call('write_note', { key: 'plan/api', value: 'v1' });
    assert.deepEqual(w1, { key: 'plan/api', version: 1 });
    const w2 = await callAs(agent, 'write_note', { key: 'plan/api', value: 'v2' });
    assert.equal(w2.value.version, 2);
    const r = await h.call('read_note', { key: 'plan/api' });
    assert.equal(r.value, 'v2');
    assert.equal(r.author, agentId);
    assert.deepEqual(await h.call('read_note', { key: 'nope' }), { key: 'nope', found: false });
  });

  test('compare-and-set: a stale expected_version fails with the current version and changes nothing', async () => {
    await h.call('write_note', { key: 'cas/x', value: 'a', expected_version: 0 });
    const bad = await h.callRaw('write_note', { key: 'cas/x', value: 'b', expected_version: 0 });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /conflict: .*version 1, not 0/);
    assert.equal((await h.call('read_note', { key: 'cas/x' })).value, 'a');
    const ok = await h.call('write_note', { key: 'cas/x', value: 'b', expected_version: 1 });
    assert.equal(ok.version, 2);
    const missing = await h.callRaw('write_note', { key: 'cas/none', value: 'b', expected_version: 3 });
    assert.match(missing.text, /does not exist/);
    assert.equal((await h.call('read_note', { key: 'cas/none' })).found, false);
  });

  test('concurrent CAS increments from two clients never lose an update', async () => {
    await h.call('write_note', { key: 'counter', value: '0' });
    const inc = async (c: (t: string, a: Record<string, unknown>) => Promise<{ isError: boolean; value: any }>, n: number): Promise<void> => {
      for (let i = 0; i < n;) {
        const cur = (await c('read_note', { key: 'counter' })).value;
        const r = await c('write_note', { key: 'counter', value: String(Number(cur.value) + 1), expected_version: cur.version });
        if (!r.isError) i++;
      }
    };
    const lead = async (t: string, a: Record<string, unknown>) => { const r = await h.callRaw(t, a); return { isError: !!r.isError, value: r.isError ? undefined : JSON.parse(r.text) }; };
    await Promise.all([inc(lead, 40), inc((t, a) => callAs(agent, t, a), 40)]);
    assert.equal((await h.call('read_note', { key: 'counter' })).value, '80');
  });

  test('bad keys and values are refused clearly', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ key: 'a\nb', value: 'x' }, /control character/],
      [{ key: '', value: 'x' }, /key is empty/],
      [{ key: '/lead', value: 'x' }, /must not start or end with "\/"/],
      [{ key: 'a'.repeat(257), value: 'x' }, /longer than 256/],
      [{ key: 'big', value: 'x'.repeat(5 * 1024 * 1024) }, /over the 1048576-byte limit/],
    ];
    for (const [args, re] of cases) {
      const r = await h.callRaw('write_note', args);
      assert.equal(r.isError, true, JSON.stringify(args).slice(0, 50));
      assert.match(r.text, re);
    }
    assert.equal((await h.call('read_note', { key: 'big' })).found, false);
  });

  test('watch_notes is woken by another client\'s write; until_value and after_version', async () => {
    const watching = callAs(agent, 'watch_notes', { prefix: 'build/', timeout_s: 30 });
    await h.call('write_note', { key: 'build/status', value: 'started' });
    const w = await watching;
    assert.equal(w.value.timed_out, false);
    assert.deepEqual(w.value.notes.map((n: any) => [n.key, n.value]), [['build/status', 'started']]);

    const until = callAs(agent, 'watch_notes', { keys: ['build/status'], until_value: 'done', timeout_s: 30 });
    await h.call('write_note', { key: 'build/status', value: 'compiling' });
    await h.call('write_note', { key: 'build/status', value: 'done' });
    assert.equal((await until).value.notes[0].value, 'done');

    const past = await h.call('watch_notes', { keys: ['build/status'], after_version: 1, timeout_s: 1 });
    assert.equal(past.notes[0].version, 3, 'already past version 1: returns at once');
    const none = await h.call('watch_notes', { keys: ['build/status'], timeout_s: 0.2 });
    assert.equal(none.timed_out, true);
    const missing = await h.callRaw('watch_notes', { timeout_s: 1 });
    assert.match(missing.text, /give keys or a prefix/);
  });

  test('list with prefix and paging; delete with expected_version', async () => {
    for (const k of ['ns/a', 'ns/b', 'ns/c']) await h.call('write_note', { key: k, value: k });
    const p1 = await h.call('list_notes', { prefix: 'ns/', limit: 2 });
    assert.deepEqual(p1.notes.map((n: any) => n.key), ['ns/a', 'ns/b']);
    const p2 = await h.call('list_notes', { prefix: 'ns/', limit: 2, cursor: p1.next_cursor });
    assert.deepEqual(p2.notes.map((n: any) => n.key), ['ns/c']);
    assert.equal(p2.next_cursor, null);
    const bad = await h.callRaw('delete_note', { key: 'ns/a', expected_version: 9 });
    assert.match(bad.text, /version 1, not 9/);
    assert.deepEqual(await h.call('delete_note', { key: 'ns/a', expected_version: 1 }), { key: 'ns/a', deleted: true });
    assert.equal((await h.call('read_note', { key: 'ns/a' })).found, false);
  });
});
