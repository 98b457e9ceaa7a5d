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

  test('a value far over one result is read whole in pieces; a CAS round trip keeps every character', async () => {
    const value = `${'line "quoted" \\ back\n\ttab 😀 \u0001'.repeat(20_000)}END`;
    assert.ok(Buffer.byteLength(value) < 1024 * 1024);
    const w = await callAs(agent, 'write_note', { key: 'big/doc', value });
    assert.equal(w.isError, false);
    const readAll = async (total: number): Promise<{ text: string; version: number; pieces: number }> => {
      let r = await h.call('read_note', { key: 'big/doc' });
      let text = r.value as string;
      let pieces = 1;
      assert.equal(r.total_chars, total);
      while (r.next_offset !== null) {
        assert.equal(r.next_offset, text.length, 'each piece starts where the last ended');
        r = await h.call('read_note', { key: 'big/doc', offset: r.next_offset, version: r.version });
        text += r.value;
        pieces++;
      }
      return { text, version: r.version, pieces };
    };
    const first = await readAll(value.length);
    assert.equal(first.text, value, 'no character lost or changed');
    assert.ok(first.pieces > 10, `read in ${first.pieces} pieces`);
    await h.call('write_note', { key: 'big/doc', value: `${first.text}+`, expected_version: first.version });
    assert.equal((await readAll(value.length + 1)).text, `${value}+`, 'the CAS write stored the whole value');

    const one = await h.call('read_note', { key: 'big/doc' });
    await h.call('write_note', { key: 'big/doc', value: 'changed' });
    const stale = await h.callRaw('read_note', { key: 'big/doc', offset: one.next_offset, version: one.version });
    assert.equal(stale.isError, true);
    assert.match(stale.text, /changed while you read it in pieces; read it again from offset 0/);
    const past = await h.callRaw('read_note', { key: 'big/doc', offset: 99 });
    assert.match(past.text, /offset 99 is past the end/);
  });

  test('watch_notes returns a long value as its first piece with next_offset, never cut short', async () => {
    const value = 'w'.repeat(60_000);
    const watching = callAs(agent, 'watch_notes', { prefix: 'bigwatch/', timeout_s: 30 });
    await h.call('write_note', { key: 'bigwatch/a', value });
    const got = (await watching).value.notes[0];
    assert.equal(got.total_chars, 60_000);
    assert.equal(got.value, value.slice(0, got.next_offset));
    assert.ok(!String(got.value).includes('truncated'));
  });

  test('keys with a character beyond U+FFFF right after the prefix are listed and watched', async () => {
    await h.call('write_note', { key: 'emo/😀', value: 'x' });
    await h.call('write_note', { key: 'emo/a', value: 'y' });
    const l = await h.call('list_notes', { prefix: 'emo/' });
    assert.deepEqual(l.notes.map((n: any) => n.key), ['emo/a', 'emo/😀']);
    const w = await h.call('watch_notes', { prefix: 'emo/', after_version: 0, timeout_s: 1 });
    assert.deepEqual(w.notes.map((n: any) => n.key).sort(), ['emo/a', 'emo/😀']);
  });

  test('watch_notes publishes its parameters (a refined schema used to be published empty)', async () => {
    const tools = (await h.client.listTools()).tools;
    const watch = tools.find((t) => t.name === 'watch_notes')!;
    assert.deepEqual(Object.keys(watch.inputSchema.properties ?? {}).sort(), ['after_version', 'keys', 'prefix', 'timeout_s', 'until_value']);
    for (const t of tools) {
      // Tools that take no parameters by design (their zod schemas are empty objects).
      if (['read_messages', 'release_files', 'get_brief', 'clear_brief'].includes(t.name)) continue;
      assert.ok(Object.keys(t.inputSchema.properties ?? {}).length > 0, `${t.name} publishes no parameters`);
    }
  });

  test('workflow notes belong to the workflow: another agent cannot write or delete them; nothing changes', async () => {
    await h.call('write_note', { key: 'workflow/w-demo/plan', value: '- [ ] one' });
    for (const [tool, args] of [['write_note', { key: 'workflow/w-demo/plan', value: '- [x] one' }], ['write_note', { key: 'workflow/w-demo/contract', value: 'x' }], ['delete_note', { key: 'workflow/w-demo/plan' }]] as const) {
      const r = await callAs(agent, tool, args);
      assert.equal(r.isError, true, `${tool} ${JSON.stringify(args)}`);
      assert.match(r.text, /belong to that workflow/);
    }
    const n = await h.call('read_note', { key: 'workflow/w-demo/plan' });
    assert.equal(n.value, '- [ ] one');
    assert.equal(n.version, 1);
    assert.equal((await h.call('read_note', { key: 'workflow/w-demo/contract' })).found, false);
  });
});
