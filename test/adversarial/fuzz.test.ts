// Adversarial: a schema-driven fuzzer. For both roles, every tool in tools/list gets at least
// 20 invalid inputs generated from its own published JSON schema, over HTTP with a real token.
// Each must be refused (isError or a JSON-RPC error) with a text naming the field, and change
// nothing: the state tables' row counts, max ids, job statuses, notes and locks are identical
// before and after.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startAdvHub, callTool, snapshot, type AdvHub, type Agent } from './harness.js';
import { fuzzCases, type JsonSchema } from './schemaFuzz.js';
import { refused, finding, printTally } from './tally.js';

describe('adversarial: schema-driven fuzzer', { timeout: 120_000 }, () => {
  let a: AdvHub;
  let agent: Agent;
  let lead: Client;

  before(async () => {
    a = await startAdvHub();
    agent = await a.agent('fuzz target');
    lead = await a.client(a.h.hub.leadToken);
    await a.h.call('write_note', { key: 'x', value: 'seed' });
    await a.h.call('lock_files', { files: ['seed.txt'] });
  });
  after(async () => {
    await a?.stop();
    printTally('fuzz');
  });

  for (const role of ['lead', 'agent'] as const) {
    test(`${role}: every tool refuses ≥20 invalid inputs, names the field, changes nothing`, async () => {
      const c = role === 'lead' ? lead : agent.client;
      const tools = (await c.listTools()).tools;
      assert.ok(tools.length >= 10, `only ${tools.length} tools listed`);
      const misses: string[] = [];
      let total = 0;
      for (const t of tools) {
        const cases = fuzzCases(t.inputSchema as JsonSchema);
        assert.ok(cases.length >= 20, `${t.name}: only ${cases.length} invalid inputs generated`);
        const before = JSON.stringify(await snapshot(a.h));
        total += cases.length;
        const results = await Promise.all(cases.map((k) => callTool(c, t.name, k.args)));
        for (const [i, k] of cases.entries()) {
          const r = results[i]!;
          const label = `${role} ${t.name} ${k.field}: ${k.what}`;
          if (!r.isError) {
            misses.push(`${label} → accepted: ${r.text.slice(0, 120)}`);
            finding('fuzz', `${label} was accepted`);
          } else if (!r.text.includes(k.field)) {
            misses.push(`${label} → error does not name the field: ${r.text.slice(0, 200)}`);
            finding('fuzz', `${label}: error does not name "${k.field}": ${r.text.slice(0, 120)}`);
          } else refused('fuzz');
        }
        assert.equal(JSON.stringify(await snapshot(a.h)), before, `${role} ${t.name}: invalid inputs changed the state`);
      }
      assert.ok(total >= 20 * tools.length);
      assert.deepEqual(misses, []);
    });
  }
});
