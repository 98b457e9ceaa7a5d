// End-to-end: notes, messages, approvals and permission prompts between real claude children
// and the lead (real HTTP MCP, real --permission-prompt-tool, real SQLite) driven by the
// scripted fake model. Ordering between children is made explicit: a step awaits another
// child's request (fake.waitForRequest) or the moment a blocking tool subscribes to the hub's
// bus — never a sleep.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestHub } from '../helpers/hub.js';
import { makeTempDir } from '../helpers/claude.js';
import { initRepo } from '../helpers/git.js';
import type { Script, ToolResultInfo } from '../../src/fakemodel/fakeAnthropic.js';
import { subscribed } from '../helpers/bus.js';
import { scriptedHubs } from '../helpers/scripted.js';
import { cwdOf, lastResult } from '../helpers/steps.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { job, row, rows } from '../helpers/state.js';
import { sql } from 'kysely';

const { cleanups, hubWith } = scriptedHubs();

const finish = (result: string, outcome: 'success' | 'failure' = 'success') => ({ tools: [{ name: 'mcp__overseer__finish', input: { result, outcome } }] });

describe('notes', () => {
  test('watch_notes is woken by another child\'s write and returns the value', async () => {
    let h!: TestHub;
    let watchResult: ToolResultInfo | undefined;
    let watching!: Promise<void>;
    h = await hubWith({
      watcher: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__watch_notes', input: { keys: ['handoff'], timeout_s: 60 } }] };
        if (ctx.step === 1) {
          watchResult = lastResult(ctx);
          const notes = watchResult.is_error ? [] : (JSON.parse(watchResult.text).notes as { value: string }[]);
          return finish(notes[0]?.value ?? `no note: ${watchResult.text.slice(0, 200)}`);
        }
        return { text: 'done' };
      },
      writer: async (ctx) => {
        if (ctx.step === 0) {
          await watching; // the watch is in place before the write
          return { tools: [{ name: 'mcp__overseer__write_note', input: { key: 'handoff', value: 'READY-42' } }] };
        }
        if (ctx.step === 1) return finish(lastResult(ctx).text);
        return { text: 'done' };
      },
    });
    watching = subscribed(h.hub.ctx.bus, 'note');
    const a = (await h.call('spawn_agent', { prompt: '@script:watcher' })).job_id;
    const b = (await h.call('spawn_agent', { prompt: '@script:writer' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [a, b], timeout_s: 60 });
    assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded']);
    assert.equal(w.done[0].result, 'READY-42');
    assert.ok(watchResult && !watchResult.is_error);
    const got = JSON.parse(watchResult.text);
    assert.equal(got.timed_out, false);
    assert.deepEqual(got.notes.map((n: any) => [n.key, n.value, n.version, n.author]), [['handoff', 'READY-42', 1, b]]);
    assert.deepEqual(await h.call('read_note', { key: 'handoff' }), { ...got.notes[0] });
  });

  test('compare-and-set: two children create one key with expected_version 0 — exactly one wins', async () => {
    let h!: TestHub;
    const got: Record<string, ToolResultInfo> = {};
    const creator = (me: string, other: string): Script => async (ctx) => {
      if (ctx.step === 0) {
        await h.fake.waitForRequest((r) => r.script === other, 30_000); // both are up: the writes race
        return { tools: [{ name: 'mcp__overseer__write_note', input: { key: 'owner', value: `claimed by ${me}`, expected_version: 0 } }] };
      }
      if (ctx.step === 1) {
        got[me] = lastResult(ctx);
        return finish(got[me]!.is_error ? 'lost' : 'won');
      }
      return { text: 'done' };
    };
    h = await hubWith({ casa: creator('casa', 'casb'), casb: creator('casb', 'casa') });
    const ids: Record<string, string> = {};
    for (const s of ['casa', 'casb']) ids[s] = (await h.call('spawn_agent', { prompt: `@script:${s}` })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: Object.values(ids), timeout_s: 60 });
    assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded']);
    const winners = Object.keys(got).filter((k) => !got[k]!.is_error);
    const losers = Object.keys(got).filter((k) => got[k]!.is_error);
    assert.equal(winners.length, 1, JSON.stringify(got));
    assert.equal(losers.length, 1, JSON.stringify(got));
    assert.deepEqual(JSON.parse(got[winners[0]!]!.text), { key: 'owner', version: 1 });
    assert.match(got[losers[0]!]!.text, /conflict/i);
    assert.match(got[losers[0]!]!.text, /version 1\b/, 'the error names the current version');
    const note = await h.call('read_note', { key: 'owner' });
    assert.equal(note.version, 1);
    assert.equal(note.value, `claimed by ${winners[0]}`);
    assert.equal(note.author, ids[winners[0]!]);
  });
});

