// Integration: `overseer mcp` answers initialize having loaded the CLI's table, commander and the
// bridge alone — no MCP SDK (its stdio transport loads the SDK's zod schemas), no configuration,
// logger, store or hub (it used to load the whole hub, 372 modules, before answering): Claude Code
// holds its first model request until the server answers (docs/performance.md, "Claude Code's
// first model request with Overseer"). A loader hook (test/fixtures/record-modules.mjs) records
// every module the built CLI resolves. Needs `npm run build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/claude.js';
import { MAIN, REPO_ROOT } from '../helpers/cli.js';

const HEAVY = /\/dist\/(hub|config|log|store\/|services\/|mcp\/|hubproc\/|launch\/|tools\/)|node_modules\/(better-sqlite3|zod|pino|@modelcontextprotocol|ink|react)\//;

test('overseer mcp answers initialize before loading the SDK, the configuration, the logger or the hub', { timeout: 30_000 }, async () => {
  const dir = await makeTempDir('ovs-bridge-modules');
  const record = join(dir, 'modules.txt');
  try {
    const p = spawn(process.execPath, ['--import', join(REPO_ROOT, 'test', 'fixtures', 'record-modules.mjs'), MAIN, 'mcp'], {
      cwd: dir, env: { PATH: process.env.PATH, HOME: dir, OVERSEER_HOME: join(dir, 'state'), RECORD_MODULES: record }, stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise((r) => p.once('exit', r));
    const first = new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no answer to initialize within 20 s')), 20_000);
      p.stdout!.once('data', (d: Buffer) => { clearTimeout(t); resolve(d.toString('utf8')); });
    });
    p.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`);
    const answer = JSON.parse((await first).split('\n')[0]!) as { result?: { serverInfo?: { name: string } } };
    const mods = [...new Set(readFileSync(record, 'utf8').trim().split('\n'))];
    p.kill('SIGKILL'); // before it reaches for a hub
    await exited;
    assert.equal(answer.result?.serverInfo?.name, 'overseer');
    assert.deepEqual(mods.filter((m) => HEAVY.test(m)), [], 'nothing of the SDK, the configuration, the logger, the store or the hub');
    assert.ok(mods.length <= 20, `${mods.length} modules: ${mods.join(' ')}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
