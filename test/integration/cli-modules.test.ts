// Integration: `overseer --version` and `overseer --help` (and a command's --help) load the CLI
// alone — the command table, commander and the package version — not the hub, the store, zod or
// the logger (issue 27 point 3: it used to load the whole hub, 297 modules, to print a version).
// A loader hook (test/fixtures/record-modules.mjs) records every module the built CLI resolves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { makeTempDir } from '../helpers/claude.js';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
/** Modules a hub, its store or its logs would bring: none may load to print a version or help. */
const HEAVY = /\/dist\/(hub|config|log|store\/|services\/|mcp\/|server\/|launch\/)|node_modules\/(better-sqlite3|zod|pino|@modelcontextprotocol|ink|react)\//;

for (const args of [['--version'], ['--help'], ['status', '--help']]) {
  test(`overseer ${args.join(' ')} loads the CLI alone`, async () => {
    const dir = await makeTempDir('ovs-cli-modules');
    const record = join(dir, 'modules.txt');
    try {
      const r = await run(process.execPath, ['--import', join(ROOT, 'test', 'fixtures', 'record-modules.mjs'), join(ROOT, 'dist', 'cli', 'main.js'), ...args], {
        env: { PATH: process.env.PATH, HOME: dir, RECORD_MODULES: record },
      });
      assert.match(r.stdout, args[0] === '--version' ? /^\d+\.\d+\.\d+\n$/ : /Usage: overseer/);
      const mods = [...new Set(readFileSync(record, 'utf8').trim().split('\n'))];
      assert.deepEqual(mods.filter((m) => HEAVY.test(m)), [], 'nothing of the hub, the store, zod or the logger');
      assert.ok(mods.length <= 30, `${mods.length} modules: ${mods.join(' ')}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}
