// The start gate wired into the runner (src/launch/startGate.ts, src/services/supervisor.ts) on a
// real hub whose children are scripted in process (test/helpers/fakeLauncher.ts). A child's
// stdout is held back until the test lets it go, so "the first child has not printed its first
// event yet" is a state the test controls: the next start waits for its slot, visibly, can be
// cancelled while it waits, and still counts as a running job for maxAgents.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { eventually, waitForJob } from '../helpers/wait.js';
import { events, job, undeliveredTo } from '../helpers/state.js';
import type { ChildHandle, ProcessLauncher, SpawnCmd } from '../../src/launch/types.js';

const hubs: TestHub[] = [];
after(async () => { for (const h of hubs.reverse()) await h.stop().catch(() => undefined); });

/** Scripted children whose stdout reaches the hub only once `release(i)` was called for the i-th child launched. */
class HeldLauncher implements ProcessLauncher {
  readonly inner = new ScriptedLauncher(() => ({ resultText: 'done' }));
  private readonly opens: (() => void)[] = [];
  private readonly released = new Set<number>();
  /** What was written to each child's stdin, in launch order. */
  readonly stdin: string[][] = [];
  get launchedCount(): number { return this.inner.spawned.length; }
  launch(cmd: SpawnCmd): ChildHandle {
    const child = this.inner.launch(cmd);
    const i = this.opens.length;
    const written: string[] = [];
    this.stdin.push(written);
    let open!: () => void;
    const opened = new Promise<void>((r) => { open = r; });
    this.opens.push(open);
    if (this.released.has(i)) open();
    return {
      get pid() { return child.pid; },
      onStdout: (cb) => child.onStdout((c) => void opened.then(() => cb(c))),
      onStderr: (cb) => child.onStderr(cb),
      write: (d) => { written.push(d); return child.write(d); },
      closeStdin: () => child.closeStdin(),
      stdinOpen: () => child.stdinOpen(),
      signalGroup: (s) => child.signalGroup(s),
      exited: child.exited.then(async (e) => { await opened; return e; }),
    };
  }
  release(i: number): void {
    this.released.add(i);
    this.opens[i]?.();
  }
}

const kinds = async (h: TestHub, id: string): Promise<string[]> => (await events(h.hub, id)).map((e) => e.kind);
const eventData = async (h: TestHub, id: string, kind: string): Promise<any> => JSON.parse((await events(h.hub, id)).find((e) => e.kind === kind)?.data_json ?? 'null');

describe('start gate in the runner', () => {
  test('concurrency 1: the next start waits (status line + event) until the first child prints, in order; cancel while waiting ends it unlaunched', async () => {
    const fake = new HeldLauncher();
    // The slot is held until the child prints, whatever the machine's speed: not for the default 1.5 s.
    const h = await startTestHub({ processes: fake, config: { startConcurrency: 1, maxAgents: 3, startHoldMs: 120_000 } });
    hubs.push(h);
    const ids: string[] = [];
    for (const n of ['a', 'b', 'c']) ids.push((await h.call('spawn_agent', { prompt: `child ${n}` })).job_id);
    const [a, b, c] = ids as [string, string, string];

    // One launched; the two others are running jobs (they hold their maxAgents places) waiting for a slot.
    await eventually('b waits', async () => (await job(h.hub, b)).status_message?.startsWith('waiting for a start slot'));
    assert.equal(fake.launchedCount, 1);
    for (const id of ids) assert.equal((await job(h.hub, id)).status, 'running');
    assert.equal((await job(h.hub, b)).status_message, 'waiting for a start slot (0 starts ahead)');
    assert.equal((await job(h.hub, c)).status_message, 'waiting for a start slot (1 start ahead)');
    const aKinds = await kinds(h, a);
    assert.ok(!aKinds.includes('start_wait'), `a started at once: ${aKinds.join(', ')}`);
    assert.equal((await eventData(h, c, 'start_wait')).ahead, 1);
    const got = await h.call('get_agent', { job_id: b });
    assert.match(JSON.stringify(got), /waiting for a start slot/);
    // maxAgents is unchanged: a fourth spawn queues (three running already), it does not start.
    const d = (await h.call('spawn_agent', { prompt: 'child d' })).job_id as string;
    assert.equal((await job(h.hub, d)).status, 'queued');

    // Cancel c while it waits: it ends cancelled without a process, its status line cleared.
    await h.call('cancel_agent', { job_id: c });
    const cj = await waitForJob(h.hub, c, (j) => j.status === 'cancelled');
    assert.equal(cj.status_message, null);
    assert.equal(cj.pid, null);
    assert.equal(fake.launchedCount, 1);

    // A message to b while it waits is kept, and reaches its conversation once it launches.
    const sent = await h.call('message_agent', { job_id: b, text: 'note while waiting' });
    assert.equal(JSON.stringify(sent).includes('"delivered":true'), false, JSON.stringify(sent));

    // a prints its first event: b gets the slot and launches; then d (dispatched into c's place).
    fake.release(0);
    await eventually('b launched', () => fake.launchedCount === 2);
    await eventually('the message reached b', () => fake.stdin[1]!.some((m) => m.includes('note while waiting')));
    assert.match(fake.stdin[1]![0]!, /child b/, 'the prompt went first');
    assert.equal((await undeliveredTo(h.hub, b)).length, 0);
    assert.equal((await job(h.hub, b)).status_message, null);
    assert.ok((await eventData(h, b, 'start_slot')).waited_ms >= 0);
    assert.equal(fake.inner.children[1]!.prompt?.includes('child b'), true);
    fake.release(1);
    await eventually('d launched', () => fake.launchedCount === 3);
    fake.release(2);
    const w = await h.call('wait_for_agents', { job_ids: [a, d], timeout_s: 30 });
    assert.deepEqual(w.done.map((x: any) => x.status), ['succeeded', 'succeeded']);
    // (b's scripted child answers a second message only after its stdin closes, which the
    // supervisor does only once that message is answered: it would never end by itself.)
    await h.call('cancel_agent', { job_id: b });
    await waitForJob(h.hub, b, (j) => j.status === 'cancelled');
    assert.equal(fake.launchedCount, 3, 'c never launched');
  });

  test('startConcurrency 0: no gate, every child launches at once', async () => {
    const fake = new HeldLauncher();
    const h = await startTestHub({ processes: fake, config: { startConcurrency: 0 } });
    hubs.push(h);
    const ids: string[] = [];
    for (const n of ['a', 'b', 'c']) ids.push((await h.call('spawn_agent', { prompt: `child ${n}` })).job_id);
    await eventually('all launched', () => fake.launchedCount === 3);
    for (const id of ids) assert.ok(!(await kinds(h, id)).includes('start_wait'));
    for (let i = 0; i < 3; i++) fake.release(i);
    const w = await h.call('wait_for_agents', { job_ids: ids, timeout_s: 30 });
    assert.equal(w.done.filter((x: any) => x.status === 'succeeded').length, 3);
  });
});
