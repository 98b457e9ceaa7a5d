// End-to-end: a REAL codex child whose shell commands cannot start is flagged, not passed off as
// a clean success (docs/health.md, commands_failed). The failure is the real one: the hub's state
// under TMPDIR and CODEX_BIN a wrapper script the launcher cannot see through, so no helper links
// are made and every command ends `bwrap: execvp codex-linux-sandbox: …` — while the model,
// scripted, answers as if its commands had run. A child whose command ran and failed (exit 1) is
// not flagged.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { codexBin } from '../helpers/codex.js';
import { codexHubs } from '../helpers/codexHub.js';
import type { TestHub } from '../helpers/hub.js';
import type { CodexScript } from '../../src/fakemodel/fakeOpenAI.js';
import { readFloor } from '../../src/floor/source.js';

const { codexHub } = codexHubs();
const wrapperDir = mkdtempSync(join(os.tmpdir(), 'ovs-wrap-'));
after(() => rmSync(wrapperDir, { recursive: true, force: true }));

/** Two shell commands, then a final answer that claims they worked. */
const twoCommands = (a: string, b: string): CodexScript => [
  { calls: [{ shell: a }] },
  { calls: [{ shell: b }] },
  { text: 'both commands ran fine' },
];

/** Waits until the job has settled, keeping every attention item the waits returned. */
async function settle(h: TestHub, id: string): Promise<{ done: any; attention: any[] }> {
  const attention: any[] = [];
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    attention.push(...(w.attention ?? []));
    if (w.done.length) return { done: w.done[0], attention };
  }
  throw new Error(`job ${id} did not settle within 120 s`);
}

describe('commands_failed: a codex child none of whose commands started', () => {
  test('is flagged on the floor, in its events and in the lead\'s wait, and stays flagged after it ended', async () => {
    // A wrapper the launcher cannot see through: Codex has to make its own links, and refuses under TMPDIR.
    const wrapper = join(wrapperDir, 'codex-wrapper.sh');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${codexBin()} "$@"\n`);
    chmodSync(wrapper, 0o755);
    const { h } = await codexHub({ broken: twoCommands('echo a > a.txt', 'echo b > b.txt') }, { base: os.tmpdir(), config: { codexBin: wrapper } });

    const id = (await h.call('spawn_agent', { prompt: '@script:broken write two files', provider: 'codex' })).job_id;
    const { done, attention } = await settle(h, id);
    assert.equal(done.status, 'succeeded', 'Codex itself reports success');
    assert.deepEqual(done.warnings?.map((w: { kind: string }) => w.kind), ['commands_failed'], 'but the done entry carries the warning');
    assert.equal(existsSync(join(realpathSync(h.project), 'a.txt')), false, 'the commands really did not run');

    const item = attention.find((a) => a.kind === 'warning' && a.warning === 'commands_failed');
    assert.ok(item, `the lead's wait named it: ${JSON.stringify(attention)}`);
    assert.equal(item.job_id, id);
    assert.match(item.detail, /none of its shell commands started.*bwrap: execvp codex-linux-sandbox: No such file or directory/);
    assert.match(item.what_to_do, /overseer doctor/);

    const a = await h.call('get_agent', { job_id: id, events: true });
    assert.deepEqual(a.warnings?.map((w: { kind: string }) => w.kind), ['commands_failed'], 'still open after the job ended');
    const ev = a.events.find((e: { kind: string }) => e.kind === 'warning');
    assert.ok(ev, `a warning event: ${JSON.stringify(a.events.map((e: { kind: string }) => e.kind))}`);
    assert.match(JSON.stringify(ev), /commands_failed/);

    // A tick of the monitor after the end does not clear it (the live warnings are cleared then).
    await h.hub.health.tick();
    const floor = await readFloor(h.hub.ctx.sql.db, { now: Date.now(), hub: null, cap: 8, source: 'hub' });
    const need = floor.needs_you.find((n) => n.kind === 'warning' && n.job_id === id);
    assert.ok(need, `NEEDS YOU lists it: ${JSON.stringify(floor.needs_you)}`);
    assert.match(need.text, /^commands_failed: none of its shell commands started/);
  });

  test('a command that ran and failed (exit 1) is not flagged', async () => {
    const { h } = await codexHub({ fails: twoCommands('cat missing.txt', 'false') }, { base: os.tmpdir() });
    const id = (await h.call('spawn_agent', { prompt: '@script:fails read a missing file', provider: 'codex' })).job_id;
    const { done, attention } = await settle(h, id);
    assert.equal(done.status, 'succeeded');
    assert.equal(done.warnings, undefined);
    assert.equal(attention.find((x) => x.warning === 'commands_failed'), undefined);
    const a = await h.call('get_agent', { job_id: id, events: true });
    assert.equal(a.warnings, undefined);
    assert.equal(a.events.find((e: { kind: string }) => e.kind === 'warning'), undefined);
  });
});