describe('requests and permissions', () => {
  test('approval round trip: wait_for_agents returns early with it; respond approved reaches the child', async () => {
    const plan = { rationale: 'schema change needed', resources: ['db/schema.sql'], risks: 'data loss on rollback', rollback: 'restore the dump' };
    let seen: ToolResultInfo | undefined;
    const h = await hubWith({
      asker: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'migrate the users table', plan, timeout_s: 120 } }] };
        if (ctx.step === 1) {
          seen = lastResult(ctx);
          const approved = !seen.is_error && JSON.parse(seen.text).decision === 'approved';
          return finish(`decision: ${seen.text.slice(0, 300)}`, approved ? 'success' : 'failure');
        }
        return { text: 'done' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:asker' })).job_id;
    const t0 = Date.now();
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(w.timed_out, false);
    assert.deepEqual(w.pending, [id]);
    assert.ok(Date.now() - t0 < 30_000);
    assert.equal(w.attention.length, 1);
    assert.equal(w.attention[0].kind, 'approval');
    assert.equal(w.attention[0].job_id, id);
    assert.match(w.attention[0].summary, /migrate the users table/);
    assert.equal((await job(h.hub, id)).status, 'needs_input');

    const listed = (await h.call('list_requests', {})).requests;
    assert.equal(listed.length, 1);
    assert.equal(listed[0].request_id, w.attention[0].request_id);
    assert.deepEqual(listed[0].plan, plan);
    const closed = await h.call('respond', { request_id: listed[0].request_id, decision: 'approved', comment: 'go ahead, ZEBRA-7' });
    assert.equal(closed.status, 'answered');
    assert.equal(closed.decision, 'approved');

    const done = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(done.done[0].status, 'succeeded');
    assert.ok(seen && !seen.is_error, seen?.text);
    assert.match(seen.text, /approved/);
    assert.match(seen.text, /ZEBRA-7/);
    assert.match(done.done[0].result, /ZEBRA-7/);
    assert.deepEqual((await h.call('list_requests', {})).requests, [], 'nothing pending any more');
  });

  test('who: "person": the lead is told to ask the person and may not answer; the person answers with the built CLI and the child gets it', async () => {
    let seen: ToolResultInfo | undefined;
    const h = await hubWith({
      spender: (ctx) => {
        if (ctx.step === 0) {
          return { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'buy 3 GPU hours for the benchmark', who: 'person', plan: { rationale: 'the CPU run takes a day', risks: 'costs $12' }, timeout_s: 120 } }] };
        }
        if (ctx.step === 1) {
          seen = lastResult(ctx);
          return finish(`decision: ${seen.text.slice(0, 400)}`, !seen.is_error && JSON.parse(seen.text).decision === 'approved' ? 'success' : 'failure');
        }
        return { text: 'done' };
      },
    });
    const id = (await h.call('spawn_agent', { prompt: '@script:spender', title: 'GPU buyer' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(w.timed_out, false);
    assert.equal(w.attention.length, 1, JSON.stringify(w.attention));
    const item = w.attention[0];
    assert.deepEqual([item.kind, item.job_id, item.who, item.awaiting, item.agent_title], ['approval', id, 'person', 'person', 'GPU buyer']);
    assert.match(item.how_to_answer, new RegExp(`Only the person can answer .*overseer respond ${item.request_id} --approve\\|--reject`));

    const refused = await h.callRaw('respond', { request_id: item.request_id, decision: 'approved' });
    assert.equal(refused.isError, true);
    assert.match(refused.text, new RegExp(`^forbidden: Request ${item.request_id} is for the person .*nothing was changed\\..*overseer respond ${item.request_id}`));
    assert.equal((await row(h.hub, sql<{ status: string }>`SELECT status FROM requests WHERE id = ${item.request_id}`))!.status, 'pending', 'the refused respond changed nothing');
    assert.equal((await job(h.hub, id)).status, 'needs_input');
    assert.equal(seen as ToolResultInfo | undefined, undefined, 'the child is still waiting');

    const cli = await runOverseer(h.home, ['respond', item.request_id, '--approve', '--comment', 'approved by me, MANGO-3', '--as-person']);
    assert.equal(cli.code, 0, cli.stderr);
    const done = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(done.done[0].status, 'succeeded', JSON.stringify(done.done[0]));
    const answer = seen as ToolResultInfo | undefined;
    assert.ok(answer && !answer.is_error, answer?.text);
    const got = JSON.parse(answer.text);
    assert.deepEqual([got.decision, got.comment, got.answered_by], ['approved', 'approved by me, MANGO-3', 'person (cli, --as-person)']);
    const all = (await h.call('list_requests', { status: 'all' })).requests;
    assert.deepEqual(all.map((r: any) => [r.request_id, r.who, r.status, r.answered_by]), [[item.request_id, 'person', 'answered', 'person (cli, --as-person)']]);
    const agent = await h.call('get_agent', { job_id: id });
    assert.deepEqual(agent.requests.map((r: any) => [r.request_id, r.answered_by]), [[item.request_id, 'person (cli, --as-person)']]);
  });

  test('permission prompts: git push is asked of the lead and rejected; a write outside the work tree is denied', async () => {
    const outside = await makeTempDir('ovs-outside');
    cleanups.push(() => rm(outside, { recursive: true, force: true }));
    const outsideFile = join(outside, 'x.txt');
    const got: Record<string, ToolResultInfo> = {};
    const h = await hubWith({
      pusher: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'Bash', input: { command: 'git push origin main; touch pushed.marker', description: 'push' } }] };
        if (ctx.step === 1) { got.push = lastResult(ctx); return finish(got.push.text.slice(0, 300)); }
        return { text: 'done' };
      },
      escaper: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'Write', input: { file_path: outsideFile, content: 'escaped\n' } }] };
        if (ctx.step === 1) { got.write = lastResult(ctx); return finish(got.write.text.slice(0, 300)); }
        return { text: 'done' };
      },
    });
    const repo = await initRepo(join(h.dir, 'repo'));
    const pusher = (await h.call('spawn_agent', { prompt: '@script:pusher', cwd: repo })).job_id;
    const escaper = (await h.call('spawn_agent', { prompt: '@script:escaper' })).job_id;

    const w = await h.call('wait_for_agents', { job_ids: [pusher], timeout_s: 60 });
    assert.equal(w.attention.length, 1, JSON.stringify(w));
    const listed = (await h.call('list_requests', {})).requests;
    assert.equal(listed.length, 1, 'only the push is asked; the outside write is decided by the policy');
    const req = listed[0];
    assert.equal(req.kind, 'permission');
    assert.equal(req.job_id, pusher);
    assert.equal(req.tool_name, 'Bash');
    assert.match(req.tool_input.command, /^git push origin main/);
    await h.call('respond', { request_id: req.request_id, decision: 'rejected', comment: 'no pushing today KIWI' });

    const done = await h.call('wait_for_agents', { job_ids: [pusher, escaper], timeout_s: 60 });
    assert.deepEqual(done.done.map((d: any) => d.status), ['succeeded', 'succeeded']);
    assert.equal(got.push?.is_error, true);
    assert.match(got.push!.text, /no pushing today KIWI/);
    assert.equal(existsSync(join(repo, 'pushed.marker')), false, 'the command did not run');
    assert.equal(got.write?.is_error, true);
    assert.match(got.write!.text, /Denied by Overseer policy/);
    assert.equal(existsSync(outsideFile), false, 'nothing written outside the work tree');
    const answered = (await h.call('list_requests', { status: 'all' })).requests;
    assert.deepEqual(answered.map((r: any) => [r.kind, r.status, r.decision, r.comment]), [['permission', 'answered', 'rejected', 'no pushing today KIWI']]);
  });
});

