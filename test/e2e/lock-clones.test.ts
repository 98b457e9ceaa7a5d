// End-to-end (real claude children, real bubblewrap, real mounts, real git clones): locks are keyed
// by repository (issue 29 point 2), so a file agent A locks in one clone is read-only in a child
// working in ANOTHER clone of the same repository — its own copy of the file, written by a program
// the hook cannot read into (`sh w.sh`) — until A's lock ends; then the same write goes through.
// The test waits on the hub's own sync passes and the fake model's requests, never on a sleep.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probeBwrap } from '../../src/confine/launcher.js';
import type { LockMounts } from '../../src/confine/lockMounts.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep, holderScript } from '../helpers/holder.js';
import { eventually } from '../helpers/wait.js';

const bwrap = probeBwrap();
if (!bwrap.ok) throw new Error(`these tests need bubblewrap (.ci/run installs it): ${bwrap.reason}`);

const { hubWith } = scriptedHubs();
const bash = (command: string) => ({ tools: [{ name: 'Bash', input: { command } }] });
const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });

describe('locks across clones below the hook', () => {
  test('a file locked in one clone cannot be written in another clone of the repository by any program, until the lock ends', { timeout: 240_000 }, async () => {
    const tryWhileLocked = gate();
    const releaseA = gate();
    const tryAfter = gate();
    const h = await hubWith({
      holder: holderScript(releaseA, 'src/x.ts'),
      writer: async (ctx) => {
        if (ctx.step === 0) return bash(`printf 'echo "B was here" >> src/x.ts\\n' > w.sh`);
        if (ctx.step === 1) { await tryWhileLocked.wait; return bash('sh w.sh 2> locked.txt; echo "exit $?" >> locked.txt'); }
        if (ctx.step === 2) { await tryAfter.wait; return bash('sh w.sh 2> after.txt; echo "exit $?" >> after.txt'); }
        if (ctx.step === 3) return finishStep('tried');
        return { text: 'done' };
      },
    });
    const root = realpathSync(h.project);
    const origin = join(root, 'origin');
    mkdirSync(join(origin, 'src'), { recursive: true });
    writeFileSync(join(origin, 'src', 'x.ts'), 'export const x = 1;\n');
    git(origin, 'init', '-q');
    git(origin, 'add', '.');
    git(origin, 'commit', '-qm', 'first');
    git(root, 'clone', '-q', origin, 'c1');
    git(root, 'clone', '-q', origin, 'c2');
    const [c1, c2] = [join(root, 'c1'), join(root, 'c2')];
    const locked = join(c1, 'src', 'x.ts');
    const copy = join(c2, 'src', 'x.ts');
    const mounts = h.hub.confinement?.lockMounts;
    assert.ok(mounts, 'confinement with lock mounts is active (bubblewrap and python3 are there)');

    // B runs in clone 2 first, with nothing locked: its namespace exists before A takes the lock.
    const b = (await h.call('spawn_agent', { prompt: '@script:writer', title: 'Writer B', cwd: c2 })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'writer' && r.step === 1, 60_000);
    const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A', cwd: c1 })).job_id;
    await eventually('A holds clone 1\'s src/x.ts', async () => ((await h.hub.locks.list({})).locks.some((l) => l.path === locked && l.holder === a) ? true : undefined), 60_000);
    await synced(mounts, 'clone 2\'s src/x.ts read-only in B', () => mounts.mountedFor(b).includes(copy));
    tryWhileLocked.open();
    await h.fake.waitForRequest((r) => r.script === 'writer' && r.step === 2, 60_000);
    const err = readFileSync(join(c2, 'locked.txt'), 'utf8');
    assert.match(err, /Read-only file system|EROFS/, `the write in clone 2 failed: ${err}`);
    assert.doesNotMatch(err, /exit 0/, err);
    assert.equal(readFileSync(copy, 'utf8'), 'export const x = 1;\n', 'clone 2\'s file is unchanged while A holds it');

    releaseA.open();
    const wa = await h.call('wait_for_agents', { job_ids: [a], timeout_s: 60 });
    assert.equal(wa.done[0].status, 'succeeded');
    await synced(mounts, 'clone 2\'s src/x.ts writable again in B', () => !mounts.mountedFor(b).includes(copy));
    tryAfter.open();
    const wb = await h.call('wait_for_agents', { job_ids: [b], timeout_s: 60 });
    assert.equal(wb.done[0].status, 'succeeded', JSON.stringify(wb.done[0]));
    assert.match(readFileSync(join(c2, 'after.txt'), 'utf8'), /exit 0/, readFileSync(join(c2, 'after.txt'), 'utf8'));
    assert.equal(readFileSync(copy, 'utf8'), 'export const x = 1;\nB was here\n', 'after the lock ended the write went through');
    assert.equal(readFileSync(locked, 'utf8'), 'export const x = 1;\n', 'clone 1 untouched');
  });
});

/** Runs the hub's own sync pass until `cond` holds (each pass ends when its mounts are done). */
async function synced(m: LockMounts, what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await m.sync();
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}
