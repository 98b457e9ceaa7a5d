// Integration: `overseer init [--dry-run]` in real temp git repositories, both in-process
// (init(cwd, dryRun) from src/cli/init.ts) and as a process (node dist/cli/main.js init, built
// first with npm run build). It adds mcpServers.overseer to .mcp.json and the fail-closed
// PreToolUse lock hook to .claude/settings.json at the git root, prints what changed, changes
// nothing on a second run (files byte-identical), merges into existing files keeping everything
// else, keeps an existing overseer server entry, changes nothing with --dry-run, and refuses
// invalid JSON without touching the file.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path, { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { init, type InitChange } from '../../src/cli/init.js';
import { CliError } from '../../src/cli/status.js';
import { initRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = join(REPO_ROOT, 'dist', 'cli', 'main.js');

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The test's environment without anything of an outer Overseer or Claude Code session. */
function cliEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('OVERSEER_') && !k.startsWith('CLAUDE_') && k !== 'CLAUDECODE') env[k] = v;
  }
  return env;
}

function overseer(cwd: string, args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
    child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const readJson = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));
const mcpFile = (root: string): string => join(root, '.mcp.json');
const settingsFile = (root: string): string => join(root, '.claude', 'settings.json');

/** Every file under root except .git, with its bytes (to prove nothing changed). */
function snapshot(root: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.git') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else files.set(path.relative(root, p), readFileSync(p));
    }
  };
  walk(root);
  return files;
}

function assertSameFiles(before: Map<string, Buffer>, after: Map<string, Buffer>): void {
  assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort(), 'the set of files changed');
  for (const [f, bytes] of before) assert.ok(bytes.equals(after.get(f)!), `${f} changed`);
}

/** The server entry init writes: `overseer mcp` from PATH, or this installation's node + main.js. */
function assertServerEntry(entry: any, { fromDist }: { fromDist: boolean }): void {
  assert.equal(entry?.type, 'stdio');
  if (entry.command === 'overseer') {
    assert.deepEqual(entry.args, ['mcp']);
    return;
  }
  assert.equal(entry.command, process.execPath);
  assert.equal(entry.args.length, 2);
  assert.equal(entry.args[1], 'mcp');
  assert.match(entry.args[0], /[/\\]cli[/\\]main\.js$/);
  if (fromDist) {
    assert.equal(entry.args[0], MAIN);
    assert.ok(existsSync(entry.args[0]), `${entry.args[0]} does not exist`);
  }
}

/** Our PreToolUse entry: Edit/Write/… matcher, the hook script by absolute path, fails closed. */
function oursIn(settings: any): any {
  const pre = settings?.hooks?.PreToolUse;
  assert.ok(Array.isArray(pre), 'hooks.PreToolUse is not an array');
  const ours = pre.filter((e: any) => e.hooks?.some((h: any) => typeof h.command === 'string' && h.command.includes('hooks/overseer-hook.mjs')));
  assert.equal(ours.length, 1, `expected exactly one Overseer hook entry, got ${JSON.stringify(pre)}`);
  return ours[0];
}

function assertOurHook(entry: any): void {
  for (const tool of ['Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Bash']) assert.ok(entry.matcher.split('|').includes(tool), `matcher ${entry.matcher} lacks ${tool}`);
  assert.equal(entry.hooks.length, 1);
  const h = entry.hooks[0];
  assert.equal(h.type, 'command');
  assert.ok(h.command.includes(join(REPO_ROOT, 'hooks', 'overseer-hook.mjs')), `command ${h.command} does not run this package's hook`);
  assert.ok(h.command.includes(process.execPath), `command ${h.command} does not use this node`);
  assert.equal(h.onFailure, 'block');
  assert.ok(typeof h.timeout === 'number' && h.timeout > 8, `timeout ${h.timeout} would cut the hook's own 8 s hub timeout short`);
}

const actions = (changes: InitChange[]): Record<string, string> => Object.fromEntries(changes.map((c) => [path.basename(c.file), c.action]));