describe('messages', () => {
  test('send_message from the lead and from a sibling is pushed into a running child\'s conversation', async () => {
    let targetId = '';
    const h = await hubWith({
      target: (ctx) => {
        const finished = JSON.stringify(ctx.body.messages).includes('"name":"mcp__overseer__finish"');
        if (finished || ctx.step > 40) return { text: 'done' };
        const heard = ['PAPAYA', 'GUAVA'].map((w) => ctx.userTexts.find((t) => t.includes(w)));
        if (heard.every(Boolean)) return finish(heard.join(' | '));
        return { delayMs: 500, tools: [{ name: 'mcp__overseer__report_status', input: { message: `listening ${ctx.step}` } }] };
      },
      sibling: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__send_message', input: { to: targetId, text: 'from your sibling: GUAVA' } }] };
        if (ctx.step === 1) return finish(lastResult(ctx).text);
        return { text: 'done' };
      },
    });
    targetId = (await h.call('spawn_agent', { prompt: '@script:target' })).job_id;
    await h.fake.waitForRequest((r) => r.script === 'target', 30_000);
    const sent = await h.call('send_message', { to: targetId, text: 'from the lead: PAPAYA' });
    assert.deepEqual(sent.delivered, [targetId], 'pushed at once into the running child');
    const sib = (await h.call('spawn_agent', { prompt: '@script:sibling' })).job_id;

    const req = await h.fake.waitForRequest((r) => r.script === 'target' && ['PAPAYA', 'GUAVA'].every((w) => JSON.stringify(r.body.messages).includes(w)), 30_000);
    assert.ok(req.step > 0);
    const w = await h.call('wait_for_agents', { job_ids: [targetId, sib], timeout_s: 60 });
    assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded']);
    assert.match(w.done[0].result, /Message from the lead: from the lead: PAPAYA/);
    assert.match(w.done[0].result, new RegExp(`Message from agent ${sib}: from your sibling: GUAVA`));
    assert.deepEqual(JSON.parse(w.done[1].result).delivered, [targetId]);
    const stored = await rows(h.hub, sql`SELECT from_id, to_id, text FROM messages WHERE to_id = ${targetId} ORDER BY id`);
    assert.deepEqual(stored, [
      { from_id: 'lead', to_id: targetId, text: 'from the lead: PAPAYA' },
      { from_id: sib, to_id: targetId, text: 'from your sibling: GUAVA' },
    ]);
  });
});
