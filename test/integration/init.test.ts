// Integration: `overseer init [--dry-run] [--force]` in real temp git repositories, both
// in-process (init() from src/cli/init.ts) and as a process (node dist/cli/main.js init, built
// first). Team safety: the committed files (.mcp.json, .claude/settings.json) hold no path of
// this machine (grepped for the temp dir, the package path and this node); the lock hook goes to
// .claude/settings.local.json, which git is told to ignore; the Overseer tools are allowed
// (permissions.allow "mcp__overseer__*"); a hook an older init put into settings.json is moved
// out. Also: prints what changed per file, changes nothing on a second run (files
// byte-identical), merges keeping everything else, --dry-run changes nothing, invalid JSON is
// refused untouched, and a directory outside git is refused (exit 2) unless --force.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path, { join } from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { deadPort } from '../helpers/net.js';
import { init, PERMISSION_RULE, type InitChange } from '../../src/cli/init.js';
import { CliError } from '../../src/cli/status.js';
import { UsageError } from '../../src/cli/errors.js';
import { initRepo } from '../helpers/git.js';
import { makeTempDir } from '../helpers/claude.js';
import { buildCli, overseer, REPO_ROOT } from '../helpers/cli.js';
import { hookShell } from '../../src/launch/claude/launcher.js';

const readJson = (file: string): any => JSON.parse(readFileSync(file, 'utf8'));
const mcpFile = (root: string): string => join(root, '.mcp.json');
const settingsFile = (root: string): string => join(root, '.claude', 'settings.json');
const localFile = (root: string): string => join(root, '.claude', 'settings.local.json');
const excludeFile = (root: string): string => join(root, '.git', 'info', 'exclude');

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
  if (existsSync(excludeFile(root))) files.set('.git/info/exclude', readFileSync(excludeFile(root)));
  return files;
}

function assertSameFiles(before: Map<string, Buffer>, after: Map<string, Buffer>): void {
  assert.deepEqual([...after.keys()].sort(), [...before.keys()].sort(), 'the set of files changed');
  for (const [f, bytes] of before) assert.ok(bytes.equals(after.get(f)!), `${f} changed`);
}

/** The server entry init writes: `overseer mcp` from PATH, else `npx -y overseer-mcp mcp`. */
function assertServerEntry(entry: any): void {
  assert.equal(entry?.type, 'stdio');
  if (entry.command === 'overseer') assert.deepEqual(entry.args, ['mcp']);
  else assert.deepEqual([entry.command, ...entry.args], ['npx', '-y', 'overseer-mcp', 'mcp']);
}

/** No path of this machine in the files a team commits. */
function assertTeamSafe(root: string, tmp: string): void {
  for (const f of [mcpFile(root), settingsFile(root)]) {
    if (!existsSync(f)) continue;
    const text = readFileSync(f, 'utf8');
    for (const local of [tmp, root, REPO_ROOT, process.execPath, path.dirname(process.execPath), '/work/', '/tmp/']) {
      assert.ok(!text.includes(local), `${f} contains the machine-specific path ${local}:\n${text}`);
    }
    assert.doesNotMatch(text, /overseer-hook\.(mjs|sh)/, `${f} still holds the lock hook`);
  }
}

function assertIgnored(root: string): void {
  execFileSync('git', ['check-ignore', '-q', '--no-index', '.claude/settings.local.json'], { cwd: root }); // throws when not ignored
}

/** Our PreToolUse entry: Edit/Write/… matcher, the hook script by absolute path, fails closed. */
function oursIn(settings: any): any {
  const pre = settings?.hooks?.PreToolUse;
  assert.ok(Array.isArray(pre), 'hooks.PreToolUse is not an array');
  const ours = pre.filter((e: any) => e.hooks?.some((h: any) => typeof h.command === 'string' && /hooks\/overseer-hook\.(mjs|sh)/.test(h.command)));
  assert.equal(ours.length, 1, `expected exactly one Overseer hook entry, got ${JSON.stringify(pre)}`);
  return ours[0];
}

