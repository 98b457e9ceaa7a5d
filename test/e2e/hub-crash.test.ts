// End-to-end: the hub itself going away. kill -9 of a hub process (the one `overseer mcp`
// started for the lead) leaves an orphaned child; the next hub on the same state directory reconciles it
// (process ended, job interrupted, nothing left running) and resume_agent continues the
// child's session. A clean hub stop marks running children interrupted. On SQLite, and on
// PostgreSQL with OVERSEER_TEST_DATABASE=postgres (npm run test:pg): the `overseer mcp` hub and the
// next one are given the same database, and the rows are read through the layer.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startFakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir } from '../helpers/claude.js';
import { startTestHub } from '../helpers/hub.js';
import { alive, eventually, waitForJob } from '../helpers/wait.js';
import { gitOut, initRepo, makeBareRemote } from '../helpers/git.js';
import { finishStep } from '../helpers/holder.js';
import type { StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import { byStatus, events, job, reopen } from '../helpers/state.js';
import { freshDatabase } from '../helpers/postgres.js';
import { openSql } from '../../src/store/sql/open.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => { for (const c of cleanups.reverse()) await c(); });

/** The crew's database when this run is on PostgreSQL (dropped after everything else), else undefined (SQLite in the state directory). */
async function crewDatabase(): Promise<string | undefined> {
  if (process.env.OVERSEER_TEST_DATABASE !== 'postgres') return undefined;
  const d = await freshDatabase();
  cleanups.unshift(() => d.drop());
  return d.url;
}

/** What a crashed hub left in its state, read as the next hub will open it. */
async function stateRows<T>(home: string, databaseUrl: string | undefined, read: (q: Awaited<ReturnType<typeof openSql>>['db']) => Promise<T>): Promise<T> {
  const s = await openSql({ home, databaseUrl });
  try { return await read(s.db); } finally { await s.close(); }
}

const resumable: Script = (ctx) => {
  if (ctx.userTexts.some((t) => t.includes('AFTER-CRASH'))) return { text: `resumed after ${ctx.body.messages.filter((m: any) => m.role === 'assistant').length} assistant turns` };
  if (ctx.step === 0) return { tools: [{ name: 'mcp__overseer__report_status', input: { message: 'working' } }] };
  return { delayMs: 120_000, text: 'never' };
};

describe('hub crash and restart', () => {
  test('kill -9 of the hub: the restarted hub reconciles the orphan and the job resumes its session', async () => {
    const fake = await startFakeAnthropic({ scripts: { r: resumable } });
    cleanups.push(() => fake.close());
    const dir = await makeTempDir('ovs-crash');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const home = join(dir, 'state');
    const url = await crewDatabase();
    const env = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: home, CLAUDE_BIN: claudeBin(), ...(url ? { OVERSEER_DATABASE_URL: url } : {}) } as Record<string, string>;
    const transport = new StdioClientTransport({ command: process.execPath, args: [join(process.cwd(), 'dist/cli/main.js'), 'mcp'], env, cwd: dir, stderr: 'ignore' });
    const lead = new Client({ name: 'crash-test', version: '1' });
    await lead.connect(transport);
    const r = await lead.callTool({ name: 'spawn_agent', arguments: { prompt: '@script:r long task' } });
    const jobId = JSON.parse((r.content as any)[0].text).job_id as string;
    await fake.waitForRequest((q) => q.script === 'r' && q.step === 1, 30_000);
    const hubPid = JSON.parse(readFileSync(join(home, 'hub.json'), 'utf8')).pid as number;
    const childPid = (await stateRows(home, url, (q) => q.selectFrom('jobs').select('pid').where('id', '=', jobId).executeTakeFirstOrThrow())).pid!;
    assert.ok(childPid > 0);

    // The lead's window goes first (its bridge would otherwise start a new hub at once), then the hub.
    await lead.close().catch(() => undefined);
    assert.ok(alive(hubPid), 'the hub outlives its lead\'s bridge');
    process.kill(hubPid, 'SIGKILL');
    await eventually('hub gone', () => !alive(hubPid), 5000);
    assert.ok(alive(childPid), 'the child outlives the killed hub (own process group)');

    const h = await startTestHub({ dir, fake, ...(url ? { config: { databaseUrl: url } } : {}) });
    cleanups.push(() => h.stop({ keep: true }));
    assert.deepEqual(h.hub.reconciled?.interrupted, [jobId]);
    assert.ok(h.hub.reconciled?.killed.includes(childPid));
    await eventually('orphan ended', () => !alive(childPid), 5000);
    const got = await h.call('get_agent', { job_id: jobId });
    assert.equal(got.status, 'interrupted');
    assert.equal(got.failure_class, 'interrupted');
    assert.equal((await byStatus(h.hub, 'running')).length, 0, 'nothing left running');

    await h.call('resume_agent', { job_id: jobId, message: 'AFTER-CRASH: carry on' });
    const w = await h.call('wait_for_agents', { job_ids: [jobId], timeout_s: 60 });
    assert.equal(w.done[0].status, 'succeeded', JSON.stringify(w.done[0]));
    assert.match(w.done[0].result, /resumed after [1-9]/, 'the earlier turns were in the resumed conversation');
    assert.equal(w.done[0].session_id, got.session_id);
  });

  test('kill -9 while a worktree is being closed: the next hub commits and closes it, then starts its dependent from that branch', { timeout: 180_000 }, async () => {
    const cwdOf = (ctx: StepContext): string => [...JSON.stringify(ctx.body.messages).matchAll(/Primary working directory: ([^\\"\s]+)/g)].pop()?.[1] ?? '.';
    let seen: string | undefined = 'not started';
    const fake = await startFakeAnthropic({ scripts: {
      first: (ctx) => ctx.step === 0 ? { tools: [{ name: 'Write', input: { file_path: join(cwdOf(ctx), 'shared.txt'), content: 'first\n' } }] } : ctx.step === 1 ? finishStep('wrote shared.txt') : { text: 'done' },
      after: (ctx) => {
        if (ctx.step !== 0) return { text: 'done' };
        const f = join(cwdOf(ctx), 'shared.txt');
        seen = existsSync(f) ? readFileSync(f, 'utf8') : undefined;
        return finishStep('looked');
      },
    } });
    cleanups.push(() => fake.close());
    const dir = await makeTempDir('ovs-crash-wt');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const home = join(dir, 'state');
    const gate = join(dir, 'gate');
    cleanups.push(() => writeFileSync(gate, '')); // whatever happens, the held push goes on
    const entered = join(dir, 'entered');
    const repo = await initRepo(join(dir, 'repo'));
    // Closing the worktree pushes to origin, whose pre-receive hook holds the push until the gate opens.
    const remote = await makeBareRemote(join(dir, 'remote.git'));
    writeFileSync(join(remote, 'hooks', 'pre-receive'), `#!/bin/sh\ntouch '${entered}'\nwhile [ ! -f '${gate}' ]; do sleep 0.05; done\n`);
    chmodSync(join(remote, 'hooks', 'pre-receive'), 0o755);
    await gitOut(repo, ['remote', 'add', 'origin', remote]);

    const url = await crewDatabase();
    const env = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: home, CLAUDE_BIN: claudeBin(), ...(url ? { OVERSEER_DATABASE_URL: url } : {}) } as Record<string, string>;
    const lead = new Client({ name: 'crash-wt-test', version: '1' });
    await lead.connect(new StdioClientTransport({ command: process.execPath, args: [join(process.cwd(), 'dist/cli/main.js'), 'mcp'], env, cwd: dir, stderr: 'ignore' }));
    const spawn = async (args: Record<string, unknown>): Promise<string> => JSON.parse(((await lead.callTool({ name: 'spawn_agent', arguments: { cwd: repo, worktree: true, ...args } })).content as any)[0].text).job_id as string;
    const first = await spawn({ prompt: '@script:first', title: 'first' });
    const after = await spawn({ prompt: '@script:after', title: 'after', depends_on: [first] });
    await eventually('the push of the first job\'s branch', () => existsSync(entered), 60_000);
    const hubPid = JSON.parse(readFileSync(join(home, 'hub.json'), 'utf8')).pid as number;
    await lead.close().catch(() => undefined);
    process.kill(hubPid, 'SIGKILL');
    await eventually('hub gone', () => !alive(hubPid), 5000);
    const rows = await stateRows(home, url, (q) => q.selectFrom('jobs').select(['id', 'status', 'diff_stat']).orderBy('seq').execute());
    assert.deepEqual(rows, [{ id: first, status: 'succeeded', diff_stat: null }, { id: after, status: 'waiting', diff_stat: null }], 'the hub died between the end and the closed worktree');

    const h = await startTestHub({ dir, fake, ...(url ? { config: { databaseUrl: url } } : {}) });
    cleanups.push(() => h.stop({ keep: true }));
    assert.equal((await job(h.hub, after)).status, 'waiting', 'the dependent waits while the worktree is closed again');
    writeFileSync(gate, '');
    await waitForJob(h.hub, after, (j) => j.status === 'succeeded', 90_000);
    assert.equal(seen, 'first\n', 'the dependent started from the dependency\'s committed branch');
    const f = await job(h.hub, first);
    assert.match(f.diff_stat ?? '', /shared\.txt/);
    assert.ok((await events(h.hub, first)).some((e) => e.kind === 'worktree_closed'), 'the restart closed it');
  });

  test('stopping the hub ends its children and marks them interrupted', async () => {
    const h = await startTestHub({ scripts: { r: resumable } });
    const id = (await h.call('spawn_agent', { prompt: '@script:r' })).job_id;
    await h.fake.waitForRequest((q) => q.script === 'r' && q.step === 1, 30_000);
    const pid = (await waitForJob(h.hub, id, (j) => j.pid !== null)).pid!;
    await h.hub.stop();
    assert.equal(alive(pid), false, 'child ended with the hub');
    const s = await reopen(h.hub);
    const row = await s.db.selectFrom('jobs').select('status').where('id', '=', id).executeTakeFirstOrThrow().finally(() => s.close());
    assert.equal(row.status, 'interrupted');
    await h.fake.close();
    rmSync(h.dir, { recursive: true, force: true });
  });
});
