// The crew brief (issue 31 point 6) through a real hub whose children start no process
// (ScriptedLauncher, hanging): set, shown and cleared by the person (`overseer brief`, the floor's
// API) and the lead (set_brief); refused to an agent and on bad input, with nothing changed; a new
// job's first prompt carries it; a running child gets it pushed once per change.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher, type FakeChild } from '../helpers/fakeLauncher.js';
import { eventually } from '../helpers/wait.js';
import { job, rows } from '../helpers/state.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { sql } from 'kysely';
import type { ChildHandle, SpawnCmd } from '../../src/launch/types.js';
import { BRIEF_MAX_CHARS } from '../../src/contract/brief.js';
import { freshDatabase } from '../helpers/postgres.js';
import { makeTempDir } from '../helpers/claude.js';
import { rmSync } from 'node:fs';

/** A hanging scripted launcher that records every line the hub writes to each child's stdin. */
class RecordingLauncher extends ScriptedLauncher {
  readonly written = new Map<FakeChild, string[]>();
  constructor() { super(() => ({ hang: true })); }
  override launch(cmd: SpawnCmd): ChildHandle {
    const c = super.launch(cmd) as FakeChild;
    const lines: string[] = [];
    this.written.set(c, lines);
    const write = c.write.bind(c);
    c.write = (d: string) => { lines.push(d); return write(d); };
    return c;
  }
  /** How many lines written to `c` after its prompt contain `s`. */
  pushes(c: FakeChild, s: string): number {
    return (this.written.get(c) ?? []).slice(1).filter((l) => l.includes(s)).length;
  }
}

async function call(c: Client, tool: string, args: Record<string, unknown>): Promise<{ isError: boolean; text: string }> {
  const r = await c.callTool({ name: tool, arguments: args });
  return { isError: !!r.isError, text: (r.content as { text: string }[]).map((x) => x.text).join('\n') };
}

