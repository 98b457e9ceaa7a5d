// End-to-end: real claude children spawned by an in-process hub (real SQLite, real HTTP MCP
// with per-agent tokens) against the scripted fake model. Each test names the tool calls the
// fake model makes and asserts on what really happened: files, rows, statuses, processes.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { waitForJob, eventually, alive, procStopped, agentProcess, waitEnded } from '../helpers/wait.js';
import type { Script } from '../../src/fakemodel/fakeAnthropic.js';
import { attempts, job, jobs } from '../helpers/state.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs) await h.stop(); });

async function hubWith(scripts: Record<string, Script>, config = {}): Promise<TestHub> {
  const h = await startTestHub({ scripts, config });
  hubs.push(h);
  return h;
}

/** A child that writes `file` (relative to its work dir, taken from the preamble) then finishes. */
function writer(file: string, content: string, delayMs = 0): Script {
  return (ctx) => {
    const cwd = /working directory is `([^`]+)`/.exec(ctx.system)?.[1] ?? '.';
    if (ctx.step === 0) return { delayMs, tools: [{ name: 'Write', input: { file_path: join(cwd, file), content } }] };
    if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__finish', input: { result: `wrote ${file}` } }] };
    return { text: 'done' };
  };
}

describe('spawn and wait', () => {
  test('three children edit files; wait all returns them all succeeded', async () => {
    const h = await hubWith({ a: writer('a.txt', 'A\n'), b: writer('b.txt', 'B\n'), c: writer('c.txt', 'C\n') });
    const ids = [];
    for (const s of ['a', 'b', 'c']) ids.push((await h.call('spawn_agent', { prompt: `@script:${s} write ${s}.txt` })).job_id);
    const w = await h.call('wait_for_agents', { job_ids: ids, mode: 'all', timeout_s: 60 });
    assert.equal(w.timed_out, false);
    assert.deepEqual(w.pending, []);
    assert.deepEqual(w.done.map((d: any) => d.status), ['succeeded', 'succeeded', 'succeeded']);
    for (const s of ['a', 'b', 'c']) assert.equal(readFileSync(join(h.project, `${s}.txt`), 'utf8'), `${s.toUpperCase()}\n`);
    const j = await job(h.hub, ids[0]);
    assert.equal(j.result, 'wrote a.txt');
    assert.ok(j.cost_usd > 0 && j.turns >= 2, 'cost and turns tracked');
    assert.ok(existsSync(join(h.home, 'agents', ids[0], 'attempt-1.jsonl')), 'raw transcript kept');
  });

  test('wait any returns as soon as one ends, with the other pending', async () => {
    const h = await hubWith({ fast: writer('f.txt', 'f'), slow: writer('s.txt', 's', 60_000) });
    const slow = (await h.call('spawn_agent', { prompt: '@script:slow' })).job_id;
    const fast = (await h.call('spawn_agent', { prompt: '@script:fast' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [slow, fast], mode: 'any', timeout_s: 60 });
    assert.deepEqual(w.done.map((d: any) => d.job_id), [fast]);
    assert.deepEqual(w.pending, [slow]);
    const t = await h.call('wait_for_agents', { job_ids: [slow], timeout_s: 0.5 });
    assert.equal(t.timed_out, true);
    await h.call('cancel_agent', { job_id: slow });
  });

  test('depends_on: the dependent starts only after its dependency succeeded; a failed dependency fails it', async () => {
    const h = await hubWith({ first: writer('1.txt', '1', 300), second: writer('2.txt', '2'), bad: [{ error: { status: 400, message: 'scripted bad request' } }] });
    const a = (await h.call('spawn_agent', { prompt: '@script:first' })).job_id;
    const b = await h.call('spawn_agent', { prompt: '@script:second', depends_on: [a] });
    assert.equal(b.status, 'waiting');
    await h.call('wait_for_agents', { job_ids: [b.job_id], timeout_s: 60 });
    const ja = await job(h.hub, a);
    const jb = await job(h.hub, b.job_id);
    assert.equal(jb.status, 'succeeded');
    assert.ok(jb.started_at! >= ja.ended_at!, 'dependent started after its dependency ended');

    const bad = (await h.call('spawn_agent', { prompt: '@script:bad' })).job_id;
    const dep = (await h.call('spawn_agent', { prompt: '@script:second', depends_on: [bad] })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [bad, dep], timeout_s: 60 });
    const [wb, wd] = w.done;
    assert.equal(wb.status, 'failed');
    assert.equal(wb.failure_class, 'api_error');
    assert.equal(wd.status, 'failed');
    assert.equal(wd.failure_class, 'dependency_failed');
    assert.match(wd.error, new RegExp(bad));
    assert.equal((await attempts(h.hub, dep)).length, 0, 'the dependent never ran');
  });

  test('concurrency cap and priority: with a cap of 1, higher priority runs first', async () => {
    const h = await hubWith({ hold: writer('h.txt', 'h', 400), lo: writer('lo.txt', 'lo'), hi: writer('hi.txt', 'hi') }, { maxAgents: 1 });
    const hold = (await h.call('spawn_agent', { prompt: '@script:hold' })).job_id;
    const lo = await h.call('spawn_agent', { prompt: '@script:lo', priority: -5 });
    const hi = await h.call('spawn_agent', { prompt: '@script:hi', priority: 5 });
    assert.equal(lo.status, 'queued');
    assert.equal(hi.status, 'queued');
    await h.call('wait_for_agents', { job_ids: [hold, lo.job_id, hi.job_id], timeout_s: 60 });
    const [sHold, sLo, sHi] = await Promise.all([hold, lo.job_id, hi.job_id].map((id: string) => job(h.hub, id)));
    assert.ok(sHi!.started_at! >= sHold!.ended_at!, 'cap respected');
    assert.ok(sLo!.started_at! >= sHi!.ended_at!, 'higher priority first');
  });
});

describe('control', () => {
  test('cancel cascades to the sub-agent a child spawned, and no process is left', async () => {
    const h = await hubWith({
      parent: (ctx) => {
        if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__spawn_agent', input: { prompt: '@script:grandchild', title: 'grandchild' } }] };
        const id = JSON.parse(ctx.lastToolResults[0]!.text).job_id;
        if (ctx.step === 1) return { tools: [{ name: 'mcp__overseer__wait_for_agents', input: { job_ids: [id], timeout_s: 600 } }] };
        return { text: 'done' };
      },
      grandchild: [{ delayMs: 120_000, text: 'never' }],
    });
    const parent = (await h.call('spawn_agent', { prompt: '@script:parent' })).job_id;
    const child = await eventually('grandchild spawned', async () => (await jobs(h.hub, { parentId: parent, limit: 100 }))[0]);
    await waitForJob(h.hub, child.id, (j) => j.pid !== null && j.status === 'running');
    await h.fake.waitForRequest((r) => r.script === 'grandchild', 30_000);
    const pids = [(await job(h.hub, parent)).pid!, (await job(h.hub, child.id)).pid!];
    const res = await h.call('cancel_agent', { job_id: parent, reason: 'test' });
    assert.equal(res.status, 'cancelled');
    assert.equal((await job(h.hub, child.id)).status, 'cancelled');
    assert.equal((await job(h.hub, child.id)).parent_id, parent);
    for (const pid of pids) await eventually(`pid ${pid} gone`, () => !alive(pid), 5000);
  });

  test('freeze stops the process in place; resume continues it to success', async () => {
    const h = await hubWith({ slow: writer('frz.txt', 'x', 1500) });
    const id = (await h.call('spawn_agent', { prompt: '@script:slow' })).job_id;
    const running = await waitForJob(h.hub, id, (j) => j.pid !== null);
    await h.fake.waitForRequest((r) => r.script === 'slow', 30_000);
    const frozen = await h.call('pause_agent', { job_id: id, mode: 'freeze' });
    assert.equal(frozen.status, 'frozen');
    // Every thread stopped (a multi-threaded process may show its main thread in D behind a
    // stopped thread, so /proc/<pid>/stat alone is not enough).
    await eventually('every thread of the process stopped', () => procStopped(agentProcess(running.pid!)), 10_000);
    const resumed = await h.call('resume_agent', { job_id: id });
    assert.equal(resumed.status, 'running');
    await eventually('process running again', () => !procStopped(agentProcess(running.pid!)), 10_000);
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 60 });
    assert.equal(w.done[0].status, 'succeeded');
  });

  test('timeout_s ends the process group and classifies the failure', async () => {
    const h = await hubWith({ hang: [{ delayMs: 120_000, text: 'never' }] });
    const t0 = Date.now();
    const id = (await h.call('spawn_agent', { prompt: '@script:hang', timeout_s: 2 })).job_id;
    const w = await waitEnded(h, [id]);
    assert.equal(w.done[0].status, 'failed');
    assert.equal(w.done[0].failure_class, 'timeout');
    assert.ok(w.attention.some((a: any) => a.kind === 'warning' && a.warning === 'time_high'), 'the lead heard time_high first');
    assert.ok(Date.now() - t0 < 10_000, 'ended promptly after the timeout');
  });

  test('kill -9 of a child: failed and classified as crashed within a second', async () => {
    const h = await hubWith({ hang: [{ delayMs: 120_000, text: 'never' }] });
    const id = (await h.call('spawn_agent', { prompt: '@script:hang' })).job_id;
    const j = await waitForJob(h.hub, id, (r) => r.pid !== null);
    await h.fake.waitForRequest((r) => r.script === 'hang', 30_000);
    const t0 = Date.now();
    process.kill(agentProcess(j.pid!), 'SIGKILL');
    const ended = await waitForJob(h.hub, id, (r) => r.status === 'failed', 5000);
    const ms = Date.now() - t0;
    assert.equal(ended.failure_class, 'crashed');
    assert.match(ended.error!, /SIGKILL/);
    assert.ok(ms < 1000, `classified in ${ms} ms`);
  });

  test('claude missing → binary_not_found saying how to set CLAUDE_BIN', async () => {
    const h = await hubWith({}, { claudeBin: '/nonexistent/claude' });
    const id = (await h.call('spawn_agent', { prompt: 'anything' })).job_id;
    const w = await h.call('wait_for_agents', { job_ids: [id], timeout_s: 30 });
    assert.equal(w.done[0].failure_class, 'binary_not_found');
    assert.match(w.done[0].error, /CLAUDE_BIN/);
  });
});
