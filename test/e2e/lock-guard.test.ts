// End-to-end (real claude children, fake model): a write that gets past a lock is caught and
// undone. Confinement is off here, so nothing below the hook stops B's script from writing the
// file A holds — exactly the case the guard is the net for (issue 18 point 3). After B's tool call
// the hub puts A's content back, keeps what B wrote beside B's transcript, records
// `lock_violation`, tells B in its conversation and the lead in wait_for_agents.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scriptedHubs } from '../helpers/scripted.js';
import { gate } from '../helpers/gate.js';
import { finishStep, holderScript } from '../helpers/holder.js';
import { eventually } from '../helpers/wait.js';
import { codexHubs } from '../helpers/codexHub.js';

const { hubWith } = scriptedHubs();
const finish = finishStep;
const bash = (command: string) => ({ tools: [{ name: 'Bash', input: { command } }] });

describe('the lock guard', () => {
  test('a script writing a held file: A\'s content is put back, B is told, the write is kept', { timeout: 240_000 }, async () => {
    const releaseA = gate();
    const bGo = gate();
    const h = await hubWith({
      holder: holderScript(releaseA),
      writer: async (ctx) => {
        if (ctx.step === 0) { await bGo.wait; return bash(`printf '%s' "require('fs').writeFileSync('shared.txt', 'B was here\\\\n')" > w.js && node w.js`); }
        if (ctx.step === 1) return finish('tried');
        return { text: 'done' };
      },
    }, { confine: 'off' });
    const root = realpathSync(h.project);
    const shared = join(root, 'shared.txt');
    writeFileSync(shared, 'original\n');
    const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
    await eventually('A holds shared.txt', async () => ((await h.hub.locks.list({})).locks.some((l) => l.path === shared && l.holder === a) ? true : undefined), 60_000);
    const b = (await h.call('spawn_agent', { prompt: '@script:writer', title: 'Writer B' })).job_id;
    bGo.open();
    await h.fake.waitForRequest((r) => r.script === 'writer' && r.step === 1, 60_000);
    assert.equal(readFileSync(shared, 'utf8'), 'original\n', 'A\'s content was put back');
    // The message goes into B's conversation: the next request B makes carries it.
    await h.fake.waitForRequest((r) => r.script === 'writer' && /Overseer undid a write to [^"]*shared\.txt/.test(JSON.stringify(r.body)), 60_000);

    const got = await h.call('get_agent', { job_id: b, events: true });
    const ev = got.events.find((e: any) => e.kind === 'lock_violation');
    assert.ok(ev, JSON.stringify(got.events.map((e: any) => e.kind)));
    assert.deepEqual([ev.data.files, ev.data.holder, ev.data.tool, ev.data.action], [[shared], a, 'Bash', 'restored']);
    assert.equal(readFileSync(ev.data.kept_at, 'utf8'), 'B was here\n', 'what B wrote is kept');
    assert.ok(ev.data.kept_at.startsWith(join(h.home, 'agents', b, 'undone')));
    assert.deepEqual(got.lock_violations, [shared]);

    const w = await h.call('wait_for_agents', { job_ids: [b], timeout_s: 60 });
    assert.ok(w.attention.some((m: any) => m.kind === 'message' && /undid a write by/.test(m.text)), `the lead is told: ${JSON.stringify(w.attention)}`);
    releaseA.open();
    await h.call('wait_for_agents', { job_ids: [a], timeout_s: 60 });
  });
});

describe('the lock guard with a codex writer', () => {
  const { codexHub } = codexHubs();
  test('a codex child\'s script writing a file a claude child holds is undone after the command', { timeout: 240_000 }, async () => {
    const releaseA = gate();
    const { h } = await codexHub({
      writer: [{ calls: [{ shell: `printf 'open("shared.txt","w").write("codex was here\\\\n")' > w.py && python3 w.py` }] }, { text: 'tried' }],
    }, {
      config: { confine: 'off' },
      scripts: {
        holder: holderScript(releaseA),
      },
    });
    const shared = join(realpathSync(h.project), 'shared.txt');
    writeFileSync(shared, 'original\n');
    const a = (await h.call('spawn_agent', { prompt: '@script:holder', title: 'Holder A' })).job_id;
    await eventually('A holds shared.txt', async () => ((await h.hub.locks.list({})).locks.some((l) => l.path === shared && l.holder === a) ? true : undefined), 60_000);
    const c = (await h.call('spawn_agent', { prompt: '@script:writer', provider: 'codex' })).job_id;
    await h.call('wait_for_agents', { job_ids: [c], timeout_s: 120 });
    assert.equal(readFileSync(shared, 'utf8'), 'original\n', 'A\'s content was put back');
    const got = await h.call('get_agent', { job_id: c, events: true });
    const ev = got.events.find((e: any) => e.kind === 'lock_violation' && e.data.holder === a);
    assert.ok(ev, JSON.stringify(got.events.map((e: any) => e.kind)));
    assert.equal(readFileSync(ev.data.kept_at, 'utf8'), 'codex was here\n');
    releaseA.open();
    await h.call('wait_for_agents', { job_ids: [a], timeout_s: 60 });
  });
});
