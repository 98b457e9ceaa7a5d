// Integration: the `codex shell` doctor check runs a REAL codex child (the repo's own, against
// the bundled fake model) the way the hub would, with the state under TMPDIR: confined it runs
// its command; with CODEX_BIN a wrapper script (no helper links can be made) the command cannot
// start and the check names the real error and the fix; nothing stays behind either way.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfigFrom } from '../../src/config.js';
import { checkCodexShell } from '../../src/doctor/codexShellRun.js';
import { codexBin } from '../helpers/codex.js';

const dir = mkdtempSync(join(tmpdir(), 'doctor-cx-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// A temporary directory of the test's own (TMPDIR for the check and its child), the state under it.
const tmp = join(dir, 'tmp');
mkdirSync(tmp);
const home = join(tmp, 'state');
const env = { ...process.env, HOME: join(dir, 'home'), TMPDIR: tmp };
const leftovers = (): string[] => readdirSync(tmp).filter((n) => n.startsWith('overseer-doctor-'));

describe('doctor: codex shell, with a real codex child', () => {
  test('state under TMPDIR, confined: the command runs (ok); nothing stays behind', async () => {
    const c = await checkCodexShell(loadConfigFrom({ home }), codexBin(), home, { env, cwd: dir, packageRoot: process.cwd() });
    assert.equal(c.status, 'ok', `${c.detail} — ${c.fix}`);
    assert.match(c.detail, /ran `echo overseer-doctor > doctor-probe.txt && cat doctor-probe.txt` in its work tree \(Codex's sandbox workspace-write, inside Overseer's bubblewrap jail\)/);
    assert.equal(existsSync(home), false, 'the state directory it had to make is gone again');
    assert.deepEqual(leftovers(), [], 'its work tree is gone');
  });

  test('CODEX_BIN a wrapper script: the command cannot start, and the check says why and what to do', async () => {
    const wrapper = join(dir, 'codex-wrapper.sh');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${codexBin()} "$@"\n`);
    chmodSync(wrapper, 0o755);
    for (const confine of ['auto', 'off'] as const) {
      const c = await checkCodexShell(loadConfigFrom({ home, confine }), wrapper, home, { env, cwd: dir, packageRoot: process.cwd() });
      assert.equal(c.status, 'warn', c.detail);
      assert.match(c.detail, /did not start .*"bwrap: execvp codex-linux-sandbox: No such file or directory"/, c.detail);
      assert.match(c.detail, confine === 'off' ? /not inside Overseer's jail/ : /inside Overseer's bubblewrap jail/);
      assert.match(c.detail, /codex-wrapper\.sh is neither/);
      assert.match(c.fix!, /point CODEX_BIN at the codex binary itself/);
    }
  });
});
