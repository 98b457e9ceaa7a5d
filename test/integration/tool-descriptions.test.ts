// Integration: every tool a model can list (the lead's set and an agent's set, from a real hub's
// tools/list) says what it does, and every parameter in its published inputSchema — nested
// object fields and the fields of array items included — says what its value means.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';

const MIN_CHARS = 10;

interface JsonSchema {
  type?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema | JsonSchema[];
  $ref?: string;
}
interface Listed { name: string; description?: string; inputSchema: JsonSchema }

/** Every property path under `s` ("tool.a", "tool.a.b", "tool.list[].c") with its schema. */
function properties(s: JsonSchema, at: string): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = [];
  for (const [name, p] of Object.entries(s.properties ?? {})) {
    const path = `${at}.${name}`;
    out.push([path, p]);
    if (p.properties) out.push(...properties(p, path));
    const items = Array.isArray(p.items) ? p.items : p.items ? [p.items] : [];
    for (const it of items) if (it.properties) out.push(...properties(it, `${path}[]`));
  }
  return out;
}

/** The tools with no description, and the parameters without a real one, of a tools/list. */
function undescribed(tools: Listed[]): string[] {
  const bad: string[] = [];
  for (const t of tools) {
    if (!t.description?.trim()) bad.push(`${t.name}: no tool description`);
    for (const [path, p] of properties(t.inputSchema, t.name)) {
      if (p.$ref) bad.push(`${path}: published as a $ref (${p.$ref}), without a description of its own`);
      else if ((p.description?.trim().length ?? 0) < MIN_CHARS) bad.push(`${path}: description ${JSON.stringify(p.description ?? null)}`);
    }
  }
  return bad;
}

let h: TestHub;
let agent: Client;

before(async () => {
  h = await startTestHub({ scripts: { hang: [{ delayMs: 120_000, text: 'never' }] } });
  const id = (await h.call('spawn_agent', { prompt: '@script:hang' })).job_id as string;
  await waitForJob(h.hub, id, (j) => j.status === 'running');
  agent = await h.connect({ role: 'agent', jobId: id });
});
after(async () => { await h.stop(); });

describe('tool descriptions in tools/list', () => {
  for (const role of ['lead', 'agent'] as const) {
    test(`the ${role}'s tools and every parameter, nested ones included, are described`, async () => {
      const tools = (await (role === 'lead' ? h.client : agent).listTools()).tools as Listed[];
      const names = tools.map((t) => t.name);
      // The walk covered the role's own set and reached nested fields (so an empty walk cannot pass).
      const own = role === 'lead' ? ['start_workflow', 'respond', 'pause_agent', 'list_kb'] : ['finish', 'request_approval', 'check_permission', 'ask_lead'];
      for (const n of ['spawn_agent', 'lock_files', 'watch_notes', 'report_learnings', ...own]) assert.ok(names.includes(n), `${role} lists ${n}`);
      const paths = tools.flatMap((t) => properties(t.inputSchema, t.name).map(([p]) => p));
      const nested = role === 'lead'
        ? ['start_workflow.implementer.provider', 'start_workflow.reviewer.model', 'start_workflow.phase_limits.timeout_s', 'report_learnings.learnings[].title']
        : ['request_approval.plan.rationale', 'request_approval.plan.rollback', 'report_learnings.learnings[].scope', 'check_permission.tool_name'];
      for (const p of nested) assert.ok(paths.includes(p), `${role}'s schemas publish ${p}`);
      assert.deepEqual(undescribed(tools), []);
    });
  }
});