describe('the crew brief', () => {
  let h: TestHub | undefined;
  after(async () => { await h?.stop(); });

  test('set by the person and the lead, refused to agents and on bad input, in new prompts, pushed once to running children', { timeout: 120_000 }, async () => {
    const launcher = new RecordingLauncher();
    h = await startTestHub({ processes: launcher });
    const cli = (...args: string[]) => runOverseer(h!.home, ['brief', ...args]);

    // No brief yet: shown as none; a job spawned now gets no brief section.
    assert.match((await cli()).stdout, /^No crew brief\./);
    const A = (await h.call('spawn_agent', { prompt: 'task A', title: 'A' })).job_id as string;
    const childA = await launcher.launched((c) => c.prompt?.startsWith('task A') === true);
    assert.doesNotMatch(childA.prompt!, /crew brief/i);
    await eventually('A runs', async () => (await job(h!.hub, A)).status === 'running', 30_000);

    // Bad input: a clear error, nothing changes.
    const empty = await cli('set', '   ');
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /the brief is empty/);
    const missing = await cli('set', `@${join(h.dir, 'no-such-brief.md')}`);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read the brief from .*no-such-brief\.md: no such file\. Nothing changed\./);
    const long = await h.callRaw('set_brief', { text: 'x'.repeat(BRIEF_MAX_CHARS + 1) });
    assert.equal(long.isError, true);
    assert.match(long.text, new RegExp(`longer than ${BRIEF_MAX_CHARS} characters`));
    assert.equal((await h.call('get_brief', {})).version, 0, 'no bad input changed the brief');

    // The person sets it from a file: A (running) gets it pushed once, from the lead.
    const file = join(h.dir, 'brief.md');
    writeFileSync(file, 'BRIEF-ONE: use pnpm, never touch vendor/.');
    const set = await cli('set', `@${file}`, '--json');
    assert.equal(set.code, 0, set.stderr);
    const v1 = JSON.parse(set.stdout);
    assert.equal(v1.text, 'BRIEF-ONE: use pnpm, never touch vendor/.');
    assert.equal(v1.set_by, 'person');
    assert.equal(v1.version, 1);
    assert.deepEqual(v1.sent_to, [A]);
    await eventually('A got the brief', () => launcher.pushes(childA, 'BRIEF-ONE') === 1, 10_000);
    const stored = await rows(h.hub, sql<{ from_id: string; text: string }>`SELECT from_id, text FROM messages WHERE to_id = ${A}`);
    assert.deepEqual(stored.map((m) => m.from_id), ['lead']);
    assert.match(stored[0]!.text, /^The crew brief changed \(set by the person running the crew\)/);
    assert.match((await cli('show')).stdout, /Crew brief \(v1, set by person at .*\):\nBRIEF-ONE/);

    // A job spawned afterwards has it in its first prompt, and no message of it.
    const B = (await h.call('spawn_agent', { prompt: 'task B', title: 'B' })).job_id as string;
    const childB = await launcher.launched((c) => c.prompt?.startsWith('task B') === true);
    assert.match(childB.prompt!, /## The crew brief\n\nStanding instructions for everyone in this crew, set by the person running the crew\.[^]*BRIEF-ONE: use pnpm, never touch vendor\//);
    await eventually('B runs', async () => (await job(h!.hub, B)).status === 'running', 30_000);

    // An agent cannot set or clear it: not offered, and refused; nothing changes.
    const agent = await h.connect({ role: 'agent', jobId: A });
    const listed = (await agent.listTools()).tools.map((t) => t.name);
    assert.ok(!listed.includes('set_brief') && !listed.includes('clear_brief'));
    const refused = await call(agent, 'set_brief', { text: 'AGENT-BRIEF' });
    assert.equal(refused.isError, true);
    assert.equal((await call(agent, 'clear_brief', {})).isError, true);
    const agentHttp = await h.hub.brief.set({ text: 'AGENT-BRIEF' }, 'lead', { role: 'agent', jobId: A }).then(() => 'set', (e: Error) => e.message);
    assert.match(agentHttp, /only the lead or the person sets the crew brief/);
    assert.equal((await h.call('get_brief', {})).text, 'BRIEF-ONE: use pnpm, never touch vendor/.');

    // The lead replaces it: both running children get the new one once, the old one still once.
    const v2 = await h.call('set_brief', { text: 'BRIEF-TWO: tests before commits.' });
    assert.equal(v2.set_by, 'lead');
    assert.equal(v2.version, 2);
    assert.deepEqual([...v2.sent_to].sort(), [A, B].sort());
    await eventually('both got BRIEF-TWO', () => launcher.pushes(childA, 'BRIEF-TWO') === 1 && launcher.pushes(childB, 'BRIEF-TWO') === 1, 10_000);
    assert.equal(launcher.pushes(childA, 'BRIEF-ONE'), 1);
    assert.equal(launcher.pushes(childB, 'BRIEF-ONE'), 0, 'B read BRIEF-ONE in its prompt, not as a message');

    // Cleared by the person: running children told once; a new job gets no brief.
    const cleared = await cli('clear', '--json');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(JSON.parse(cleared.stdout).text, null);
    await eventually('both told of the clear', () => launcher.pushes(childA, 'was cleared') === 1 && launcher.pushes(childB, 'was cleared') === 1, 10_000);
    assert.equal((await cli('clear', '--json')).code, 0, 'clearing no brief is no error');
    await h.call('spawn_agent', { prompt: 'task C', title: 'C' });
    const childC = await launcher.launched((c) => c.prompt?.startsWith('task C') === true);
    assert.doesNotMatch(childC.prompt!, /crew brief|BRIEF-/);
    assert.equal(launcher.pushes(childA, 'was cleared'), 1, 'a second clear told nobody');
  });

  test('on two hubs (PostgreSQL): a brief set on hub two reaches hub one\'s running child once, pushed by its owner', { timeout: 120_000 }, async (t) => {
    const pg = await freshDatabase();
    t.after(() => pg.drop());
    const dir = await makeTempDir('ovs-brief-hubs');
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const launchers = [new RecordingLauncher(), new RecordingLauncher()];
    const hubs: TestHub[] = [];
    t.after(async () => { for (const x of hubs.reverse()) await x.stop({ keep: true }).catch(() => undefined); });
    for (const [i, name] of ['one', 'two'].entries()) {
      hubs.push(await startTestHub({ dir: join(dir, name), project: dir, processes: launchers[i], config: { databaseUrl: pg.url } }));
    }
    const [one, two] = hubs as [TestHub, TestHub];
    const A = (await one.call('spawn_agent', { prompt: 'task on one', title: 'A' })).job_id as string;
    const childA = await launchers[0]!.launched((c) => c.prompt?.startsWith('task on one') === true);
    await eventually('A runs on hub one', async () => (await job(one.hub, A)).status === 'running', 30_000);
    const set = await two.call('set_brief', { text: 'CROSS-HUB-BRIEF: ship small.' });
    assert.deepEqual(set.sent_to, [A]);
    await eventually('hub one pushed it into A', () => launchers[0]!.pushes(childA, 'CROSS-HUB-BRIEF') === 1, 20_000);
    await eventually('stored as delivered', async () => (await rows(one.hub, sql<{ n: number }>`SELECT COUNT(*) AS n FROM messages WHERE to_id = ${A} AND delivered_at IS NOT NULL`)).map((r) => Number(r.n))[0] === 1, 10_000);
    assert.equal((await one.call('get_brief', {})).text, 'CROSS-HUB-BRIEF: ship small.', 'one brief for the database');
    assert.equal(launchers[1]!.children.length, 0, 'hub two ran nothing');
    assert.equal(launchers[0]!.pushes(childA, 'CROSS-HUB-BRIEF'), 1, 'once');
  });
});
