// The `codex shell` doctor check's verdict (src/doctor/codexShell.ts): each way one command of a
// Codex child can end, said in plain words with the fix. The failure texts are the real ones.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { codexShellCheck, PROBE_COMMAND, type CodexShellFacts } from '../../src/doctor/codexShell.js';
import { commandOutcome } from '../../src/launch/codex/commands.js';

const exec = (code: number, output: string): string => `Chunk ID: 1\nWall time: 0.0000 seconds\nProcess exited with code ${code}\nOriginal token count: 16\nOutput:\n${output}`;
const BWRAP = 'bwrap: execvp codex-linux-sandbox: No such file or directory';

const facts = (o: Partial<CodexShellFacts> = {}): CodexShellFacts => ({
  bin: '/usr/lib/node_modules/@openai/codex/bin/codex.js', sandbox: 'workspace-write', confined: true,
  codexHome: '/tmp/s/doctor-codex/codex-home', codexHomeInTemp: true, helperLinks: true,
  native: '/usr/lib/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
  outcome: 'ran', fileWritten: true, timeoutMs: 60_000, ...o,
});
const failedToStart = (text: string, o: Partial<CodexShellFacts> = {}): CodexShellFacts => facts({ outcome: 'not_started', command: commandOutcome(text), output: text, fileWritten: false, ...o });

describe('codex shell: the verdict', () => {
  test('the command ran and wrote its file: ok, saying under which sandbox and jail', () => {
    const c = codexShellCheck(facts({ command: commandOutcome(exec(0, 'overseer-doctor\n')) }));
    assert.deepEqual(c, { name: 'codex shell', status: 'ok', detail: `a codex child ran \`${PROBE_COMMAND}\` in its work tree (Codex's sandbox workspace-write, inside Overseer's bubblewrap jail)` });
    assert.match(codexShellCheck(facts({ confined: false, sandbox: 'danger-full-access' })).detail, /Codex's sandbox off \(codexSandbox danger-full-access\), not inside Overseer's jail/);
  });

  test('the helper name missing, for a wrapper script: names the error, why, and the fix', () => {
    const c = codexShellCheck(failedToStart(exec(1, `${BWRAP}\n`), { bin: '/home/u/bin/codex-wrapper', helperLinks: false, native: undefined }));
    assert.equal(c.status, 'warn');
    assert.ok(c.detail.includes(`"${BWRAP}"`), c.detail);
    assert.match(c.detail, /refuses to make that name when CODEX_HOME \(\/tmp\/s\/doctor-codex\/codex-home\) is under the temporary directory/);
    assert.match(c.detail, /\/home\/u\/bin\/codex-wrapper is neither/);
    assert.match(c.fix!, /^point CODEX_BIN at the codex binary itself .*or keep the state out of the temporary directory \(unset OVERSEER_HOME/);
  });

  test('the helper name missing although overseer made its links: a bug, said as one', () => {
    const c = codexShellCheck(failedToStart(exec(1, `${BWRAP}\n`)));
    assert.match(c.detail, /overseer's own links in \/tmp\/s\/doctor-codex\/codex-home\/bin did not help/);
    assert.match(c.fix!, /^report this as an overseer bug/);
  });

  test("Codex's bubblewrap cannot build its namespaces: says so, with the sysctl and the way out", () => {
    const c = codexShellCheck(failedToStart(exec(1, 'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.\n')));
    assert.match(c.detail, /did not start .*"bwrap: No permissions to create new namespace.*Codex's own sandbox \(bubblewrap\) cannot be built here inside Overseer's jail/);
    assert.match(c.fix!, /kernel\.unprivileged_userns_clone=1.*OVERSEER_CODEX_SANDBOX=danger-full-access/);
  });

  test('it ran but its file is not there; codex ran no command; no result in time; codex did not start', () => {
    assert.match(codexShellCheck(facts({ command: commandOutcome(exec(1, 'sh: doctor-probe.txt: Read-only file system\n')), output: exec(1, 'sh: doctor-probe.txt: Read-only file system\n'), fileWritten: false })).detail,
      /ran \(exit 1\) but its file did not appear in its work tree .*: "sh: doctor-probe.txt: Read-only file system"$/);
    const none = codexShellCheck(facts({ outcome: 'no_command', fileWritten: false, error: 'Error: No such file or directory (os error 2)' }));
    assert.match(none.detail, /^codex ended without running the command: Error: No such file or directory \(os error 2\) \(it talked to overseer's bundled fake model only/);
    assert.match(none.fix!, /exec --skip-git-repo-check -s workspace-write/);
    assert.match(codexShellCheck(facts({ outcome: 'timeout', fileWritten: false })).detail, /no result within 60 s/);
    assert.match(codexShellCheck(facts({ outcome: 'spawn_error', fileWritten: false, error: 'cannot run codex: no such file' })).detail, /^codex could not be started: cannot run codex: no such file$/);
  });
});