function assertOurHook(entry: any): void {
  for (const tool of ['Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'Bash']) assert.ok(entry.matcher.split('|').includes(tool), `matcher ${entry.matcher} lacks ${tool}`);
  assert.equal(entry.hooks.length, 1);
  const h = entry.hooks[0];
  assert.equal(h.type, 'command');
  // The sh hook (no Node start per edit), with this node for its fallback to the Node hook.
  assert.equal(h.command, `${hookShell()} '${join(REPO_ROOT, 'hooks', 'overseer-hook.sh')}' '${process.execPath}'`);
  assert.equal(h.onFailure, undefined, 'the lead hook must not block every edit when it cannot start (the script denies by itself when a running hub does not answer)');
  assert.ok(typeof h.timeout === 'number' && h.timeout > 8, `timeout ${h.timeout} would cut the hook's own 8 s hub timeout short`);
}

const actions = (changes: InitChange[]): Record<string, string> => Object.fromEntries(changes.map((c) => [path.basename(c.file), c.action]));
const FRESH = { '.mcp.json': 'created', 'settings.json': 'created', 'settings.local.json': 'created', exclude: 'updated' };
const SAME = { '.mcp.json': 'unchanged', 'settings.json': 'unchanged', 'settings.local.json': 'unchanged' };

describe('overseer init', { timeout: 180_000 }, () => {
  let tmp = '';
  let n = 0;
  const repo = async (files?: Record<string, string>): Promise<string> => initRepo(join(tmp, `repo-${n++}`), files);

  before(async () => {
    buildCli();
    tmp = await makeTempDir('ovs-init');
  });

  after(async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('fresh repo: server in .mcp.json, permission rule in settings.json, hook in settings.local.json (ignored by git); no machine path in shared files', async () => {
    const root = await repo();
    const changes = init(root, false);
    assert.deepEqual(actions(changes), FRESH);
    for (const c of changes) assert.ok(c.what.length > 0);

    const mcp = readJson(mcpFile(root));
    assert.deepEqual(Object.keys(mcp), ['mcpServers']);
    assert.deepEqual(Object.keys(mcp.mcpServers), ['overseer']);
    assertServerEntry(mcp.mcpServers.overseer);

    const settings = readJson(settingsFile(root));
    assert.deepEqual(settings, { permissions: { allow: [PERMISSION_RULE] } });
    assert.equal(PERMISSION_RULE, 'mcp__overseer__*');

    const local = readJson(localFile(root));
    assertOurHook(oursIn(local));
    assert.deepEqual(Object.keys(local), ['hooks']);
    assertTeamSafe(root, tmp);
    assertIgnored(root);
    // git status shows the shared files but not the personal one.
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: root, encoding: 'utf8' });
    assert.match(status, /\.mcp\.json/);
    assert.match(status, /\.claude\/settings\.json/);
    assert.doesNotMatch(status, /settings\.local\.json/);
  });

  test('second run: every entry "unchanged", files (and .git/info/exclude) byte-identical and not rewritten', async () => {
    const root = await repo();
    init(root, false);
    const before = snapshot(root);
    const files = [mcpFile(root), settingsFile(root), localFile(root), excludeFile(root)];
    const mtimes = files.map((f) => statSync(f).mtimeMs);
    const changes = init(root, false);
    assert.deepEqual(actions(changes), SAME);
    assertSameFiles(before, snapshot(root));
    assert.deepEqual(files.map((f) => statSync(f).mtimeMs), mtimes);
  });

  test('a repo that already ignores settings.local.json: .git/info/exclude is left alone', async () => {
    const root = await repo({ '.gitignore': '.claude/settings.local.json\n' });
    const exclude = existsSync(excludeFile(root)) ? readFileSync(excludeFile(root), 'utf8') : null;
    assert.deepEqual(actions(init(root, false)), { '.mcp.json': 'created', 'settings.json': 'created', 'settings.local.json': 'created' });
    assert.equal(existsSync(excludeFile(root)) ? readFileSync(excludeFile(root), 'utf8') : null, exclude);
  });

  test('outside a git repository: refused with exit 2 and nothing written; --force sets up the directory', async () => {
    const dir = join(tmp, `plain-${n++}`);
    mkdirSync(dir);
    assert.throws(() => init(dir, false), (e: unknown) => e instanceof UsageError && /not inside a git repository/.test(e.message) && /--force/.test(e.message));
    const run = await overseer(dir, ['init']);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /^overseer: .*is not inside a git repository.*--force/m);
    assert.equal(run.stdout, '');
    assert.deepEqual(readdirSync(dir), []);

    const forced = await overseer(dir, ['init', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /^created: \.mcp\.json/m);
    assertOurHook(oursIn(readJson(localFile(dir))));
    assertTeamSafe(dir, tmp);
    const again = await overseer(dir, ['init', '--force']);
    assert.match(again.stdout, /Nothing to do/);
  });

  test('CLI: `node dist/cli/main.js init` in a subdirectory writes at the git root and prints what changed; a second run prints "Nothing to do"', async () => {
    const root = await repo({ 'README.md': '# r\n', 'pkg/lib/index.ts': 'export {};\n' });
    const sub = join(root, 'pkg', 'lib');
    const first = await overseer(sub, ['init']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, '');
    assert.match(first.stdout, /^created: \.\.\/\.\.\/\.mcp\.json — added mcpServers\.overseer \((overseer mcp|npx -y overseer-mcp mcp)\)$/m);
    assert.match(first.stdout, /^created: \.\.\/\.\.\/\.claude\/settings\.json — allowed the Overseer tools \(permissions\.allow "mcp__overseer__\*"\)$/m);
    assert.match(first.stdout, /^created: \.\.\/\.\.\/\.claude\/settings\.local\.json — added the Overseer lock hook/m);
    assert.match(first.stdout, /^updated: \.\.\/\.\.\/\.git\/info\/exclude — git ignores \.claude\/settings\.local\.json/m);
    assert.match(first.stdout, /Restart Claude Code/);
    assert.match(first.stdout, /with no hub running it allows everything/);
    assert.ok(!existsSync(join(sub, '.mcp.json')) && !existsSync(join(sub, '.claude')), 'init wrote into the subdirectory instead of the git root');
    assertServerEntry(readJson(mcpFile(root)).mcpServers.overseer);
    assertOurHook(oursIn(readJson(localFile(root))));
    assertTeamSafe(root, tmp);

    const before = snapshot(root);
    const second = await overseer(sub, ['init']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^unchanged: \.\.\/\.\.\/\.mcp\.json/m);
    assert.match(second.stdout, /^unchanged: \.\.\/\.\.\/\.claude\/settings\.json/m);
    assert.match(second.stdout, /^unchanged: \.\.\/\.\.\/\.claude\/settings\.local\.json/m);
    assert.match(second.stdout, /Nothing to do/);
    assert.doesNotMatch(second.stdout, /^(created|updated)/m);
    assertSameFiles(before, snapshot(root));

    // The in-process init agrees that there is nothing left to do.
    assert.deepEqual(actions(init(root, false)), SAME);
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
    assert.match(run.stdout, /^updated: \.mcp\.json — added mcpServers\.overseer /m);
    assert.match(run.stdout, /^updated: \.claude\/settings\.json — allowed the Overseer tools/m);

    const mcp = readJson(mcpFile(root));
    assert.deepEqual(mcp.mcpServers.acme, otherServer);
    assert.deepEqual(mcp.extra, { keep: true });
    assert.deepEqual(Object.keys(mcp.mcpServers).sort(), ['acme', 'overseer']);
    assertServerEntry(mcp.mcpServers.overseer);

    const settings = readJson(settingsFile(root));
    assert.deepEqual(settings.permissions, { ...settingsBefore.permissions, allow: ['Bash(npm test)', 'mcp__overseer__*'] });
    assert.deepEqual(settings.env, settingsBefore.env);
    assert.equal(settings.model, 'opus');
    assert.deepEqual(settings.hooks, settingsBefore.hooks, 'the shared hooks must stay exactly as they were');
    assertOurHook(oursIn(readJson(localFile(root))));
    assertTeamSafe(root, tmp);

    // And it is idempotent on the merged files too.
    const before = snapshot(root);
    assert.deepEqual(actions(init(root, false)), SAME);
    assertSameFiles(before, snapshot(root));
  });

  test('an existing, different overseer server entry is kept as is', async () => {
    const root = await repo();
    const custom = { type: 'http', url: 'http://127.0.0.1:7777/mcp', headers: { Authorization: 'Bearer x' } };
    const text = `${JSON.stringify({ mcpServers: { overseer: custom } }, null, 2)}\n`;
    writeFileSync(mcpFile(root), text);
    const changes = init(root, false);
    assert.deepEqual(actions(changes), { ...FRESH, '.mcp.json': 'unchanged' });
    assert.match(changes[0]!.what, /kept/);
    assert.equal(readFileSync(mcpFile(root), 'utf8'), text);
    assertOurHook(oursIn(readJson(localFile(root))));
  });

  test('an older init\'s hook in the shared settings.json is moved to settings.local.json; other entries stay in order', async () => {
    const root = await repo();
    mkdirSync(join(root, '.claude'));
    const a = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo a' }] };
    const old = { matcher: 'Edit|Write', hooks: [{ type: 'command', command: `'${process.execPath}' '${REPO_ROOT}/hooks/overseer-hook.mjs'`, timeout: 15, onFailure: 'block' }] };
    const b = { matcher: 'Read', hooks: [{ type: 'command', command: 'echo b' }] };
    writeFileSync(settingsFile(root), JSON.stringify({ hooks: { PreToolUse: [a, old, b] } }));
    const changes = init(root, false);
    assert.equal(actions(changes)['settings.json'], 'updated');
    assert.match(changes.find((c) => c.file === settingsFile(root))!.what, /removed the Overseer lock hook/);
    assert.deepEqual(readJson(settingsFile(root)).hooks.PreToolUse, [a, b]);
    assertOurHook(oursIn(readJson(localFile(root))));
    assertTeamSafe(root, tmp);

    // Only our hook was there: the emptied hooks object goes too.
    const root2 = await repo();
    mkdirSync(join(root2, '.claude'));
    writeFileSync(settingsFile(root2), JSON.stringify({ model: 'opus', hooks: { PreToolUse: [old] } }));
    init(root2, false);
    assert.deepEqual(readJson(settingsFile(root2)), { model: 'opus', permissions: { allow: ['mcp__overseer__*'] } });
  });

  test('an outdated hook in settings.local.json is replaced in place', async () => {
    const root = await repo();
    mkdirSync(join(root, '.claude'));
    const a = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo a' }] };
    const old = { matcher: 'Edit|Write', hooks: [{ type: 'command', command: "'/old/node' '/old/place/hooks/overseer-hook.mjs'", timeout: 5 }] };
    writeFileSync(localFile(root), JSON.stringify({ hooks: { PreToolUse: [old, a] } }));
    assert.equal(actions(init(root, false))['settings.local.json'], 'updated');
    const pre = readJson(localFile(root)).hooks.PreToolUse;
    assert.equal(pre.length, 2);
    assertOurHook(pre[0]);
    assert.deepEqual(pre[1], a);
  });

  test('the hook command init writes runs through a shell as Claude Code runs it: no hub → allowed; a hub that does not answer → a deny', async () => {
    const root = await repo();
    init(root, false);
    const command = oursIn(readJson(localFile(root))).hooks[0].command as string;
    const input = JSON.stringify({ session_id: 's', cwd: root, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: join(root, 'a.txt'), content: 'x' } });
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, XDG_STATE_HOME: join(tmp, 'no-state'), CLAUDE_PROJECT_DIR: root };
    const run = (extra: NodeJS.ProcessEnv): ReturnType<typeof spawnSync> => spawnSync('/bin/sh', ['-c', command], { input, env: { ...env, ...extra }, encoding: 'utf8', timeout: 20_000 });
    const free = run({});
    assert.equal(free.status, 0, String(free.stderr));
    assert.equal(free.stdout, '', 'no hub: nothing to check, nothing printed');
    const port = await deadPort();
    const down = run({ OVERSEER_URL: `http://127.0.0.1:${port}/mcp`, OVERSEER_TOKEN: 't' });
    assert.equal(down.status, 0, String(down.stderr));
    const out = JSON.parse(String(down.stdout));
    assert.equal(out.hookSpecificOutput.permissionDecision, 'deny');
    assert.match(out.hookSpecificOutput.permissionDecisionReason, /could not reach the hub/);
  });

  test('a permissions.allow that is not a list → an error, nothing changed', async () => {
    const root = await repo();
    mkdirSync(join(root, '.claude'));
    writeFileSync(settingsFile(root), '{"permissions":{"allow":"mcp__x"}}');
    const before = snapshot(root);
    assert.throws(() => init(root, false), (e: unknown) => e instanceof CliError && /permissions\.allow is not a list/.test(e.message));
    assertSameFiles(before, snapshot(root));
  });

  test('an existing mcp__overseer rule counts as allowed', async () => {
    const root = await repo();
    mkdirSync(join(root, '.claude'));
    writeFileSync(settingsFile(root), '{"permissions":{"allow":["mcp__overseer"]}}');
    assert.equal(actions(init(root, false))['settings.json'], 'unchanged');
    assert.equal(readFileSync(settingsFile(root), 'utf8'), '{"permissions":{"allow":["mcp__overseer"]}}');
  });

  test('--dry-run on a fresh repo changes nothing but lists what would change', async () => {
    const root = await repo();
    const before = snapshot(root);
    const run = await overseer(root, ['init', '--dry-run']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^would be created: \.mcp\.json — added mcpServers\.overseer/m);
    assert.match(run.stdout, /^would be created: \.claude\/settings\.json/m);
    assert.match(run.stdout, /^would be created: \.claude\/settings\.local\.json/m);
    assert.match(run.stdout, /^would be updated: \.git\/info\/exclude/m);
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
    assert.deepEqual(actions(init(root, true)), { ...FRESH, '.mcp.json': 'updated', 'settings.json': 'updated' });
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
