// The composition root (src/compose.ts): an optional capability switched off in the
// configuration (config.capabilities) is not built, so its tools are absent from tools/list, and
// nothing else changes: every other tool's definition is the same, for the lead and for agents.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Hub } from '../../src/hub.js';
import { loadConfigFrom, type Capabilities } from '../../src/config.js';
import type { Caller } from '../../src/services/context.js';
import { InvalidInputError, InvalidStateError } from '../../src/errors.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { claudeBin, makeTempDir } from '../helpers/claude.js';
import { count } from '../helpers/state.js';
import { sql } from 'kysely';

const cleanups: (() => Promise<void>)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

type Tool = Awaited<ReturnType<Client['listTools']>>['tools'][number];

/** A hub (not started: no listener, no children) with these capabilities, and its tools/list per role. */
async function toolsOf(capabilities: Partial<Capabilities>): Promise<{ hub: Hub; lead: Tool[]; agent: Tool[] }> {
  const dir = await makeTempDir('ovs-compose');
  const config = loadConfigFrom({ home: join(dir, 'state'), claudeBin: claudeBin(), worktreesDir: join(dir, 'worktrees'), capabilities });
  const hub = await Hub.open({ config, projectDir: dir, processes: new ScriptedLauncher(() => ({})), childEnv: {}, kbGlobalDb: join(dir, 'global-kb.db'), writeHubInfo: false });
  const clients: Client[] = [];
  cleanups.push(async () => {
    for (const c of clients) await c.close();
    await hub.stop();
    await rm(dir, { recursive: true, force: true });
  });
  const list = async (caller: Caller): Promise<Tool[]> => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    await hub.server(caller).connect(a);
    const client = new Client({ name: 'composition-test', version: '1.0.0' });
    await client.connect(b);
    clients.push(client);
    return (await client.listTools()).tools;
  };
  return { hub, lead: await list({ role: 'lead' }), agent: await list({ role: 'agent', jobId: 'j-someone' }) };
}

const OWN_TOOLS: Record<keyof Capabilities, string[]> = {
  debates: ['start_debate', 'get_debate', 'list_debates', 'cancel_debate'],
  schedules: ['list_schedules', 'cancel_schedule'],
  search: ['search_output'],
  takeover: ['attach_agent', 'detach_agent'],
};

test('every capability is on by default, and each one switched off takes exactly its own tools out of tools/list', async () => {
  const all = await toolsOf({});
  const names = new Set(all.lead.map((t) => t.name));
  for (const own of Object.values(OWN_TOOLS)) for (const n of own) assert.ok(names.has(n), `${n} is offered by default`);
  for (const cap of Object.keys(OWN_TOOLS) as (keyof Capabilities)[]) {
    const off = await toolsOf({ [cap]: false });
    for (const role of ['lead', 'agent'] as const) {
      const expected = all[role].filter((t) => !OWN_TOOLS[cap].includes(t.name));
      if (role === 'lead') assert.ok(expected.length < all.lead.length, `${cap}: the lead was offered its tools with it on`);
      // Same tools in the same order, each definition identical (name, description, schemas, annotations).
      assert.deepEqual(off[role], expected, `${cap} off: the ${role}'s other tools are unchanged`);
    }
  }
});

test('all of them off at once: the core tools stay as they are', async () => {
  const all = await toolsOf({});
  const none = await toolsOf({ debates: false, schedules: false, search: false, takeover: false });
  const dropped = new Set(Object.values(OWN_TOOLS).flat());
  assert.deepEqual(none.lead, all.lead.filter((t) => !dropped.has(t.name)));
  assert.deepEqual(none.agent, all.agent.filter((t) => !dropped.has(t.name)));
  // What is not built is refused with the switch to turn it on, not a crash on undefined.
  assert.throws(() => none.hub.schedules, (e: Error) => e instanceof InvalidStateError && /capabilities\.schedules: false/.test(e.message));
  assert.throws(() => none.hub.debates, (e: Error) => e instanceof InvalidStateError && /capabilities\.debates/.test(e.message));
  assert.throws(() => none.hub.search, (e: Error) => e instanceof InvalidStateError && /capabilities\.search/.test(e.message));
  // spawn_agent keeps its schedule fields (its definition is the same) and refuses them clearly, writing nothing.
  await assert.rejects(none.hub.jobs.spawn({ prompt: 'later', at: '2030-01-01T00:00:00Z' } as never, { role: 'lead' }), (e: Error) => e instanceof InvalidInputError && /capabilities\.schedules: false/.test(e.message));
  assert.equal(await count(none.hub, sql`SELECT COUNT(*) AS n FROM jobs`), 0);
});

test('the capabilities key: JSON from the environment, defaults filled in; an unknown capability is refused saying which exist', () => {
  assert.deepEqual(loadConfigFrom({ home: '/s', capabilities: '{"debates":false}' }).capabilities, { debates: false, schedules: true, search: true, takeover: true });
  assert.throws(() => loadConfigFrom({ home: '/s', capabilities: { debate: false } }), /capabilities takes only debates, schedules, search, takeover/);
  assert.throws(() => loadConfigFrom({ home: '/s', capabilities: { search: 'no' } }), /capabilities\.search/);
});
