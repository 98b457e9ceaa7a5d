// Adversarial: authorization. An agent calls every lead-only tool (derived from the two roles'
// tools/list) and the lead every agent-only tool; an agent acts on another subtree (a sibling's
// job, its parent's job) with every job-targeting tool. Each must be refused and change nothing;
// acting on its own child must work (the control that shows the checks can pass).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startAdvHub, callTool, ok, snapshot, diffText, type AdvHub, type Agent } from './harness.js';
import { validObject, type JsonSchema } from './schemaFuzz.js';
import { Checks, printTally } from './tally.js';
import { sql } from 'kysely';
import { job, row } from '../helpers/state.js';

describe('adversarial: authorization', { timeout: 120_000 }, () => {
  let a: AdvHub;
  let lead: Client;
  let A: Agent; // child of the lead
  let B: Agent; // A's sibling
  let A1: Agent; // A's child

  before(async () => {
    a = await startAdvHub();
    lead = await a.client(a.h.hub.leadToken);
    A = await a.agent('A');
    B = await a.agent('B');
    A1 = await a.agent('A1', A);
    await ok(B.client, 'lock_files', { files: ['b-owned.txt'] });
  });
  after(async () => {
    await a?.stop();
    printTally('authz');
  });

  /** Valid-looking arguments for `schema`, pointing every id field at `target`. */
  const argsFor = (schema: JsonSchema, target: string): Record<string, unknown> => {
    const args = validObject(schema);
    for (const k of Object.keys(schema.properties ?? {})) {
      if (k === 'job_id' || k === 'to') args[k] = target;
      if (k === 'job_ids') args[k] = [target];
      if (k === 'timeout_s') args[k] = 0;
    }
    return args;
  };

  test('every lead-only tool is refused to an agent, every agent-only tool to the lead; nothing changes', async () => {
    const leadTools = (await lead.listTools()).tools;
    const agentTools = (await A.client.listTools()).tools;
    const agentNames = new Set(agentTools.map((t) => t.name));
    const leadNames = new Set(leadTools.map((t) => t.name));
    const leadOnly = leadTools.filter((t) => !agentNames.has(t.name));
    const agentOnly = agentTools.filter((t) => !leadNames.has(t.name));
    assert.ok(leadOnly.length >= 5, `lead-only tools: ${leadOnly.map((t) => t.name)}`);
    assert.ok(agentOnly.length >= 3, `agent-only tools: ${agentOnly.map((t) => t.name)}`);
    const c = new Checks('authz: role');
    const before = JSON.stringify(await snapshot(a.h));
    for (const t of leadOnly) {
      const r = await callTool(A.client, t.name, argsFor(t.inputSchema as JsonSchema, B.id));
      c.check(`agent calls lead-only ${t.name}`, r.isError, r.text);
    }
    for (const t of agentOnly) {
      const r = await callTool(lead, t.name, argsFor(t.inputSchema as JsonSchema, B.id));
      c.check(`lead calls agent-only ${t.name}`, r.isError, r.text);
    }
    const after = JSON.stringify(await snapshot(a.h));
    c.check('state unchanged after role attacks', after === before, diffText(before, after));
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });

  const JOB_TOOLS: [string, Record<string, unknown>][] = [
    ['get_agent', {}],
    ['read_agent_output', {}],
    ['wait_for_agents', { timeout_s: 0 }],
    ['message_agent', { text: 'stop what you are doing' }],
    ['send_message', { text: 'psst' }],
    ['cancel_agent', { reason: 'hostile' }],
  ];

  test('an agent cannot act on a sibling\'s or its parent\'s job; it can on its own child', async () => {
    const c = new Checks('authz: subtree');
    // Control first: A may look at and message its own child.
    assert.equal((await ok(A.client, 'get_agent', { job_id: A1.id })).job_id ?? A1.id, A1.id);
    await ok(A.client, 'message_agent', { job_id: A1.id, text: 'hello child' });
    const before = JSON.stringify(await snapshot(a.h));
    const pairs: [string, Agent, string][] = [['A on sibling B', A, B.id], ['A1 on parent A', A1, A.id], ['A1 on uncle B', A1, B.id], ['B on nephew A1', B, A1.id]];
    for (const [who, actor, target] of pairs) {
      for (const [tool, extra] of JOB_TOOLS) {
        if (tool === 'send_message') continue; // agents may message anyone (docs/coordination.md); message_agent drives a job
        const args = tool === 'wait_for_agents' ? { job_ids: [target], ...extra } : { job_id: target, ...extra };
        const r = await callTool(actor.client, tool, args);
        c.check(`${who}: ${tool}`, r.isError, r.text);
      }
      const list = await callTool(actor.client, 'list_agents', { parent_id: target });
      c.check(`${who}: list_agents parent_id`, list.isError || !list.text.includes(target === A.id ? A1.id : target), list.text);
    }
    const rel = await callTool(A.client, 'release_files', { files: ['b-owned.txt'] });
    const holder = await row(a.h.hub, sql<{ holder: string }>`SELECT holder FROM locks WHERE path LIKE ${'%b-owned.txt'}`);
    c.check('A releases B\'s lock', holder?.holder === B.id, `${rel.text} holder=${holder?.holder}`);
    const after = JSON.stringify(await snapshot(a.h));
    c.check('state unchanged after subtree attacks', after === before, diffText(before, after));
    for (const id of [A.id, B.id, A1.id]) assert.equal((await job(a.h.hub, id)).status, 'running');
    c.assertOnlyKnown((u) => assert.deepEqual(u, []));
  });
});
