// End-to-end (real claude children, real bubblewrap, real lock mounts): a lock handed over is
// writable the moment the waiter's lock_files returns, whatever ended the holder's claim —
// release_files, the TTL, cancel_agent, kill -9 of the holder — and whichever way the waiter
// writes right after its grant: Claude Code's Write (a temporary file renamed over the target),
// Edit, `sed -i` and `mv` (both rename onto the held path: EBUSY while it is still a mount
// point). Before its grant the waiter's Write gets the hook's refusal naming the holder. Nothing
// the holder wrote is lost: B's Edit and sed -i change the content A wrote under its lock. Ordering
// comes from the fake model's requests, gates and the hub's bus, never a sleep.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { probeBwrap } from '../../src/confine/launcher.js';
import type { ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import type { TestHub } from '../helpers/hub.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { subscribed } from '../helpers/bus.js';
import { gate } from '../helpers/gate.js';
import { cwdOf, lastResult } from '../helpers/steps.js';
import { finishStep } from '../helpers/holder.js';
import { agentProcess, eventually, waitEnded } from '../helpers/wait.js';
import { events as eventRows, job, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const bwrap = probeBwrap();
if (!bwrap.ok) throw new Error(`these tests need bubblewrap (.ci/run installs it): ${bwrap.reason}`);

const { hubWith } = scriptedHubs();
const FILES = ['w.txt', 'e.txt', 's.txt', 'm.txt'];
type Mode = 'release' | 'ttl' | 'cancel' | 'kill';

async function handOver(mode: Mode, confine: 'require' | 'off'): Promise<void> {
  const holderGo = gate(); // the holder's next model turn waits for it
  const seen: { refused?: ToolResultInfo; granted?: ToolResultInfo; boundAtGrant?: string[]; writes?: ToolResultInfo[] } = {};
  let h!: TestHub;
  let b = '';
  h = await hubWith({
    holder: async (ctx) => {
      if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: FILES, reason: 'A owns them', ttl_s: mode === 'ttl' ? 5 : 600 } }] };
      // A writes what B's Edit and sed -i will change: nothing A wrote may be lost in the hand-over.
      if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: FILES.map((f) => `printf 'A\\n' > ${f}`).join('; ') } }] };
      if (ctx.step === 2) {
        await holderGo.wait; // cancel and kill -9 end it here; the TTL runs out here
        return mode === 'release' ? { tools: [{ name: 'mcp__overseer__release_files', input: {} }] } : finishStep('A is done');
      }
      if (ctx.step === 3 && mode === 'release') return finishStep('A released and is done');
      return { text: 'done' };
    },
    waiter: async (ctx) => {
      const dir = cwdOf(ctx);
      switch (ctx.step) {
        case 0: // once A holds the files and has written them (its next request carries the Bash result)
          await h.fake.waitForRequest((r) => r.script === 'holder' && r.step === 2, 60_000);
          return { tools: FILES.map((f) => ({ name: 'Read', input: { file_path: join(dir, f) } })) };
        case 1: return { tools: [{ name: 'Write', input: { file_path: join(dir, 'w.txt'), content: 'B too early\n' } }] };
        case 2:
          seen.refused = lastResult(ctx);
          return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: FILES, timeout_s: 120, reason: 'B takes over' } }] };
        case 3: {
          seen.granted = lastResult(ctx);
          // What the hub still has bound read-only in B's sandbox when B hears of its grant.
          seen.boundAtGrant = h.hub.confinement?.lockMounts?.stillReadOnly(b, FILES.map((f) => join(cwdOf(ctx), f))) ?? [];
          holderGo.open();
          return {
            tools: [
              { name: 'Write', input: { file_path: join(dir, 'w.txt'), content: 'B\n' } },
              { name: 'Edit', input: { file_path: join(dir, 'e.txt'), old_string: 'A', new_string: 'B' } },
              { name: 'Bash', input: { command: "sed -i 's/A/B/' s.txt" } },
              { name: 'Bash', input: { command: "printf 'B\\n' > m.tmp && mv m.tmp m.txt" } },
            ],
          };
        }
        case 4:
          seen.writes = ctx.lastToolResults;
          return finishStep('B wrote all four');
        default: return { text: 'done' };
      }
    },
  }, { confine });
  const root = realpathSync(h.project);
  for (const f of FILES) writeFileSync(join(root, f), 'seed\n'); // A replaces it with 'A' before B reads
  const waiting = subscribed(h.hub.ctx.bus, 'lock', 60_000);
  const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A', retry: 'none' })).job_id;
  b = (await h.call('spawn_agent', { prompt: '@script:waiter', title: 'Waiter B' })).job_id;
  await waiting; // B waits in lock_files while A holds all four
  // The hub's mount pass for the lock runs beside this test's listener: look until it has bound them,
  // well within A's shortest hold (the 5 s TTL).
  if (confine === 'require') {
    const want = FILES.map((f) => join(root, f)).sort();
    await eventually('the held files read-only in B\'s sandbox while A holds them', () => JSON.stringify(h.hub.confinement!.lockMounts!.mountedFor(b)) === JSON.stringify(want), 3_000);
  }
  else assert.equal(h.hub.confinement?.status.active, false);
  if (mode === 'release') holderGo.open();
  if (mode === 'cancel') await h.call('cancel_agent', { job_id: a, reason: 'hand-over test' });
  if (mode === 'kill') process.kill(agentProcess((await job(h.hub, a)).pid!), 'SIGKILL');

  const w = await waitEnded(h, [a, b], 120);
  const statusA = w.done.find((d: any) => d.job_id === a)?.status;
  const statusB = w.done.find((d: any) => d.job_id === b)?.status;
  assert.equal(statusB, 'succeeded', JSON.stringify(w.done));
  assert.equal(statusA, { release: 'succeeded', ttl: 'succeeded', cancel: 'cancelled', kill: 'failed' }[mode], JSON.stringify(w.done));

  assert.ok(seen.refused?.is_error, 'B\'s early Write was refused');
  assert.match(seen.refused!.text, new RegExp(`held by agent ${a} \\("Holder A"\\) for "A owns them"`));
  assert.match(seen.refused!.text, /lock_files/);
  assert.ok(seen.granted && !seen.granted.is_error, `lock_files failed: ${seen.granted?.text}`);
  const grant = JSON.parse(seen.granted!.text);
  assert.deepEqual(grant.acquired, FILES.map((f) => join(root, f)).sort());
  assert.equal(grant.not_writable, undefined, seen.granted!.text);
  assert.deepEqual(seen.boundAtGrant, [], 'nothing B holds is still read-only when its lock_files returns');
  assert.equal(seen.writes?.length, 4);
  for (const r of seen.writes!) assert.equal(r.is_error, false, `a write after the grant failed: ${r.text}`);
  for (const f of FILES) assert.equal(readFileSync(join(root, f), 'utf8'), 'B\n', `${f} holds what B wrote (mode ${mode})`);
}