describe('overseer init', { timeout: 180_000 }, () => {
  let tmp = '';
  let n = 0;
  const repo = async (files?: Record<string, string>): Promise<string> => initRepo(join(tmp, `repo-${n++}`), files);

  before(async () => {
    const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8', env: cliEnv() });
    if (build.status !== 0) {
      // tsc emits even with type errors (in files edited in parallel); go on if main.js is there.
      process.stderr.write(`# npm run build exited ${build.status}: ${(build.stdout + build.stderr).slice(-2000)}\n`);
      assert.ok(existsSync(MAIN), `npm run build failed and ${MAIN} is missing`);
    }
    tmp = await makeTempDir('ovs-init');
  });

  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('fresh repo: creates .mcp.json (mcpServers.overseer) and .claude/settings.json (fail-closed PreToolUse hook)', async () => {
    const root = await repo();
    const changes = init(root, false);
    assert.deepEqual(actions(changes), { '.mcp.json': 'created', 'settings.json': 'created' });
    assert.deepEqual(changes.map((c) => c.file), [mcpFile(root), settingsFile(root)]);
    for (const c of changes) assert.ok(c.what.length > 0);

    const mcp = readJson(mcpFile(root));
    assert.deepEqual(Object.keys(mcp), ['mcpServers']);
    assert.deepEqual(Object.keys(mcp.mcpServers), ['overseer']);
    assertServerEntry(mcp.mcpServers.overseer, { fromDist: false });

    const settings = readJson(settingsFile(root));
    assertOurHook(oursIn(settings));
    assert.deepEqual(Object.keys(settings), ['hooks']);
    assert.deepEqual(Object.keys(settings.hooks), ['PreToolUse']);
  });

  test('second run: every entry "unchanged", files byte-identical and not rewritten', async () => {
    const root = await repo();
    init(root, false);
    const before = snapshot(root);
    const mtimes = [mcpFile(root), settingsFile(root)].map((f) => statSync(f).mtimeMs);
    const changes = init(root, false);
    assert.deepEqual(actions(changes), { '.mcp.json': 'unchanged', 'settings.json': 'unchanged' });
    assertSameFiles(before, snapshot(root));
    assert.deepEqual([mcpFile(root), settingsFile(root)].map((f) => statSync(f).mtimeMs), mtimes);
  });

  test('CLI: `node dist/cli/main.js init` in a subdirectory writes at the git root and prints what changed; a second run prints "Nothing to do"', async () => {
    const root = await repo({ 'README.md': '# r\n', 'pkg/lib/index.ts': 'export {};\n' });
    const sub = join(root, 'pkg', 'lib');
    const first = await overseer(sub, ['init']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    assert.match(first.stdout, /^created: \.\.\/\.\.\/\.mcp\.json — added mcpServers\.overseer$/m);
    assert.match(first.stdout, /^created: \.\.\/\.\.\/\.claude\/settings\.json — added the Overseer lock hook/m);
    assert.match(first.stdout, /Restart Claude Code/);
    assert.ok(!existsSync(join(sub, '.mcp.json')) && !existsSync(join(sub, '.claude')), 'init wrote into the subdirectory instead of the git root');
    assertServerEntry(readJson(mcpFile(root)).mcpServers.overseer, { fromDist: true });
    assertOurHook(oursIn(readJson(settingsFile(root))));

    const before = snapshot(root);
    const second = await overseer(sub, ['init']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^unchanged: \.\.\/\.\.\/\.mcp\.json/m);
    assert.match(second.stdout, /^unchanged: \.\.\/\.\.\/\.claude\/settings\.json/m);
    assert.match(second.stdout, /Nothing to do/);
    assert.doesNotMatch(second.stdout, /^(created|updated)/m);
    assertSameFiles(before, snapshot(root));

    // The in-process init agrees that there is nothing left to do.
    assert.deepEqual(actions(init(root, false)), { '.mcp.json': 'unchanged', 'settings.json': 'unchanged' });
  });

  test('merges into existing files, keeping other servers, hooks and settings', async () => {
    const root = await repo();
    const otherServer = { command: 'npx', args: ['-y', '@acme/mcp'], env: { ACME_KEY: 'k' } };
    writeFileSync(mcpFile(root), `${JSON.stringify({ mcpServers: { acme: otherServer }, extra: { keep: true } }, null, 4)}\n`);
    mkdirSync(join(root, '.claude'));
    const otherPre = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre-bash' }] };
    const post = [{ matcher: 'Write', hooks: [{ type: 'command', command: 'prettier --write' }] }];
    const settingsBefore = {
      permissions: { allow: ['Bash(npm test)'], deny: ['Read(./.env)'] },
      env: { FOO: 'bar' },
      hooks: { PreToolUse: [otherPre], PostToolUse: post },
      model: 'opus',
    };
    writeFileSync(settingsFile(root), JSON.stringify(settingsBefore));

    const run = await overseer(root, ['init']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^updated: \.mcp\.json — added mcpServers\.overseer$/m);
    assert.match(run.stdout, /^updated: \.claude\/settings\.json — added the Overseer lock hook/m);

    const mcp = readJson(mcpFile(root));
    assert.deepEqual(mcp.mcpServers.acme, otherServer);
    assert.deepEqual(mcp.extra, { keep: true });
    assert.deepEqual(Object.keys(mcp.mcpServers).sort(), ['acme', 'overseer']);
    assertServerEntry(mcp.mcpServers.overseer, { fromDist: true });

    const settings = readJson(settingsFile(root));
    assert.deepEqual(settings.permissions, settingsBefore.permissions);
    assert.deepEqual(settings.env, settingsBefore.env);
    assert.equal(settings.model, 'opus');
    assert.deepEqual(settings.hooks.PostToolUse, post);
    assert.equal(settings.hooks.PreToolUse.length, 2);
    assert.deepEqual(settings.hooks.PreToolUse[0], otherPre, 'the existing PreToolUse entry must stay first and unchanged');
    assertOurHook(oursIn(settings));

    // And it is idempotent on the merged files too.
    const before = snapshot(root);
    assert.deepEqual(actions(init(root, false)), { '.mcp.json': 'unchanged', 'settings.json': 'unchanged' });
    assertSameFiles(before, snapshot(root));
  });

  test('an existing, different overseer server entry is kept as is', async () => {
    const root = await repo();
    const custom = { type: 'http', url: 'http://127.0.0.1:7777/mcp', headers: { Authorization: 'Bearer x' } };
    const text = `${JSON.stringify({ mcpServers: { overseer: custom } }, null, 2)}\n`;
    writeFileSync(mcpFile(root), text);
    const changes = init(root, false);
    assert.deepEqual(actions(changes), { '.mcp.json': 'unchanged', 'settings.json': 'created' });
    assert.match(changes[0]!.what, /kept/);
    assert.equal(readFileSync(mcpFile(root), 'utf8'), text);
    assertOurHook(oursIn(readJson(settingsFile(root))));
  });

  test('an outdated Overseer hook entry is replaced in place; other entries stay where they are', async () => {
    const root = await repo();
    mkdirSync(join(root, '.claude'));
    const a = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo a' }] };
    const old = { matcher: 'Edit|Write', hooks: [{ type: 'command', command: "'/old/node' '/old/place/hooks/overseer-hook.mjs'", timeout: 5 }] };
    const b = { matcher: 'Read', hooks: [{ type: 'command', command: 'echo b' }] };
    writeFileSync(settingsFile(root), JSON.stringify({ hooks: { PreToolUse: [a, old, b] } }));
    const changes = init(root, false);
    assert.equal(actions(changes)['settings.json'], 'updated');
    const pre = readJson(settingsFile(root)).hooks.PreToolUse;
    assert.equal(pre.length, 3);
    assert.deepEqual(pre[0], a);
    assert.deepEqual(pre[2], b);
    assertOurHook(pre[1]);
    assert.ok(!JSON.stringify(pre).includes('/old/place'), 'the outdated command is still there');
  });

  test('--dry-run on a fresh repo changes nothing but lists what would change', async () => {
    const root = await repo();
    const before = snapshot(root);
    const run = await overseer(root, ['init', '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^would be created: \.mcp\.json — added mcpServers\.overseer$/m);
    assert.match(run.stdout, /^would be created: \.claude\/settings\.json/m);
    assert.doesNotMatch(run.stdout, /Restart Claude Code/);
    assertSameFiles(before, snapshot(root));
    assert.ok(!existsSync(mcpFile(root)), '.mcp.json was created by a dry run');
    assert.ok(!existsSync(join(root, '.claude')), '.claude/ was created by a dry run');

    // In-process: the dry run reports what the real run then does.
    const dry = init(root, true);
    assert.ok(!existsSync(mcpFile(root)));
    assert.deepEqual(init(root, false), dry);
  });

  test('--dry-run on existing files lists the updates and leaves the files byte-identical', async () => {
    const root = await repo();
    writeFileSync(mcpFile(root), '{"mcpServers":{"acme":{"command":"acme"}}}');
    mkdirSync(join(root, '.claude'));
    writeFileSync(settingsFile(root), '{"permissions":{"allow":[]}}');
    const before = snapshot(root);
    const run = await overseer(root, ['init', '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^would be updated: \.mcp\.json/m);
    assert.match(run.stdout, /^would be updated: \.claude\/settings\.json/m);
    assertSameFiles(before, snapshot(root));
    assert.deepEqual(actions(init(root, true)), { '.mcp.json': 'updated', 'settings.json': 'updated' });
    assertSameFiles(before, snapshot(root));
  });

  test('--dry-run when already set up: "Nothing to do"', async () => {
    const root = await repo();
    init(root, false);
    const before = snapshot(root);
    const run = await overseer(root, ['init', '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Nothing to do/);
    assert.doesNotMatch(run.stdout, /would be/);
    assertSameFiles(before, snapshot(root));
  });

  test('invalid JSON in .mcp.json → an error, the file untouched, nothing else written', async () => {
    const root = await repo();
    const bad = '{ "mcpServers": { "acme": { "command": "acme", } }\n';
    writeFileSync(mcpFile(root), bad);
    const before = snapshot(root);

    assert.throws(() => init(root, false), (err: unknown) => err instanceof CliError && /\.mcp\.json is not valid JSON/.test(err.message) && /Nothing was changed/.test(err.message));
    assertSameFiles(before, snapshot(root));

    const run = await overseer(root, ['init']);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^overseer: .*\.mcp\.json is not valid JSON/m);
    assert.doesNotMatch(run.stdout, /^(created|updated)/m);
    assertSameFiles(before, snapshot(root));
    assert.ok(!existsSync(join(root, '.claude')), '.claude/ was created despite the error');
    assert.equal(readFileSync(mcpFile(root), 'utf8'), bad);
  });

  test('a .mcp.json that is JSON but not an object (or whose mcpServers is not one) → an error, untouched', async () => {
    for (const text of ['[1, 2]\n', '{"mcpServers": ["x"]}\n']) {
      const root = await repo();
      writeFileSync(mcpFile(root), text);
      const before = snapshot(root);
      assert.throws(() => init(root, false), CliError);
      assertSameFiles(before, snapshot(root));
    }
  });

  // Regression: init() used to write .mcp.json before reading .claude/settings.json, so a bad
  // settings file failed with "Nothing was changed" after .mcp.json had been written.
  test('invalid JSON in .claude/settings.json → an error and nothing changed (no .mcp.json written either)', async () => {
    const root = await repo();
    mkdirSync(join(root, '.claude'));
    writeFileSync(settingsFile(root), '{ not json');
    const before = snapshot(root);
    assert.throws(() => init(root, false), (err: unknown) => err instanceof CliError && /settings\.json is not valid JSON/.test(err.message));
    assertSameFiles(before, snapshot(root));
  });

  // Regression: the merged file used to be written 0644 whatever the old mode, so a private
  // .mcp.json (which may hold API keys in env/headers) became world-readable.
  test('merging keeps the permissions of an existing .mcp.json', async () => {
    const root = await repo();
    writeFileSync(mcpFile(root), '{"mcpServers":{"acme":{"command":"acme","env":{"ACME_KEY":"secret"}}}}');
    chmodSync(mcpFile(root), 0o600);
    init(root, false);
    assert.equal(statSync(mcpFile(root)).mode & 0o777, 0o600);
  });
});
