// Project rules through the tools, with children that start no process (ScriptedLauncher,
// hanging): an agent's sub-agent inherits its project and cannot be put in another; an agent's
// broadcast reaches only its own sub-agents; bad broadcasts and bad projects are refused
// before anything changes.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { count, job, rows } from '../helpers/state.js';
import { sql } from 'kysely';

async function call(c: Client, tool: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string; value: any }> {
  const r = await c.callTool({ name: tool, arguments: args });
  const text = (r.content as { text: string }[]).map((x) => x.text).join('\n');
  return { isError: !!r.isError, text, value: r.isError ? undefined : JSON.parse(text) };
}

describe('project rules', () => {
  let h: TestHub | undefined;
  after(async () => { await h?.stop(); });

  test('inheritance and an agent\'s broadcast stay inside its subtree; refusals change nothing', async () => {
    h = await startTestHub({ processes: new ScriptedLauncher(() => ({ hang: true })) });
    const A = (await h.call('spawn_agent', { prompt: 'a', title: 'A', project: 'alpha' })).job_id as string;
    const B = (await h.call('spawn_agent', { prompt: 'b', title: 'B', project: 'alpha' })).job_id as string;
    const agent = await h.connect({ role: 'agent', jobId: A });
    const A1 = (await call(agent, 'spawn_agent', { prompt: 'a1', title: 'A1' })).value.job_id as string;
    const A2 = (await call(agent, 'spawn_agent', { prompt: 'a2', title: 'A2', project: 'alpha' })).value.job_id as string;
    assert.equal((await job(h.hub, A1)).project, 'alpha');
    assert.equal((await job(h.hub, A2)).project, 'alpha');
    const jobs = () => count(h!.hub, sql`SELECT COUNT(*) AS n FROM jobs`);
    const messages = () => count(h!.hub, sql`SELECT COUNT(*) AS n FROM messages`);
    const before = await jobs();
    const escape = await call(agent, 'spawn_agent', { prompt: 'x', project: 'beta' });
    assert.equal(escape.isError, true);
    assert.match(escape.text, /^forbidden: project "beta": a sub-agent belongs to its parent's project \("alpha"\)/);
    const badName = await h.callRaw('spawn_agent', { prompt: 'x', project: 'no spaces' });
    assert.equal(badName.isError, true);
    assert.match(badName.text, /project must be 1\.\.100 letters, digits/);
    assert.equal(await jobs(), before, 'no job from the refusals');

    await eventually('all four run', async () => (await Promise.all([A, B, A1, A2].map((id) => job(h!.hub, id)))).every((j) => j.status === 'running'), 30_000);
    // The agent's broadcast: its sub-agents only (not itself, not its sibling B of the same project).
    const mine = await call(agent, 'message_agent', { to: '*', project: 'alpha', text: 'from A to its crew' });
    assert.deepEqual(mine.value.recipients, [A1, A2]);
    const got = await rows(h.hub, sql<{ to_id: string; from_id: string }>`SELECT to_id, from_id FROM messages WHERE text = 'from A to its crew' ORDER BY to_id`);
    assert.deepEqual(got.map((r) => r.to_id), [A1, A2].sort());
    assert.ok(got.every((r) => r.from_id === A));
    // The lead's broadcast: every running agent of alpha; none of another status or project.
    assert.deepEqual((await h.call('message_agent', { to: '*', project: 'alpha', text: 'all of alpha' })).recipients, [A, B, A1, A2]);
    const none = await h.call('message_agent', { to: '*', status: 'frozen', text: 'nobody' });
    assert.deepEqual(none.recipients, []);
    assert.match(none.note, /no frozen agent to message: nothing was sent/);
    const n = await messages();
    for (const [args, re] of [
      [{ text: 'who?' }, /job_id is missing: name the agent to message, or pass to: "\*"/],
      [{ job_id: A1, project: 'alpha', text: 'x' }, /project and status choose the agents of a broadcast/],
      [{ to: 'all', text: 'x' }, /to/],
    ] as [Record<string, unknown>, RegExp][]) {
      const r = await h.callRaw('message_agent', args);
      assert.equal(r.isError, true, JSON.stringify(args));
      assert.match(r.text, re);
    }
    assert.equal(await messages(), n, 'refused broadcasts stored nothing');

    // The floor over HTTP (what overseer watch --project reads): one project, archived ones hidden unless named.
    const C = (await h.call('spawn_agent', { prompt: 'c', title: 'C', project: 'gamma' })).job_id as string;
    const base = new URL(h.hub.http!.url).origin;
    const lead = readFileSync(join(h.home, 'lead.token'), 'utf8').trim();
    const floorIds = async (q: string): Promise<string[]> => {
      const r = await fetch(`${base}/api/floor${q}`, { headers: { authorization: `Bearer ${lead}` } });
      assert.equal(r.status, 200, await r.clone().text());
      const f = await r.json() as { running: { job_id: string; children: { job_id: string }[] }[]; queued: { job_id: string }[] };
      const all = (js: { job_id: string; children?: { job_id: string }[] }[]): string[] => js.flatMap((j) => [j.job_id, ...all(j.children ?? [])]);
      return [...all(f.running), ...all(f.queued)].sort();
    };
    assert.deepEqual(await floorIds('?project=gamma'), [C]);
    assert.deepEqual(await floorIds(''), [A, B, A1, A2, C].sort());
    await h.call('update_project', { name: 'alpha', archived: true });
    assert.deepEqual(await floorIds(''), [C], 'alpha archived: hidden');
    assert.deepEqual(await floorIds('?project=alpha'), [A, B, A1, A2].sort(), '… unless named');
    const bad = await fetch(`${base}/api/floor?project=${encodeURIComponent('a b')}`, { headers: { authorization: `Bearer ${lead}` } });
    assert.equal(bad.status, 400);
  });
});
