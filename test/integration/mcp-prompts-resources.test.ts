// Integration: the lead's MCP prompts (recipes and project templates) and resources (agent
// summaries, outputs, notes, workflow plans) through a real SDK Client linked in memory to a
// native MCP server (src/mcp) built as the hub builds it, backed by a real Hub whose job ran a real claude against the fake API.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError, PromptListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { NativeMcpServer, type ServerDeps } from '../../src/mcp/server.js';
import { hubResourceDeps, noteUri, RESOURCE_NOT_FOUND, type ResourceDeps } from '../../src/mcp/resources.js';
import { silentLogger } from '../../src/log.js';

const PROMPTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'prompts');

let h: TestHub;
let templatesDir: string;
let jobId: string;
let client: Client;
const listChanged: (() => void)[] = [];

/** A lead server as the hub would build it, plus prompts and resources, linked to a new client. */
const servers: NativeMcpServer[] = [];
async function connect(extra: Pick<ServerDeps, 'prompts' | 'resources'>): Promise<Client> {
  const native = new NativeMcpServer({ tools: h.hub.tools, version: 'test', log: silentLogger, ...extra });
  servers.push(native);
  const server = native.connection({ role: 'lead' });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const c = new Client({ name: 'test-lead', version: '1.0.0' });
  await c.connect(b);
  return c;
}

