// Integration: roles on a real hub (issue 31 point 4). Bad input is refused before anything starts
// and writes nothing — an unknown role (the known ones listed, and where custom roles live), a role
// file with invalid front matter (file and line), a role wider than the spawning agent's; the role
// is stored on the job and shown by get_agent and list_agents; a sub-agent inherits its parent's
// role; the hook and the permission policy refuse a reviewer's writes and a custom role's tools.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob } from '../helpers/wait.js';
import { count, job } from '../helpers/state.js';
import { callAs } from '../helpers/mcp.js';
import { settingsDirOf } from '../../src/config.js';

const HANG = { hang: [{ delayMs: 120_000, text: 'never' }] };
let h: TestHub;
let rolesDir: string;
let reviewer: { id: string; client: Client };
let root: string;

before(async () => {
  h = await startTestHub({ scripts: HANG, progressEveryMs: 50 });
  rolesDir = join(settingsDirOf(h.hub.ctx.config), 'roles');
  mkdirSync(rolesDir, { recursive: true });
  writeFileSync(join(rolesDir, 'docs.md'), '---\ndescription: the docs only\nwrites: ["docs/**"]\ndenied_tools: [WebFetch]\nmodel: sonnet\n---\nKeep the docs short.\n');
  writeFileSync(join(rolesDir, 'broken.md'), '---\ndescription: broken\nwrites: docs/**\ncolour: blue\n---\n');
  const id = (await h.call('spawn_agent', { prompt: '@script:hang', title: 'Reviewer', role: 'reviewer' })).job_id as string;
  await waitForJob(h.hub, id, (j) => j.status === 'running');
  reviewer = { id, client: await h.connect({ role: 'agent', jobId: id }) };
  root = realpathSync(h.project);
});

after(async () => { await h?.stop(); });

const jobCount = (): Promise<number> => count(h.hub, sql`SELECT COUNT(*) AS n FROM jobs`);

test('an unknown role is refused before anything starts, naming the known roles and where custom ones live', async () => {
  const before = await jobCount();
  const r = await h.callRaw('spawn_agent', { prompt: 'x', role: 'auditor' });
  assert.equal(r.isError, true, r.text);
  assert.match(r.text, /unknown role "auditor": known roles: implementer, reviewer, planner, broken, docs; a custom role is a file .*roles\/<name>\.md/);
  assert.equal(await jobCount(), before, 'no job was written');
});

test('a role file with invalid front matter is refused with its file and lines', async () => {
  const before = await jobCount();
  const r = await h.callRaw('spawn_agent', { prompt: 'x', role: 'broken' });
  assert.equal(r.isError, true, r.text);
  assert.match(r.text, /Invalid role file .*roles\/broken\.md/);
  assert.match(r.text, /broken\.md:3: writes = "docs\/\*\*": must be a list/);
  assert.match(r.text, /broken\.md:4: unknown key "colour"/);
  assert.equal(await jobCount(), before);
});

test('a reviewer cannot start an implementer or a writing custom role; its sub-agents inherit its role, and a planner is fine', async () => {
  const before = await jobCount();
  for (const role of ['implementer', 'docs']) {
    const r = await callAs(reviewer.client, 'spawn_agent', { prompt: '@script:hang', role });
    assert.equal(r.isError, true, r.text);
    assert.match(r.text, new RegExp(`${reviewer.id}: role "${role}" is wider than your own role "reviewer"`));
  }
  assert.equal(await jobCount(), before, 'nothing written by the refusals');
  const inherited = await callAs(reviewer.client, 'spawn_agent', { prompt: '@script:hang', title: 'Sub' });
  assert.equal(inherited.isError, false, inherited.text);
  assert.equal((await job(h.hub, inherited.value.job_id)).role, 'reviewer');
  const planner = await callAs(reviewer.client, 'spawn_agent', { prompt: '@script:hang', title: 'Plan', role: 'planner' });
  assert.equal(planner.isError, false, planner.text);
  assert.equal((await h.call('get_agent', { job_id: planner.value.job_id })).role, 'planner');
  await h.call('cancel_agent', { job_id: inherited.value.job_id });
  await h.call('cancel_agent', { job_id: planner.value.job_id });
});

test('the role is stored on the job and shown by get_agent and list_agents; a custom role brings its model', async () => {
  const plain = await h.call('spawn_agent', { prompt: '@script:hang', title: 'Plain', at: '2099-01-01T00:00:00Z' });
  const docs = await h.call('spawn_agent', { prompt: '@script:hang', title: 'Docs', role: 'docs', at: '2099-01-01T00:00:00Z' });
  assert.equal((await h.call('get_agent', { job_id: plain.job_id })).role, 'implementer');
  const row = await job(h.hub, docs.job_id);
  assert.equal(row.role, 'docs');
  assert.equal(row.model, 'sonnet', 'the role\'s model fills in what the call left out');
  assert.deepEqual(JSON.parse(row.role_json!), { name: 'docs', writes: ['docs/**'], denied: ['WebFetch'], model: 'sonnet', instructions: 'Keep the docs short.' });
  const listed = (await h.call('list_agents', { limit: 200 })).agents as { job_id: string; role: string }[];
  assert.equal(listed.find((a) => a.job_id === docs.job_id)?.role, 'docs');
  assert.equal(listed.find((a) => a.job_id === reviewer.id)?.role, 'reviewer');
  for (const id of [plain.job_id, docs.job_id]) await h.call('cancel_agent', { job_id: id });
});

test('the hook and the policy refuse a reviewer\'s writes (file tools, Bash, git) and let its reads and read-only commands through', async () => {
  const caller = { role: 'agent' as const, jobId: reviewer.id };
  const hook = (tool_name: string, tool_input: Record<string, unknown>) => h.hub.hook.answer(caller, { tool_name, tool_input, cwd: root }, 'claude');
  for (const [tool, input] of [
    ['Write', { file_path: join(root, 'a.txt'), content: 'x' }], ['Edit', { file_path: join(root, 'a.txt'), old_string: 'a', new_string: 'b' }],
    ['Bash', { command: 'echo x > f' }], ['Bash', { command: 'node -e "require(\'fs\').writeFileSync(\'g\',\'x\')"' }], ['Bash', { command: 'git commit -am x' }],
  ] as const) {
    const v = await hook(tool, input);
    assert.equal(v.decision, 'deny', `${tool} ${JSON.stringify(input)}: ${JSON.stringify(v)}`);
    assert.match(v.reason ?? '', /your role "reviewer" is read-only/);
  }
  for (const [tool, input] of [['Read', { file_path: join(root, 'x') }], ['Bash', { command: 'git log --oneline 2>/dev/null' }]] as const) {
    const v = await hook(tool, input);
    assert.notEqual(v.decision, 'deny', `${tool}: ${JSON.stringify(v)}`);
  }
  // The permission prompt path (tools the hook does not see) refuses too, whatever the policy says.
  const j = await h.hub.permissions.judge(caller, 'NotebookEdit', { notebook_path: join(root, 'n.ipynb') });
  assert.equal(j.action, 'deny');
  assert.match((j as { message: string }).message, /read-only/);
});
