// The links Codex's sandbox runs its helper through (src/launch/codex/sandboxHelpers.ts): the
// native binary is found behind the npm launcher and behind node_modules/.bin, not behind a
// wrapper script; the links are made, kept and repaired; the launcher puts them first on PATH.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { codexBin } from '../helpers/codex.js';
import { HELPER_NAMES, installHelpers, nativeCodexBinary } from '../../src/launch/codex/sandboxHelpers.js';
import { CodexLauncher } from '../../src/launch/codex/launcher.js';

const dir = mkdtempSync(join(os.tmpdir(), 'ovs-helpers-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('codex sandbox helper links', () => {
  const native = nativeCodexBinary(codexBin());

  test('the native binary behind node_modules/.bin/codex (the npm launcher) is found, and is itself', () => {
    assert.ok(native, 'found');
    assert.match(native, /@openai\/codex-linux-[a-z0-9]+\/vendor\/[^/]+\/bin\/codex$/);
    assert.equal(nativeCodexBinary(native), native, 'a native binary is its own');
  });

  test('a wrapper script is not seen through; a missing file is nothing', () => {
    const wrapper = join(dir, 'codex-wrapper');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${codexBin()} "$@"\n`);
    chmodSync(wrapper, 0o755);
    assert.equal(nativeCodexBinary(wrapper), undefined);
    assert.equal(nativeCodexBinary(join(dir, 'nope')), undefined);
  });

  test('installHelpers links every name, leaves good links alone and repairs a wrong one', () => {
    const bin = join(dir, 'bin');
    installHelpers(bin, native!);
    for (const n of HELPER_NAMES) assert.equal(readlinkSync(join(bin, n)), native);
    rmSync(join(bin, 'codex-linux-sandbox'));
    symlinkSync('/bin/true', join(bin, 'codex-linux-sandbox'));
    installHelpers(bin, native!);
    for (const n of HELPER_NAMES) assert.equal(readlinkSync(join(bin, n)), native);
  });

  test('the launcher puts <CODEX_HOME>/bin first on the child PATH (Linux), and not for a wrapper', () => {
    const codexHome = join(dir, 'codex-home');
    const l = new CodexLauncher({ codexHome, nodeBin: process.execPath, hookScript: '/nonexistent', hook: false });
    const spec = { jobId: 'j-1', message: 'm', cwd: dir, sessionId: 's', resume: false, mcpUrl: 'http://127.0.0.1:1/mcp', token: 't', appendSystemPrompt: '', env: { PATH: '/usr/bin:/bin' }, mcpTimeoutMs: 1000 };
    const cmd = l.build(spec, codexBin());
    assert.equal(cmd.env.PATH, `${join(codexHome, 'bin')}:/usr/bin:/bin`);
    assert.equal(readlinkSync(join(codexHome, 'bin', 'codex-linux-sandbox')), native);
    assert.equal(l.build(spec, join(dir, 'codex-wrapper')).env.PATH, '/usr/bin:/bin');
  });
});
