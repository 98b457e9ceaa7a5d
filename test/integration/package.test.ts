// Integration: the package as npm ships it. `npm pack` of this tree; the tarball holds the
// compiled CLI, the programmatic API (exports "." with types), hooks, prompts and the LICENSE
// (MIT, matching package.json), and no sources or tests. Installed into a temp project (the
// tarball extracted into node_modules with the bin link npm makes; its dependencies linked to
// this checkout's, since tests have no network) it runs as `npx --offline overseer-mcp` — both
// --version and a real `mcp` stdio session answering initialize — and `import('overseer-mcp')`
// gives createHub/loadConfig while internal paths are not exported.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/claude.js';
import { buildCli, cliEnv, REPO_ROOT } from '../helpers/cli.js';
import { eventually } from '../helpers/wait.js';

let tmp = '';
let proj = '';
let files: string[] = [];
const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));

before(async () => {
  buildCli();
  tmp = await makeTempDir('ovs-pack');
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: REPO_ROOT, encoding: 'utf8', env: cliEnv(), stdio: ['ignore', 'pipe', 'ignore'] });
  const info = JSON.parse(out)[0];
  files = info.files.map((f: { path: string }) => f.path);
  proj = join(tmp, 'proj');
  const dest = join(proj, 'node_modules', 'overseer-mcp');
  mkdirSync(dest, { recursive: true });
  mkdirSync(join(proj, 'node_modules', '.bin'));
  execFileSync('tar', ['xzf', join(tmp, info.filename), '-C', dest, '--strip-components=1']);
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(dest, 'node_modules'));
  for (const name of Object.keys(pkg.bin)) symlinkSync(join('..', 'overseer-mcp', pkg.bin[name]), join(proj, 'node_modules', '.bin', name));
  writeFileSync(join(proj, 'package.json'), JSON.stringify({ name: 'p', version: '1.0.0', private: true, dependencies: { 'overseer-mcp': pkg.version } }));
});

after(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

test('the tarball holds the CLI, the API with types, hooks, prompts and LICENSE; no sources or tests', () => {
  for (const f of ['dist/cli/main.js', 'dist/index.js', 'dist/index.d.ts', 'hooks/overseer-hook.mjs', 'hooks/overseer-hook.sh', 'LICENSE', 'package.json', 'README.md']) assert.ok(files.includes(f), `${f} is not in the tarball`);
  assert.ok(files.some((f) => f.startsWith('prompts/')), 'no prompts in the tarball');
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'sources or tests shipped');
  // Everything package.json points at is shipped.
  assert.ok(files.includes(pkg.main), `main ${pkg.main} is not shipped`);
  assert.ok(files.includes(pkg.types), `types ${pkg.types} is not shipped`);
  assert.ok(files.includes(pkg.exports['.'].import.replace(/^\.\//, '')));
  assert.ok(files.includes(pkg.exports['.'].types.replace(/^\.\//, '')));
  assert.deepEqual(Object.keys(pkg.bin).sort(), ['overseer', 'overseer-mcp']);
  for (const b of Object.values(pkg.bin) as string[]) assert.ok(files.includes(b), `bin ${b} is not shipped`);
  assert.equal(pkg.license, 'MIT');
  assert.match(readFileSync(join(REPO_ROOT, 'LICENSE'), 'utf8'), /^MIT License\n[\s\S]*Permission is hereby granted, free of charge/);
});

test('the installed bin is executable and starts with a node shebang', () => {
  const main = join(proj, 'node_modules', 'overseer-mcp', pkg.bin['overseer-mcp']);
  accessSync(main, constants.X_OK);
  assert.match(readFileSync(main, 'utf8'), /^#!\/usr\/bin\/env node\n/);
});

test('npx --offline overseer-mcp --version prints the version', () => {
  const out = execFileSync('npx', ['--offline', 'overseer-mcp', '--version'], { cwd: proj, encoding: 'utf8', env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  assert.equal(out.trim(), pkg.version);
});

test('npx --offline overseer-mcp mcp is a working stdio MCP server', async () => {
  const child = spawn('npx', ['--offline', 'overseer-mcp', 'mcp'], { cwd: proj, env: cliEnv({ OVERSEER_HOME: join(tmp, 'state') }), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => { out += d; });
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  try {
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    const line = await eventually('an initialize answer', () => out.split('\n').find((l) => l.includes('"id":1')), 30_000);
    const msg = JSON.parse(line);
    assert.equal(msg.result.serverInfo.name, 'overseer');
    assert.equal(msg.result.serverInfo.version, pkg.version);
    child.stdin.end();
    assert.equal(await exited, 0);
  } finally {
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
  }
});

test('import("overseer-mcp") gives the programmatic API; internals are not exported', async () => {
  const run = (code: string): string => execFileSync(process.execPath, ['--input-type=module', '-e', code], { cwd: proj, encoding: 'utf8', env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const names = JSON.parse(run("const m = await import('overseer-mcp'); console.log(JSON.stringify(Object.keys(m)))"));
  for (const n of ['createHub', 'Hub', 'loadConfig', 'createLogger', 'OverseerError', 'DEFAULT_POLICY']) assert.ok(names.includes(n), `${n} is not exported`);
  assert.throws(() => run("await import('overseer-mcp/dist/hub.js')"), /ERR_PACKAGE_PATH_NOT_EXPORTED/);
});