/** shared.txt as A left it; the holder spawned and holding it (its next request came), then the writer spawned. */
async function holderThenWriter(h: TestHub): Promise<{ file: string; a: string; b: string }> {
  const file = join(realpathSync(h.project), 'shared.txt');
  writeFileSync(file, 'A\n');
  const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
  await h.fake.waitForRequest((r) => r.script === 'holder' && r.step === 1, 60_000);
  const b = (await h.call('spawn_agent', { prompt: '@script:writer', title: 'Writer B' })).job_id;
  return { file, a, b };
}

describe('a lock handed over is writable at once', () => {
  for (const mode of ['release', 'ttl', 'cancel', 'kill'] as const) {
    test(`hand-over by ${mode}: Write, Edit, sed -i and mv land right after lock_files returns`, { timeout: 180_000 }, () => handOver(mode, 'require'));
  }
  // The same hand-overs unconfined (no mounts: the hook alone holds the locks).
  for (const mode of ['release', 'kill'] as const) {
    test(`confinement off, hand-over by ${mode}: the writes land too`, { timeout: 180_000 }, () => handOver(mode, 'off'));
  }

  test('the hook\'s auto-lock of a file released a moment ago answers only once it is writable in the caller\'s sandbox', { timeout: 180_000 }, async () => {
    const release = gate();
    const writeNow = gate();
    let h!: TestHub;
    h = await hubWith({
      holder: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['shared.txt'], reason: 'A owns it' } }] };
        if (ctx.step === 1) { await release.wait; return { tools: [{ name: 'mcp__overseer__release_files', input: {} }] }; }
        if (ctx.step === 2) return finishStep('A done');
        return { text: 'done' };
      },
      writer: async (ctx) => {
        const file = join(cwdOf(ctx), 'shared.txt');
        if (ctx.step === 0) return { tools: [{ name: 'Read', input: { file_path: file } }] };
        if (ctx.step === 1) { await writeNow.wait; return { tools: [{ name: 'Write', input: { file_path: file, content: 'B\n' } }] }; }
        if (ctx.step === 2) return finishStep(`B: ${lastResult(ctx).is_error ? 'ERROR ' : ''}${lastResult(ctx).text.slice(0, 200)}`);
        return { text: 'done' };
      },
    });
    const { file, a, b } = await holderThenWriter(h);
    await h.fake.waitForRequest((r) => r.script === 'writer' && r.step === 1, 60_000);
    const mounts = h.hub.confinement!.lockMounts!;
    assert.deepEqual(mounts.mountedFor(b), [file], 'A\'s file is read-only in B\'s sandbox');

    // The moment A's release is in the store (the lock event), B's hook asks to write the file.
    const asked = new Promise<{ boundWhenAsked: string[]; verdict: unknown; boundWhenAnswered: string[] }>((resolve) => {
      const off = h.hub.ctx.bus.on('lock', (e) => {
        if (e.holder !== a) return;
        off();
        const boundWhenAsked = mounts.mountedFor(b);
        void h.hub.hook.answer({ role: 'agent', jobId: b }, { tool_name: 'Write', tool_input: { file_path: file, content: 'x' } }, 'claude')
          .then((verdict) => resolve({ boundWhenAsked, verdict, boundWhenAnswered: mounts.mountedFor(b) }));
      });
    });
    release.open();
    const r = await asked;
    assert.deepEqual(r.boundWhenAsked, [file], 'the file was still bound when B asked: the hook waited');
    assert.notEqual((r.verdict as { decision: string }).decision, 'deny', JSON.stringify(r.verdict));
    assert.deepEqual(r.boundWhenAnswered, [], 'answered only once the file is writable in B\'s sandbox');
    writeNow.open(); // B's own Write through the real hook now lands
    const w = await waitEnded(h, [a, b], 120);
    assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded'], JSON.stringify(w.done));
    assert.match(w.done[1].result, /^B: (?!ERROR)/);
    assert.equal(readFileSync(file, 'utf8'), 'B\n');
  });

  test('a write only the mount stops is explained to the writer in the lock\'s words, not as EROFS alone', { timeout: 180_000 }, async () => {
    const done = gate();
    const seen: { pyOut?: string; sawNotice?: boolean } = {};
    let h!: TestHub;
    h = await hubWith({
      holder: async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['shared.txt'], reason: 'A owns it' } }] };
        if (ctx.step === 1) { await done.wait; return finishStep('A done'); }
        return { text: 'done' };
      },
      writer: async (ctx) => {
        const noticed = JSON.stringify(ctx.body.messages).includes('refused by a file lock, not by the file system');
        if (ctx.step === 0) return { tools: [{ name: 'Bash', input: { command: "printf 'open(\"shared.txt\",\"w\").write(\"B\\\\n\")' > w.py" } }] };
        if (ctx.step === 1) return { tools: [{ name: 'Bash', input: { command: 'python3 w.py' } }] };
        if (ctx.step === 2) seen.pyOut = lastResult(ctx).text;
        // The notice arrives as a message pushed into the conversation: look for it a few turns.
        if (!noticed && ctx.step < 8) return { tools: [{ name: 'Bash', input: { command: 'true' } }] };
        seen.sawNotice = noticed;
        if (ctx.step < 20) { done.open(); return finishStep(noticed ? 'saw the notice' : 'no notice'); }
        return { text: 'done' };
      },
    });
    const { file, a, b } = await holderThenWriter(h);
    const w = await waitEnded(h, [a, b], 120);
    assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded'], JSON.stringify(w.done));
    assert.match(seen.pyOut ?? '', /Read-only file system/, 'python3 was stopped by the mount');
    assert.equal(readFileSync(file, 'utf8'), 'A\n');
    assert.equal(seen.sawNotice, true, 'B\'s conversation got the lock\'s words');
    const events = (await eventRows(h.hub, b)).filter((e) => e.kind === 'lock_refused');
    assert.equal(events.length, 1, 'told once');
    assert.deepEqual(JSON.parse(events[0]!.data_json ?? '{}').files, [file]);
    const notice = await rows(h.hub, sql<{ text: string }>`select text from messages where to_id = ${b} and from_id = 'overseer'`);
    assert.equal(notice.length, 1);
    assert.match(notice[0]!.text, new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is held by agent ${a} \\("Holder A"\\) for "A owns it"`));
  });
});
