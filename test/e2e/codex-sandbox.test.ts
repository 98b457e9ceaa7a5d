// End-to-end: a REAL codex child's shell command runs wherever the hub's state lives. Codex
// refuses to make its sandbox helper links when CODEX_HOME (inside the state) is under the
// temporary directory, and with the system's bubblewrap (Debian's 0.8.0, no --argv0) every
// sandboxed command then ended `bwrap: execvp codex-linux-sandbox: No such file or directory`.
// Here the state is under TMPDIR (as in CI), confined and not, and under a HOME that is itself a
// temporary directory: the command's file lands and its output reaches the model, while Codex's
// own sandbox still refuses a write outside the work tree and a connection out
// (docs/security.md, "Codex's own sandbox inside the jail").
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { codexHubs, type CodexHubOptions } from '../helpers/codexHub.js';
import type { CodexScript, CodexStepContext } from '../../src/fakemodel/fakeOpenAI.js';

const { codexHub } = codexHubs();

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);
/** A directory outside every place Codex's workspace-write sandbox lets a command write (the work
 * tree, /tmp, $TMPDIR): made by the test itself, removed after the file's tests. */
const outsideDir = ((): string => {
  const temps = [realpathSync(os.tmpdir()), '/tmp'];
  const base = ['/var/tmp', os.homedir(), process.cwd()].find((d) => existsSync(d) && !temps.some((t) => inside(realpathSync(d), t)));
  assert.ok(base, 'a directory outside the temporary directory to try a write in');
  const dir = mkdtempSync(join(base, 'ovs-sbx-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
})();

/** One shell call: writes out.txt in the work tree, tries a write outside it, a connection to the
 * fake, and a change to the sandbox helper links (<CODEX_HOME>/bin), named so the lock hook cannot
 * read it (as a hostile agent would): what stops it is the file system, or nothing. */
const shellScript = (port: () => string, helpers: () => string, seen: string[]): CodexScript => (ctx: CodexStepContext) => {
  if (ctx.step === 0) {
    return { calls: [{ shell: `echo hi-from-shell > out.txt && cat out.txt; touch ${outsideDir}/escaped.txt 2>/dev/null && echo OUTSIDE-WRITTEN || echo OUTSIDE-REFUSED; (exec 3<>/dev/tcp/127.0.0.1/${port()}) 2>/dev/null && echo NET-OPEN || echo NET-CLOSED; p=$(echo ${Buffer.from(helpers()).toString('base64')} | base64 -d); touch "$p/planted" 2>/dev/null && echo HELPERS-WRITABLE || echo HELPERS-READONLY` }] };
  }
  seen.push(...ctx.lastOutputs.map((o) => o.text));
  return { text: 'ran the command' };
};

async function runOneCommand(o: CodexHubOptions): Promise<{ output: string; project: string }> {
  const seen: string[] = [];
  let url = '';
  let home = '';
  const { h, openai } = await codexHub({ sh: shellScript(() => new URL(url).port, () => join(home, 'codex-home', 'bin'), seen) }, o);
  url = openai.url;
  home = h.home;
  const id = (await h.call('spawn_agent', { prompt: '@script:sh run one command', provider: 'codex' })).job_id;
  const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 120 });
  assert.equal(w.done[0]?.status, 'succeeded', w.done[0]?.error);
  return { output: seen.join('\n'), project: realpathSync(h.project) };
}

function assertRan(r: { output: string; project: string }): void {
  assert.doesNotMatch(r.output, /codex-linux-sandbox|bwrap:/, `the command did not start:\n${r.output}`);
  assert.ok(existsSync(join(r.project, 'out.txt')), r.output);
  assert.equal(readFileSync(join(r.project, 'out.txt'), 'utf8'), 'hi-from-shell\n', r.output);
  assert.match(r.output, /hi-from-shell/, 'the output came back to the model');
  // Codex's own sandbox is still on: no write outside the work tree, no connection out.
  assert.match(r.output, /OUTSIDE-REFUSED/, r.output);
  assert.equal(existsSync(join(outsideDir, 'escaped.txt')), false);
  assert.match(r.output, /NET-CLOSED/, r.output);
}

describe('codex children run their commands wherever the state lives', () => {
  test('state under TMPDIR, confined: the command runs, sandboxed; the helper links are read-only to it', async () => {
    const r = await runOneCommand({ base: os.tmpdir() });
    assertRan(r);
    assert.match(r.output, /HELPERS-READONLY/, 'the jail binds <CODEX_HOME>/bin read-only');
  });

  test('state under TMPDIR, confinement off (OVERSEER_CONFINE=off): the command runs, sandboxed', async () => {
    const r = await runOneCommand({ base: os.tmpdir(), config: { confine: 'off' } });
    assertRan(r);
    // The limit docs/security.md states: without the jail, Codex's sandbox lets commands write
    // under the temporary directory, links included.
    assert.match(r.output, /HELPERS-WRITABLE/);
  });

  test('state under a HOME that is a temporary directory ($HOME/.local/state/overseer/…), confined', async () => {
    const r = await runOneCommand({ base: os.tmpdir(), home: (dir) => join(dir, 'home', '.local', 'state', 'overseer', 'projects', 'p') });
    assertRan(r);
    assert.match(r.output, /HELPERS-READONLY/);
  });
});