/** The JSON-RPC error a call rejects with. */
async function rpcError(p: Promise<unknown>): Promise<McpError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof McpError, `expected an McpError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

const text = (r: { contents: unknown[] }): string => (r.contents[0] as { text: string }).text;

before(async () => {
  h = await startTestHub({ scripts: { quick: [{ text: 'ok, all done' }] } });
  jobId = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'Quick job' })).job_id;
  await waitForJob(h.hub, jobId, (j) => j.status === 'succeeded' || j.status === 'failed');
  await h.call('write_note', { key: 'plan/api/v1', value: 'GET /users returns a page' });
  await h.call('write_note', { key: 'odd/../key with space%', value: 'odd value' });
  templatesDir = join(h.home, 'templates');
  mkdirSync(templatesDir, { recursive: true });
  writeFileSync(join(templatesDir, 'bugfix.md'), '---\ndescription: Fix a bug with a regression test\nmodel: claude-opus-4\nworktree: true\n---\nWrite the failing test first.\n');
  writeFileSync(join(templatesDir, 'broken.md'), '---\nprovider: gpt\n---\n');
  client = await connect({ prompts: { templatesDir, promptsDir: PROMPTS_DIR }, resources: hubResourceDeps(h.hub) });
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
    for (const f of listChanged.splice(0)) f();
  });
});
after(async () => {
  await client?.close();
  for (const s of servers) s.close();
  await h.stop();
});

describe('prompts', () => {
  test('the list has the recipes and one template-<name> per valid template file', async () => {
    const { prompts } = await client.listPrompts();
    const byName = new Map(prompts.map((p) => [p.name, p]));
    for (const r of ['fan-out', 'review-branch', 'run-workflow']) assert.ok(byName.has(r), `recipe ${r}`);
    // No arguments: Claude Code would split the request on whitespace across them.
    for (const r of ['fan-out', 'review-branch', 'run-workflow']) assert.deepEqual(byName.get(r)!.arguments, [], r);
    const t = byName.get('template-bugfix');
    assert.ok(t, 'template-bugfix is listed');
    assert.match(t.description ?? '', /^Fix a bug with a regression test \(model claude-opus-4; worktree\)$/);
    assert.deepEqual(t.arguments, []);
    assert.ok(!byName.has('template-broken'), 'an invalid template is not offered');
  });

  test('a template prompt asks the lead to spawn_agent with the template for the task the user typed', async () => {
    const r = await client.getPrompt({ name: 'template-bugfix' });
    assert.equal(r.messages.length, 1);
    assert.equal(r.messages[0]!.role, 'user');
    const msg = (r.messages[0]!.content as { text: string }).text;
    assert.match(msg, /ALL the text I wrote after the command name \(Claude Code shows it as `<command-args>`\)/);
    assert.match(msg, /`spawn_agent` with `template: "bugfix"`/);
    assert.match(msg, /model claude-opus-4; worktree/);
    assert.match(msg, /wait_for_agents/);
  });

  test('a recipe returns its Markdown body, which takes the request from the user\'s message', async () => {
    const r = await client.getPrompt({ name: 'review-branch' });
    const msg = (r.messages[0]!.content as { text: string }).text;
    assert.match(msg, /review the git branch I named with this command/);
    assert.ok(!/\{\{\w+\}\}/.test(msg));
    const fan = await client.getPrompt({ name: 'fan-out', arguments: {} });
    assert.match((fan.messages[0]!.content as { text: string }).text, /^Fan out to a crew of Overseer agents the work I asked for/);
  });

  test('errors: an unknown prompt, an invalid template', async () => {
    const unknown = await rpcError(client.getPrompt({ name: 'template-nope', arguments: { task: 'x' } }));
    assert.match(unknown.message, /Unknown template "nope"\. Templates in .*: broken, bugfix\./);
    const other = await rpcError(client.getPrompt({ name: 'no-such', arguments: {} }));
    assert.match(other.message, /Unknown prompt "no-such"\. Prompts: fan-out, review-branch, run-workflow, template-bugfix\./);
    const broken = await rpcError(client.getPrompt({ name: 'template-broken', arguments: { task: 'x' } }));
    assert.ok(broken.message.includes(join(templatesDir, 'broken.md')), broken.message);
    assert.match(broken.message, /provider = "gpt"/);
  });

  test('a new template file is listed without reconnecting, and the client is told the list changed', async () => {
    const changed = new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error('no prompts/list_changed notification within 10 s')), 10_000);
      listChanged.push(() => { clearTimeout(t); res(); });
    });
    writeFileSync(join(templatesDir, 'docs.md'), '---\ndescription: Write the docs\n---\nPlain words.\n');
    await changed;
    const { prompts } = await client.listPrompts();
    assert.ok(prompts.some((p) => p.name === 'template-docs'), 'template-docs is listed');
    const r = await client.getPrompt({ name: 'template-docs', arguments: { task: 'Document the CLI' } });
    assert.match((r.messages[0]!.content as { text: string }).text, /template `docs` \(Write the docs\)/);
  });
});

describe('resources', () => {
  test('templates: agent summary, agent output, note (key may contain "/")', async () => {
    const { resourceTemplates } = await client.listResourceTemplates();
    assert.deepEqual(resourceTemplates.map((t) => t.uriTemplate).sort(), [
      'overseer://agents/{job_id}', 'overseer://agents/{job_id}/output', 'overseer://notes/{+key}',
    ]);
  });

  test('the list enumerates recent jobs and notes so they can be @-mentioned', async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    assert.ok(uris.includes(`overseer://agents/${jobId}`));
    assert.ok(uris.includes(`overseer://agents/${jobId}/output`));
    assert.ok(uris.includes('overseer://notes/plan/api/v1'), 'the "/" of a key stays a path separator');
    const odd = noteUri('odd/../key with space%');
    assert.ok(uris.includes(odd));
    assert.equal(resources.find((r) => r.uri === `overseer://agents/${jobId}`)!.title, 'Quick job (succeeded)');
  });

  test('job ids and note keys complete from what exists', async () => {
    const ids = await client.complete({ ref: { type: 'ref/resource', uri: 'overseer://agents/{job_id}' }, argument: { name: 'job_id', value: jobId.slice(0, 3) } });
    assert.deepEqual(ids.completion.values, [jobId]);
    const keys = await client.complete({ ref: { type: 'ref/resource', uri: 'overseer://notes/{+key}' }, argument: { name: 'key', value: 'plan/' } });
    assert.deepEqual(keys.completion.values, ['plan/api/v1']);
  });

  test('an agent summary as JSON', async () => {
    const r = await client.readResource({ uri: `overseer://agents/${jobId}` });
    assert.equal((r.contents[0] as { mimeType?: string }).mimeType, 'application/json');
    const s = JSON.parse(text(r)) as { job_id: string; status: string; title: string; turns: number };
    assert.equal(s.job_id, jobId);
    assert.equal(s.status, 'succeeded');
    assert.equal(s.title, 'Quick job');
  });

  test('an agent output as readable text', async () => {
    const r = await client.readResource({ uri: `overseer://agents/${jobId}/output` });
    const out = text(r);
    assert.match(out, /assistant: ok, all done/);
    assert.match(out, /result: success/);
    assert.ok(out.length <= 20_000);
  });

  test('notes by key, "/" and odd characters included', async () => {
    const r = await client.readResource({ uri: 'overseer://notes/plan/api/v1' });
    assert.equal(text(r), 'GET /users returns a page');
    assert.equal((r.contents[0] as { _meta?: { version: number; author: string } })._meta?.version, 1);
    assert.equal(text(await client.readResource({ uri: noteUri('odd/../key with space%') })), 'odd value');
  });

  test('unknown ids are resource-not-found errors that say what exists', async () => {
    const job = await rpcError(client.readResource({ uri: 'overseer://agents/j-nope' }));
    assert.equal(job.code, RESOURCE_NOT_FOUND);
    assert.match(job.message, /No agent job "j-nope"\. Known job ids: /);
    assert.ok(job.message.includes(jobId));
    const out = await rpcError(client.readResource({ uri: 'overseer://agents/j-nope/output' }));
    assert.equal(out.code, RESOURCE_NOT_FOUND);
    const note = await rpcError(client.readResource({ uri: 'overseer://notes/plan/api/v2' }));
    assert.equal(note.code, RESOURCE_NOT_FOUND);
    assert.match(note.message, /No note "plan\/api\/v2"\. Notes under "plan\/api\/": plan\/api\/v1\./);
  });

  test('workflow plans, when a workflows dep is given', async () => {
    const deps: ResourceDeps = {
      ...hubResourceDeps(h.hub),
      workflows: { plan: (id) => (id === 'w-1' ? '- [x] milestone one\n- [ ] milestone two' : undefined), recent: () => [{ id: 'w-1', title: 'Dark mode' }] },
    };
    const c = await connect({ resources: deps });
    try {
      const { resourceTemplates } = await c.listResourceTemplates();
      assert.ok(resourceTemplates.some((t) => t.uriTemplate === 'overseer://workflows/{id}/plan'));
      const { resources } = await c.listResources();
      assert.ok(resources.some((r) => r.uri === 'overseer://workflows/w-1/plan' && r.title === 'Plan: Dark mode'));
      const r = await c.readResource({ uri: 'overseer://workflows/w-1/plan' });
      assert.equal((r.contents[0] as { mimeType?: string }).mimeType, 'text/markdown');
      assert.match(text(r), /- \[ \] milestone two/);
      const e = await rpcError(c.readResource({ uri: 'overseer://workflows/w-2/plan' }));
      assert.equal(e.code, RESOURCE_NOT_FOUND);
      assert.match(e.message, /No plan for workflow "w-2"/);
    } finally {
      await c.close();
    }
  });
});
