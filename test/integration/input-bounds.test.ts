// Integration: every tool input is bounded in depth and size before any handler runs — a deeply
// nested or huge argument gets a readable refusal naming the limit, not an internal stack
// overflow, and changes nothing (issue 9).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { count } from '../helpers/state.js';
import { sql } from 'kysely';

let h: TestHub;
let agent: Client;

function nested(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

before(async () => {
  h = await startTestHub({ scripts: { hang: [{ delayMs: 120_000, text: 'never' }] }, progressEveryMs: 50 });
  const id = (await h.call('spawn_agent', { prompt: '@script:hang' })).job_id;
  await waitForJob(h.hub, id, (j) => j.status === 'running');
  agent = await h.connect({ role: 'agent', jobId: id });
});
after(async () => { await h.stop(); });

describe('input bounds', () => {
  for (const depth of [200, 5_000]) {
    test(`check_permission with input nested ${depth} deep is refused readably`, async () => {
      const events = await count(h.hub, sql`SELECT COUNT(*) AS n FROM events`);
      const r = await agent.callTool({ name: 'check_permission', arguments: { tool_name: 'Write', input: { file_path: 'a', deep: nested(depth) }, tool_use_id: 't1' } }, undefined, { timeout: 60_000 });
      const text = (r.content as { text: string }[]).map((x) => x.text).join('');
      assert.doesNotMatch(text, /stack size|internal:/);
      assert.match(text, /nested deeper than 64 levels/);
      assert.equal(await count(h.hub, sql`SELECT COUNT(*) AS n FROM events`), events, 'nothing recorded');
    });
  }

  test('ordinary inputs pass (a 50,000-character string, 1,000 list items)', async () => {
    const w = await agent.callTool({ name: 'write_note', arguments: { key: 'big', value: 'y'.repeat(50_000) } });
    assert.equal(w.isError, undefined);
    const l = await agent.callTool({ name: 'watch_notes', arguments: { keys: ['big'], after_version: 0, timeout_s: 1 } });
    assert.equal(l.isError, undefined);
  });
});
