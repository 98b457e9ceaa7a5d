// End-to-end (real claude children, real bubblewrap, real mounts): a file another agent holds
// is read-only inside every other confined child, whatever program writes it — here a script
// file the hook cannot read (`node w.js`, `python3 w.py`, `sh w.sh`) — from the moment the lock
// is taken (the child was already running), and writable again once the lock ends (issue 18
// point 2). The test waits on the hub's own sync, never on a sleep.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probeBwrap } from '../../src/confine/launcher.js';
import type { LockMounts } from '../../src/confine/lockMounts.js';
import type { TestHub } from '../helpers/hub.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { claudeBin } from '../helpers/claude.js';
import { gate } from '../helpers/gate.js';
import { finishStep, holderScript } from '../helpers/holder.js';
import { eventually } from '../helpers/wait.js';

const bwrap = probeBwrap();
if (!bwrap.ok) throw new Error(`these tests need bubblewrap (.ci/run installs it): ${bwrap.reason}`);

const { hubWith } = scriptedHubs();
const finish = finishStep;
const bash = (command: string) => ({ tools: [{ name: 'Bash', input: { command } }] });

/** Three writers the hook cannot see into, each leaving its stderr (and exit code) in a file. */
const WRITERS = (tag: string) => [
  `node w.js 2> ${tag}-node.txt; echo "exit $?" >> ${tag}-node.txt`,
  `python3 w.py 2> ${tag}-py.txt; echo "exit $?" >> ${tag}-py.txt`,
  `sh w.sh 2> ${tag}-sh.txt; echo "exit $?" >> ${tag}-sh.txt`,
];

describe('locks below the hook', () => {
  test('a running child cannot write a file another agent locks, by any program, until the lock ends', { timeout: 240_000 }, async () => {
    const tryWhileLocked = gate();
    const releaseA = gate();
    const tryAfter = gate();
    let nestedSaw = '';
    let h!: TestHub;
    h = await hubWith({
      holder: holderScript(releaseA),
      writer: async (ctx) => {
        // The three scripts, then a nested `claude -p` whose own Write (no Overseer hook at all) targets the file.
        const locked = [...WRITERS('locked'), `${claudeBin()} -p '@script:nested write shared.txt' --permission-mode acceptEdits --output-format json > locked-nested.txt 2>&1; true`];
        const after = WRITERS('after');
        if (ctx.step === 0) return bash(`printf '%s' "require('fs').writeFileSync('shared.txt', 'B was here\\\\n')" > w.js; printf 'open("shared.txt","w").write("B was here\\\\n")' > w.py; printf 'echo "B was here" > shared.txt' > w.sh`);
        if (ctx.step === 1) await tryWhileLocked.wait;
        if (ctx.step >= 1 && ctx.step <= 4) return bash(locked[ctx.step - 1]!);
        if (ctx.step === 5) await tryAfter.wait;
        if (ctx.step >= 5 && ctx.step <= 7) return bash(after[ctx.step - 5]!);
        if (ctx.step === 8) return finish('tried');
        return { text: 'done' };
      },
      nested: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(/Primary working directory: (\S+)/.exec(ctx.system)?.[1] ?? '.', 'shared.txt'), content: 'nested claude was here\n' } }] };
        nestedSaw = ctx.lastToolResults[0]?.text ?? '';
        return { text: 'nested done' };
      },
    });
    const root = realpathSync(h.project);
    const shared = join(root, 'shared.txt');
    writeFileSync(shared, 'original\n');
    const mounts = h.hub.confinement?.lockMounts;
    assert.ok(mounts, 'confinement with lock mounts is active (bubblewrap and python3 are there)');

    // B runs first, with nothing locked: its namespace exists before A takes the lock.
    const b = (await h.call('spawn_agent', { prompt: '@script:writer', title: 'Writer B' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'writer' && r.step === 1, 60_000);
    const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
    await eventually('A holds shared.txt', async () => ((await h.hub.locks.list({})).locks.some((l) => l.path === shared && l.holder === a) ? true : undefined), 60_000);
    const t0 = Date.now();
    await synced(mounts, 'shared.txt read-only in B', () => mounts.mountedFor(b).includes(shared));
    const tookMs = Date.now() - t0;
    tryWhileLocked.open();
    await h.fake.waitForRequest((r) => r.script === 'writer' && r.step === 5, 60_000);
    assert.equal(readFileSync(shared, 'utf8'), 'original\n', 'no writer got through while A held the file');
    for (const f of ['locked-node.txt', 'locked-py.txt', 'locked-sh.txt']) {
      const err = readFileSync(join(root, f), 'utf8');
      assert.match(err, /EROFS|Read-only file system/, `${f}: ${err}`);
      assert.doesNotMatch(err, /exit 0/, `${f} must fail`);
    }
    assert.match(nestedSaw, /EROFS|EBUSY|read-only/i, `the nested claude's Write was refused by the file system: ${nestedSaw}`);

    releaseA.open();
    const wa = await h.call('wait_for_agents', { job_ids: [a], timeout_s: 60 });
    assert.equal(wa.done[0].status, 'succeeded');
    await synced(mounts, 'shared.txt writable again in B', () => !mounts.mountedFor(b).includes(shared));
    tryAfter.open();
    const wb = await h.call('wait_for_agents', { job_ids: [b], timeout_s: 60 });
    assert.equal(wb.done[0].status, 'succeeded', JSON.stringify(wb.done[0]));
    assert.equal(readFileSync(shared, 'utf8'), 'B was here\n', 'after the lock ended the writes went through');
    assert.match(readFileSync(join(root, 'after-node.txt'), 'utf8'), /exit 0/, readFileSync(join(root, 'after-node.txt'), 'utf8'));
    assert.ok(existsSync(shared));
    console.error(`# lock → read-only in a running child: ${tookMs} ms (sync passes: median ${median(mounts.latencies)} ms)`);
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

function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
}
