// End-to-end (a real hub, real claude children on the fake model): batch dispatch from a file
// (docs/dispatch.md). A file with dependencies (a → b, a → c) runs to completion, each
// dependent's job created only after a succeeded and depending on a's job; a run whose first
// task fails (the fake model fails it until it is told its previous attempt failed) is resumed
// with `overseer resume <run>`: the failed job continues its session, the skipped tasks get new
// jobs, and every task succeeds; `overseer dispatch --wait` with no hub running starts one and
// exits 0, and exits 1 with a summary when a task fails.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { scriptedHubs } from '../helpers/scripted.js';
import { finishStep } from '../helpers/holder.js';
import { eventually } from '../helpers/wait.js';
import { alive } from '../helpers/wait.js';
import { buildCli, overseer } from '../helpers/cli.js';
import { claudeBin, claudeEnv, makeTempDir } from '../helpers/claude.js';
import { startFakeAnthropic, type Script, type StepContext } from '../../src/fakemodel/fakeAnthropic.js';
import type { TestHub } from '../helpers/hub.js';
import { getRun } from '../../src/store/sql/runs.js';
import { attempts, job, row } from '../helpers/state.js';
import { sql } from 'kysely';

const { hubWith, cleanups } = scriptedHubs();
buildCli();

/** Finishes with success at once. */
const ok: Script = (ctx) => (ctx.lastToolResults.length ? { text: 'done' } : finishStep(`did ${ctx.prompt.slice(0, 40)}`));
/** Fails until its conversation carries the run's resume message, then succeeds. */
const flaky: Script = (ctx: StepContext) => {
  if (ctx.lastToolResults.length) return { text: 'done' };
  if (ctx.userTexts.at(-1)?.includes('did not succeed')) return finishStep('fixed it this time');
  return { tools: [{ name: 'mcp__overseer__finish', input: { result: 'the build broke', outcome: 'failure' } }] };
};
/** Always fails. */
const broken: Script = (ctx) => (ctx.lastToolResults.length ? { text: 'done' } : { tools: [{ name: 'mcp__overseer__finish', input: { result: 'cannot do it', outcome: 'failure' } }] });

const threeTasks = (a: string): string => [
  'title = "fan out"',
  'concurrency = 2',
  '[[task]]', 'id = "a"', `prompt = "@script:${a} task a"`,
  '[[task]]', 'id = "b"', 'prompt = "@script:ok task b"', 'depends_on = ["a"]', 'labels = ["mine"]',
  '[[task]]', 'id = "c"', 'prompt = "@script:ok task c"', 'depends_on = ["a"]',
].join('\n');

async function runEnded(h: TestHub, runId: string, timeoutMs = 120_000): Promise<any> {
  await eventually(`run ${runId} ended`, async () => (await getRun(h.hub.ctx.sql.db, runId))?.status !== 'running', timeoutMs, 100);
  return h.call('get_run', { run_id: runId });
}

const spawnedAt = async (h: TestHub, jobId: string): Promise<number> => (await row(h.hub, sql<{ at: number }>`SELECT at FROM events WHERE job_id = ${jobId} AND kind = 'spawned'`))!.at;

