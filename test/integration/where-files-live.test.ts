// docs/configuration.md's "Where things live" table, checked against what the built CLI really
// does (issue 27 point 5: every place that names where a file is read from is checked against the
// code). A person's setup: no OVERSEER_HOME, XDG_STATE_HOME and XDG_DATA_HOME of their own, a git
// project with `.overseer/` settings; `overseer mcp` as the lead's server starts the background
// hub; one worktree job with a real claude child against the fake model. Then every file the table
// names for the state directory is looked for where the table says, computed as the table says
// (`<repo>-<8 hex of sha256 of its real path>`), and so are the worktree and the global knowledge
// base. `agents/<writer>/undone/` is checked by test/e2e/lock-guard.test.ts (it needs a violation);
// `.mcp.json` and `.claude/settings*.json` by test/integration/init.test.ts.
// Needs `npm run build` first.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path, { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startFakeAnthropic, type FakeAnthropic } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir } from '../helpers/claude.js';
import { initRepo } from '../helpers/git.js';
import { alive } from '../helpers/wait.js';

const CLI = join(process.cwd(), 'dist', 'cli', 'main.js');
const DOC = readFileSync(join(process.cwd(), 'docs', 'configuration.md'), 'utf8');

/** The backticked names of the table row that starts with `| <what>`. */
function namesInRow(what: string): string[] {
  const row = DOC.split('\n').find((l) => l.startsWith(`| ${what}`));
  assert.ok(row, `docs/configuration.md has no row "${what}"`);
  const cells = row.split(' | ');
  return [...cells[0]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

function runCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env, cwd, timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? -1) : 0, stdout, stderr });
    });
  });
}

function json(result: object): any {
  const r = result as { content: { text: string }[]; isError?: boolean };
  assert.ok(!r.isError, r.content[0]?.text);
  return JSON.parse(r.content[0]!.text);
}

describe('where things live, as docs/configuration.md says', { timeout: 240_000 }, () => {
  let dir = '';
  let project = '';
  let env: NodeJS.ProcessEnv = {};
  let fake: FakeAnthropic;
  let client: Client | undefined;
  let transport: StdioClientTransport | undefined;
  let state = '';
  let jobId = '';

  before(async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    dir = await makeTempDir('ovs-where');
    project = join(dir, 'my-project');
    mkdirSync(project);
    await initRepo(project);
    fake = await startFakeAnthropic();
    fake.addScript('done', () => ({ text: 'nothing to change' }));
    env = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), CLAUDE_BIN: claudeBin(), XDG_STATE_HOME: join(dir, 'xdg-state'), XDG_DATA_HOME: join(dir, 'xdg-data') };
    delete env.OVERSEER_HOME;
    delete env.OVERSEER_SETTINGS_DIR;
    delete env.OVERSEER_WORKTREES_DIR;
    delete env.OVERSEER_PORT;
    const real = realpathSync(project);
    state = join(dir, 'xdg-state', 'overseer', 'projects', `my-project-${createHash('sha256').update(real).digest('hex').slice(0, 8)}`);
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    const info = join(state, 'hub.json');
    if (existsSync(info)) {
      const { pid } = JSON.parse(readFileSync(info, 'utf8')) as { pid: number };
      await runCli(['stop'], env, project);
      if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('settings are read from .overseer/ at the project root: a bad config.json there is named', async () => {
    assert.deepEqual(namesInRow('the project\'s settings').slice(0, 2), ['config.json', 'policy.json']);
    mkdirSync(join(project, '.overseer'));
    writeFileSync(join(project, '.overseer', 'config.json'), '{"maxAgents": -1}\n');
    const bad = await runCli(['status'], env, project);
    assert.notEqual(bad.code, 0, 'a bad .overseer/config.json was not read');
    assert.match(bad.stderr, /maxAgents/);
    assert.ok(bad.stderr.includes(join('.overseer', 'config.json')), bad.stderr);
    assert.ok(!existsSync(state), 'a refused start made the state directory');
    writeFileSync(join(project, '.overseer', 'config.json'), '{"maxAgents": 2}\n');
    // templates/<name>.md from the same directory (policy.json is read through the same
    // settingsDirOf, src/services/permissions.ts; test/integration/permissions.test.ts reads it).
    mkdirSync(join(project, '.overseer', 'templates'));
    writeFileSync(join(project, '.overseer', 'templates', 'careful.md'), '---\ndescription: careful test writer\n---\nWrite the tests first.\n');
    const t = await runCli(['templates', '--json'], env, project);
    assert.equal(t.code, 0, t.stderr);
    const listed = (JSON.parse(t.stdout) as { templates: { name: string; file: string }[] }).templates;
    assert.deepEqual(listed.map((x) => [x.name, realpathSync(x.file)]), [['careful', realpathSync(join(project, '.overseer', 'templates', 'careful.md'))]]);
  });

  test('the lead\'s server starts the hub in <state>, and a worktree job runs under $XDG_DATA_HOME', async () => {
    transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp'], env: env as Record<string, string>, cwd: project, stderr: 'pipe' });
    client = new Client({ name: 'where-lead', version: '1.0.0' });
    await client.connect(transport);
    jobId = json(await client.callTool({ name: 'spawn_agent', arguments: { prompt: '@script:done look', title: 'where', worktree: true } })).job_id;
    const waited = json(await client.callTool({ name: 'wait_for_agents', arguments: { job_ids: [jobId], timeout_s: 120 } }, undefined, { timeout: 150_000 }));
    assert.equal(waited.done[0]?.status, 'succeeded', JSON.stringify(waited));

    const db = new Database(join(state, 'state.db'), { readonly: true });
    const row = db.prepare('SELECT work_dir, worktree FROM jobs WHERE id = ?').get(jobId) as { work_dir: string; worktree: number };
    db.close();
    const repoDir = `my-project-${createHash('sha256').update(realpathSync(project)).digest('hex').slice(0, 8)}`;
    assert.equal(row.worktree, 1, 'the job has no worktree');
    assert.equal(path.dirname(row.work_dir), join(dir, 'xdg-data', 'overseer', 'worktrees', repoDir));
  });

  test('every file the table names for the state directory is there', () => {
    const names = namesInRow('the hub\'s state');
    assert.ok(names.length >= 14, `the row lost its names: ${names}`);
    const missing: string[] = [];
    for (const name of names) {
      if (name === 'agents/<writer>/undone/') continue; // test/e2e/lock-guard.test.ts
      // `.stderr` stands for agents/<job>/attempt-<n>.stderr, the name before it in the row.
      const rel = name === '.stderr' ? `agents/${jobId}/attempt-1.stderr` : name.replace('<job>', jobId).replace('<n>', '1');
      if (!existsSync(join(state, rel))) missing.push(`${name} (${join(state, rel)})`);
    }
    assert.deepEqual(missing, [], 'named in docs/configuration.md, not where it says');
  });

  test('the global knowledge base is $XDG_DATA_HOME/overseer/kb.db', async () => {
    assert.ok(client);
    const r = json(await client.callTool({ name: 'report_learnings', arguments: { learnings: [{ title: 'Where the global kb lives', content: 'The global knowledge base lives under XDG_DATA_HOME/overseer.', scope: 'global' }] } }));
    assert.equal(r.results?.[0]?.status, 'stored', JSON.stringify(r));
    assert.ok(existsSync(join(dir, 'xdg-data', 'overseer', 'kb.db')), 'no global kb.db under $XDG_DATA_HOME/overseer');
  });
});
