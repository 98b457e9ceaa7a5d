// End-to-end: file locks between real claude children (real hook, real HTTP MCP, real SQLite)
// driven by the scripted fake model. Contention through the PreToolUse hook then lock_files,
// deadlock refused at once, a TTL expiry waking a waiter, and locks across a hub restart.
// Ordering between children is made explicit: a step awaits another child's request
// (fake.waitForRequest), a gate the test opens, or the moment a blocking tool subscribes to the
// hub's bus — never a sleep.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import type { Script, ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { subscribed } from '../helpers/bus.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { cwdOf, lastResult } from '../helpers/steps.js';
import { gate } from '../helpers/gate.js';
import { job, jobOf } from '../helpers/state.js';

const { cleanups, hubWith: scriptedHub } = scriptedHubs();

// Every scenario runs confined (bubblewrap, lock mounts: what CI and most Linux users have; a
// machine without bubblewrap fails here rather than passing unconfined) and with confinement off.
for (const confine of ['require', 'off'] as const) {
  const hubWith = (scripts: Parameters<typeof scriptedHub>[0]): Promise<TestHub> => scriptedHub(scripts, { confine });

  const finish = (result: string) => ({ tools: [{ name: 'mcp__overseer__finish', input: { result } }] });

  describe(`file locks between children (confinement ${confine})`, () => {
    test('contention: the hook denies B naming A; lock_files blocks until A ends; then B writes', async () => {
      const aDone = gate();
      const seen: { denied?: ToolResultInfo; locked?: ToolResultInfo; lockedAt?: number } = {};
      let h!: TestHub;
      h = await hubWith({
        holder: async (ctx) => {
          if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'shared.txt'), content: 'from A\n' } }] };
          if (ctx.step === 1) { await aDone.wait; return finish('A wrote shared.txt'); }
          return { text: 'done' };
        },
        contender: async (ctx) => {
          const file = join(cwdOf(ctx), 'shared.txt');
          switch (ctx.step) {
            case 0: // only once A's write went through (A's next request carries its result)
              await h.fake.waitForRequest((r) => r.script === 'holder' && r.step === 1, 30_000);
              return { tools: [{ name: 'Read', input: { file_path: file } }] };
            case 1: return { tools: [{ name: 'Write', input: { file_path: file, content: 'from B\n' } }] };
            case 2:
              seen.denied = lastResult(ctx);
              return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['shared.txt'], timeout_s: 60, reason: 'B rewrites it' } }] };
            case 3:
              seen.locked = lastResult(ctx);
              seen.lockedAt = Date.now();
              return { tools: [{ name: 'Write', input: { file_path: file, content: 'from B\n' } }] };
            case 4: return finish(`B wrote shared.txt: ${lastResult(ctx).is_error ? 'ERROR ' : ''}${lastResult(ctx).text.slice(0, 200)}`);
            default: return { text: 'done' };
          }
        },
      });
      const shared = realpathSync(h.project) + '/shared.txt';
      const lockWait = subscribed(h.hub.ctx.bus, 'lock');
      const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
      const b = (await h.call('spawn_agent', { prompt: '@script:contender', title: 'Contender B' })).job_id;

      await lockWait; // B is blocked in lock_files while A still runs
      assert.equal((await job(h.hub, a)).status, 'running');
      const held = (await h.call('list_locks', {})).locks;
      assert.deepEqual(held.map((l: any) => [l.path, l.holder, l.waiters]), [[shared, a, 1]], 'A holds shared.txt (hook auto-lock), B waits for it');
      aDone.open();

      const w = await h.call('wait_for_agents', { job_ids: [a, b], timeout_s: 60 });
      assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded'], JSON.stringify(w.done.map((d: any) => [d.status, d.error])));
      assert.ok(seen.denied, 'B saw the result of its first Write');
      assert.equal(seen.denied.is_error, true);
      assert.match(seen.denied.text, new RegExp(a));
      assert.match(seen.denied.text, /Holder A/);
      assert.match(seen.denied.text, /lock_files/);
      assert.ok(seen.locked && !seen.locked.is_error, `lock_files failed: ${seen.locked?.text}`);
      assert.deepEqual(JSON.parse(seen.locked.text).acquired, [shared]);
      assert.ok(seen.lockedAt! >= (await job(h.hub, a)).ended_at!, 'granted only after A ended');
      assert.equal(readFileSync(shared, 'utf8'), 'from B\n');
      assert.match(w.done[1].result, /^B wrote shared\.txt: (?!ERROR)/);
      assert.deepEqual((await h.call('list_locks', {})).locks, [], 'both jobs ended: their locks are released');
    });

    test('deadlock: crossing requests — one is refused at once naming both jobs, the other proceeds', async () => {
      const got: Record<string, { r: ToolResultInfo; at: number }> = {};
      let h!: TestHub;
      const crosser = (me: string, other: string, mine: string, theirs: string): Script => async (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: [mine], timeout_s: 0 } }] };
        if (ctx.step === 1) {
          assert.equal(lastResult(ctx).is_error, false, lastResult(ctx).text);
          // Both first locks are held before either crossing request is made.
          await h.fake.waitForRequest((r) => r.script === other && r.step === 1, 30_000);
          return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: [theirs], timeout_s: 60 } }] };
        }
        if (ctx.step === 2) {
          got[me] = { r: lastResult(ctx), at: Date.now() };
          return finish(got[me]!.r.is_error ? 'refused' : 'acquired');
        }
        return { text: 'done' };
      };
      h = await hubWith({ dla: crosser('dla', 'dlb', 'x.txt', 'y.txt'), dlb: crosser('dlb', 'dla', 'y.txt', 'x.txt') });
      const ids = { dla: (await h.call('spawn_agent', { prompt: '@script:dla' })).job_id, dlb: (await h.call('spawn_agent', { prompt: '@script:dlb' })).job_id };
      const w = await h.call('wait_for_agents', { job_ids: [ids.dla, ids.dlb], timeout_s: 60 });
      assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded']);

      const losers = (['dla', 'dlb'] as const).filter((k) => got[k]?.r.is_error);
      assert.equal(losers.length, 1, `exactly one refused: ${JSON.stringify(got)}`);
      const loser = losers[0]!;
      const winner = loser === 'dla' ? 'dlb' : 'dla';
      assert.match(got[loser]!.r.text, /deadlock/);
      assert.match(got[loser]!.r.text, new RegExp(ids.dla));
      assert.match(got[loser]!.r.text, new RegExp(ids.dlb));
      const crossingSent = Math.max(...h.fake.requests.filter((r) => r.step === 1 && (r.script === 'dla' || r.script === 'dlb')).map((r) => r.at));
      const ms = got[loser]!.at - crossingSent;
      assert.ok(ms < 10_000, `refused in ${ms} ms, not after the 60 s timeout`);
      const root = realpathSync(h.project);
      assert.deepEqual(JSON.parse(got[winner]!.r.text).acquired, [`${root}/${winner === 'dla' ? 'y.txt' : 'x.txt'}`], 'the other got the file once the refused one ended');
      assert.ok(got[winner]!.at >= (await job(h.hub, ids[loser])).ended_at!, 'granted when the refused job ended and released its lock');
      assert.deepEqual(await h.hub.locks.waiting(), [], 'no lock request left waiting');
    });

    test('TTL: a lock whose holder goes quiet expires and wakes the waiter while the holder still runs', async () => {
      let h!: TestHub;
      const seen: { r?: ToolResultInfo; at?: number; holderStatus?: string } = {};
      let holderId = '';
      h = await hubWith({
        quiet: (ctx) => (ctx.step === 0
          ? { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['z.txt'], ttl_s: 5 } }] }
          : { delayMs: 60_000, text: 'never' }),
        waiter: async (ctx) => {
          if (ctx.step === 0) {
            await h.fake.waitForRequest((r) => r.script === 'quiet' && r.step === 1, 30_000);
            return { tools: [{ name: 'mcp__overseer__lock_files', input: { files: ['z.txt'], timeout_s: 60 } }] };
          }
          if (ctx.step === 1) {
            seen.r = lastResult(ctx);
            seen.at = Date.now();
            seen.holderStatus = (await jobOf(h.hub, holderId))?.status;
            return finish('got z');
          }
          return { text: 'done' };
        },
      });
      holderId = (await h.call('spawn_agent', { prompt: '@script:quiet' })).job_id;
      const waiterId = (await h.call('spawn_agent', { prompt: '@script:waiter' })).job_id;
      const w = await h.call('wait_for_agents', { job_ids: [waiterId], timeout_s: 60 });
      assert.equal(w.done[0].status, 'succeeded');
      assert.ok(seen.r && !seen.r.is_error, `lock_files failed: ${seen.r?.text}`);
      const z = `${realpathSync(h.project)}/z.txt`;
      assert.deepEqual(JSON.parse(seen.r.text).acquired, [z]);
      assert.equal(seen.holderStatus, 'running', 'the holder was still running when its lock expired');
      const lockedAt = h.fake.requests.find((r) => r.script === 'quiet' && r.step === 1)!.at;
      const waited = seen.at! - lockedAt;
      assert.ok(waited >= 4000 && waited < 20_000, `granted ${waited} ms after the 5 s lock was taken`);
      assert.equal((await job(h.hub, holderId)).status, 'running');
      await h.call('cancel_agent', { job_id: holderId });
    });

    test('hub restart: the lead\'s lock survives, the interrupted child\'s lock is gone', async () => {
      const h = await hubWith({
        locker: (ctx) => (ctx.step === 0
          ? { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'child.txt'), content: 'c\n' } }] }
          : { delayMs: 60_000, text: 'never' }),
      });
      const child = (await h.call('spawn_agent', { prompt: '@script:locker' })).job_id;
      const lead = await h.call('lock_files', { files: ['lead.txt'], reason: 'lead keeps this' });
      const root = realpathSync(h.project);
      assert.deepEqual(lead.acquired, [`${root}/lead.txt`]);
      await h.fake.waitForRequest((r) => r.script === 'locker' && r.step === 1, 30_000);
      const before = (await h.call('list_locks', {})).locks.map((l: any) => [l.path, l.holder]);
      assert.deepEqual(before, [[`${root}/child.txt`, child], [`${root}/lead.txt`, 'lead']]);

      await h.hub.stop();
      const h2 = await startTestHub({ dir: h.dir, fake: h.fake, config: { confine } });
      cleanups.push(() => h2.stop({ keep: true }));
      assert.equal((await h2.call('get_agent', { job_id: child })).status, 'interrupted');
      const after = (await h2.call('list_locks', {})).locks;
      assert.deepEqual(after.map((l: any) => [l.path, l.holder, l.reason]), [[`${root}/lead.txt`, 'lead', 'lead keeps this']]);
      assert.deepEqual((await h2.call('release_files', {})).released, [`${root}/lead.txt`], 'the lead still owns it after the restart');
    });
  });
}