describe('batch dispatch from a file', () => {
  test('a → b, a → c runs to completion: b and c get jobs only after a succeeded, depending on a\'s job, labelled with the run', { timeout: 180_000 }, async () => {
    const h = await hubWith({ ok });
    const file = join(h.project, 'tasks.toml');
    writeFileSync(file, threeTasks('ok'));
    const r = await h.call('dispatch', { file: 'tasks.toml' });
    assert.match(r.run_id, /^r-/);
    assert.equal(r.status, 'running');
    assert.deepEqual(r.tasks.map((t: any) => [t.task_id, t.status === 'not_started']), [['a', false], ['b', true], ['c', true]], 'only a has a job at first');
    const run = await runEnded(h, r.run_id);
    assert.equal(run.status, 'succeeded', JSON.stringify(run, null, 1));
    assert.deepEqual(run.counts, { succeeded: 3 });
    const [a, b, c] = run.tasks as any[];
    const aJob = await job(h.hub, a.job_id);
    for (const t of [b, c]) {
      const j = await job(h.hub, t.job_id);
      assert.deepEqual(JSON.parse(j.depends_on_json), [a.job_id], `${t.task_id} depends on a's job`);
      assert.ok(await spawnedAt(h, j.id) >= aJob.ended_at!, `${t.task_id}'s job was created after a ended`);
      assert.ok(JSON.parse(j.labels_json).includes(`run:${r.run_id}`));
    }
    assert.deepEqual(JSON.parse((await job(h.hub, b.job_id)).labels_json), ['mine', `run:${r.run_id}`]);
    // The run keeps a snapshot of the file and shows up in list_runs.
    const row = (await getRun(h.hub.ctx.sql.db, r.run_id))!;
    assert.equal(row.content, readFileSync(file, 'utf8'));
    assert.equal(row.file, file);
    const listed = await h.call('list_runs', {});
    assert.equal(listed.runs[0].run_id, r.run_id);
    assert.equal(listed.runs[0].title, 'fan out');
    // A bad file: every problem with its line, nothing created.
    const runsBefore = (await h.call('list_runs', {})).runs.length;
    const bad = await h.callRaw('dispatch', { content: '[[task]]\nid = "x"\nprompt = "p"\ndepends_on = ["nope"]\n[[task]]\nid = "x"\n', format: 'toml' });
    assert.ok(bad.isError);
    assert.match(bad.text, /<content>:4:1: task "x" depends on "nope"/);
    assert.match(bad.text, /<content>:5:1: task "x": prompt: prompt is required/);
    assert.match(bad.text, /<content>:6:1: duplicate task id "x"/);
    assert.equal((await h.call('list_runs', {})).runs.length, runsBefore);
  });

  test('a forced failure: a fails, b and c are skipped; overseer resume continues a\'s session with why it failed, gives b and c new jobs, and every task succeeds', { timeout: 240_000 }, async () => {
    const h = await hubWith({ ok, flaky });
    const r = await h.call('dispatch', { content: threeTasks('flaky'), format: 'toml', title: 'flaky run' });
    const failed = await runEnded(h, r.run_id);
    assert.equal(failed.status, 'failed');
    const aJob = failed.tasks[0].job_id;
    assert.equal(failed.tasks[0].status, 'failed');
    for (const t of failed.tasks.slice(1)) {
      assert.equal(t.status, 'skipped');
      assert.match(t.error, /dependency a did not succeed/);
      assert.equal(t.job_id, undefined);
    }
    // `overseer run` reads it from the database; `overseer resume <run>` resumes through the hub.
    const shown = await overseer(h.project, ['run', r.run_id], { OVERSEER_HOME: h.home });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /: failed;/);
    assert.match(shown.stdout, new RegExp(`resume what did not succeed with: overseer resume ${r.run_id}`));
    const resumed = await overseer(h.project, ['resume', r.run_id], { OVERSEER_HOME: h.home });
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`^${r.run_id} running`));
    const done = await runEnded(h, r.run_id);
    assert.equal(done.status, 'succeeded', JSON.stringify(done, null, 1));
    assert.equal(done.tasks[0].job_id, aJob, 'a continued its own job (its session)');
    assert.equal((await attempts(h.hub, aJob)).length, 2);
    const asked = h.fake.requests.filter((q) => q.script === 'flaky').map((q) => JSON.stringify(q.body.messages));
    assert.ok(asked.some((m) => m.includes('did not succeed (it ended failed')), 'the resumed session was told its previous attempt failed');
    assert.ok(asked.some((m) => m.includes('the build broke')), 'and it still has its first attempt in the conversation');
    for (const t of done.tasks.slice(1)) {
      assert.equal(t.status, 'succeeded');
      assert.deepEqual(JSON.parse((await job(h.hub, t.job_id)).depends_on_json), [aJob]);
    }
    const listed = await overseer(h.project, ['runs', '--json'], { OVERSEER_HOME: h.home });
    assert.equal(JSON.parse(listed.stdout).runs[0].status, 'succeeded');
    const again = await h.callRaw('resume_run', { run_id: r.run_id });
    assert.match(again.text, /Every task of run .* succeeded: nothing to resume/);
  });

  test('overseer dispatch --wait with no hub running starts one and exits 0; exits 1 with a summary when a task fails', { timeout: 240_000 }, async () => {
    const fake = await startFakeAnthropic({ scripts: { ok, broken } });
    const dir = await makeTempDir('ovs-dispatch');
    const state = join(dir, 'state');
    const project = join(dir, 'project');
    mkdirSync(project);
    const env: NodeJS.ProcessEnv = { ...claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url }), OVERSEER_HOME: state, CLAUDE_BIN: claudeBin(), OVERSEER_KILL_GRACE_MS: '1000', OVERSEER_LOG_LEVEL: 'silent' };
    delete env.OVERSEER_PORT;
    cleanups.push(async () => {
      await overseer(project, ['stop'], env).catch(() => undefined);
      try {
        const pid = (JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number }).pid;
        if (alive(pid)) process.kill(pid, 'SIGKILL');
      } catch { /* no hub */ }
      await fake.close();
      await rm(dir, { recursive: true, force: true });
    });
    writeFileSync(join(project, 'good.yaml'), 'title: ci\ntasks:\n  - id: one\n    prompt: "@script:ok one"\n  - id: two\n    prompt: "@script:ok two"\n    depends_on: [one]\n');
    writeFileSync(join(project, 'bad.yaml'), 'tasks:\n  - id: one\n    prompt: "@script:broken one"\n  - id: two\n    prompt: "@script:ok two"\n    depends_on: [one]\n');
    writeFileSync(join(project, 'invalid.yaml'), 'tasks:\n  - id: one\n    promt: typo\n');

    // An invalid file: exit 1 with its problems, and no hub was started for it.
    const invalid = await overseer(project, ['dispatch', 'invalid.yaml', '--wait'], env);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /invalid\.yaml:3:5: task "one": unknown key "promt"/);
    assert.ok(!existsSync(join(state, 'hub.json')), 'no hub for an invalid file');
    const v = await overseer(project, ['validate', 'good.yaml'], env);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /good\.yaml: ok, 2 task\(s\)/);

    const good = await overseer(project, ['dispatch', 'good.yaml', '--wait'], env);
    assert.equal(good.code, 0, `${good.stdout}\n${good.stderr}`);
    assert.match(good.stdout, /run r-\S+ \(ci\): succeeded; 2 succeeded/);
    const hubPid = (JSON.parse(readFileSync(join(state, 'hub.json'), 'utf8')) as { pid: number }).pid;
    assert.ok(alive(hubPid), 'dispatch started a background hub');
    assert.notEqual(hubPid, process.pid);

    const bad = await overseer(project, ['dispatch', 'bad.yaml', '--wait'], env);
    assert.equal(bad.code, 1, `${bad.stdout}\n${bad.stderr}`);
    assert.match(bad.stdout, /: failed; 1 failed, 1 skipped/);
    assert.match(bad.stdout, /one\s+failed\s+j-\S+\s+.*cannot do it/);
    assert.match(bad.stdout, /two\s+skipped\s+-\s+dependency one did not succeed/);
    const db = new Database(join(state, 'state.db'), { readonly: true });
    try {
      assert.deepEqual((db.prepare('SELECT status FROM runs ORDER BY created_at').all() as { status: string }[]).map((x) => x.status), ['succeeded', 'failed']);
    } finally {
      db.close();
    }
  });
});
