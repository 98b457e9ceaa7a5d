// `overseer dispatch <file.js>`, `overseer runs` and `overseer run <id>` as a person types them,
// against a real hub whose children are scripted in process (test/helpers/fakeLauncher.ts):
// --wait exits 0 only when the script succeeded, 1 with its error and line otherwise; a script
// that does not parse and --args that is not JSON start nothing; the listing shows script and
// dispatch runs together, newest first, with their kind.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { runOverseer } from '../helpers/overseerCli.js';
import { buildCli } from '../helpers/cli.js';
import { eventually } from '../helpers/wait.js';
import { count } from '../helpers/state.js';
import { sql } from 'kysely';

let h: TestHub;
const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

before(async () => {
  buildCli();
  h = await startTestHub({ processes: new ScriptedLauncher((prompt) => (task(prompt) === 'bad' ? { resultText: 'it broke', isError: true } : { resultText: `did ${task(prompt)}` })) });
});
after(async () => { await h?.stop(); });

const runCount = (): Promise<number> => count(h.hub, sql`SELECT COUNT(*) AS n FROM runs`);

function scriptFile(name: string, text: string): string {
  const file = join(h.dir, name);
  writeFileSync(file, text);
  return file;
}

describe('overseer dispatch <file.js>, runs, run', () => {
  test('dispatch --wait with --args runs the script to its end and exits 0; run shows its calls, phases and log', async () => {
    const file = scriptFile('review.js', `export const meta = { name: 'review-files' }
phase('Review')
const out = await parallel(args.files.map((f) => () => agent('TASK:' + f, { label: 'review ' + f })))
log('reviewed ' + out.length)
return out`);
    const r = await runOverseer(h.home, ['dispatch', file, '--wait', '--args', '{"files":["a","b"]}']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /r-\w+ started: review-files; waiting/);
    assert.match(r.stdout, /: succeeded · 2 call\(s\): 2 done, 0 running, 0 failed/);
    assert.match(r.stdout, /result: \["did a","did b"\]/);
    const id = /(r-\w+) started/.exec(r.stdout)![1]!;
    const shown = await runOverseer(h.home, ['run', id]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /phases: Review \(2\)/);
    assert.match(shown.stdout, /SEQ\s+KIND\s+LABEL\s+PHASE\s+STATUS\s+JOB\s+COST/);
    assert.match(shown.stdout, /1\s+agent\s+review a\s+Review\s+done\s+j-\w+\s+\$0\.0000/);
    assert.match(shown.stdout, /\[phase\] Review\n.*reviewed 2/);
    const json = JSON.parse((await runOverseer(h.home, ['run', id.slice(0, 6), '--json'])).stdout);
    assert.equal(json.run_id, id, 'a unique prefix names the run');
    assert.deepEqual(json.result, ['did a', 'did b']);
  });

  test('a script that throws: --wait exits 1 with the error and its line, the finished call kept', async () => {
    const file = scriptFile('fails.js', `await agent('TASK:good')\n\nawait agent('TASK:bad')\n`);
    const r = await runOverseer(h.home, ['dispatch', file, '--wait', '--title', 'will fail']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /\(will fail\): failed/);
    assert.match(r.stdout, /error: AgentFailed \(line 3\)/);
    assert.match(r.stdout, /1\s+agent\s+-\s+-\s+done/);
    // overseer resume continues it as resume_run does, and shows it as a script run.
    const id = /run (r-[a-z0-9]+) \(will fail\)/.exec(r.stdout)![1]!;
    const again = await runOverseer(h.home, ['resume', id]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, new RegExp(`run ${id} \\(will fail\\): running`));
    assert.match(again.stdout, /\[replay\] resumed after it failed/);
  });

  test('dispatch without --wait answers at once with the run id; --json gives run_script\'s answer', async () => {
    const file = scriptFile('quick.js', `return await agent('TASK:q')`);
    const r = await runOverseer(h.home, ['dispatch', file, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const started = JSON.parse(r.stdout);
    assert.equal(started.status, 'running');
    await eventually('the quick run ended', async () => ((await h.hub.scripts.view(started.run_id))?.status === 'succeeded' ? true : undefined), 20_000);
  });

  test('a script that does not parse names its line and starts nothing; --args that is not JSON is refused', async () => {
    const before = await runCount();
    const bad = scriptFile('broken.js', `const a = 1\nconst b = ;\n`);
    const r = await runOverseer(h.home, ['dispatch', bad, '--wait']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /broken\.js:2(:\d+)?: SyntaxError: .*\n.*nothing was started/);
    const good = scriptFile('ok.js', `return args`);
    const a = await runOverseer(h.home, ['dispatch', good, '--args', '{files: [a]}']);
    assert.equal(a.code, 2);
    assert.match(a.stderr, /--args is not JSON .*e\.g\. --args '\{"files":\["a\.ts","b\.ts"\]\}'.*Nothing was started/);
    assert.equal(await runCount(), before, 'no run was written');
  });

  test('runs lists script and dispatch runs together, newest first, with their kind', async () => {
    const d = await h.call('dispatch', { format: 'toml', title: 'toml run', content: ['[[task]]', 'id = "a"', 'prompt = "TASK:t"'].join('\n') });
    await eventually('the dispatch run ended', async () => ((await h.hub.runs.view(d.run_id)).status === 'succeeded' ? true : undefined), 20_000);
    const r = await runOverseer(h.home, ['runs']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.match(lines[0]!, new RegExp(`^${d.run_id}  dispatch  succeeded\\s+1 succeeded .*toml run$`));
    assert.ok(lines.some((l) => /^r-\w+  script    succeeded\s+2 done, 0 running, 0 failed .*review-files$/.test(l)), r.stdout);
    const json = JSON.parse((await runOverseer(h.home, ['runs', '--json'])).stdout);
    assert.deepEqual([...new Set(json.runs.map((x: any) => x.kind))].sort(), ['dispatch', 'script']);
    assert.ok(json.runs.every((x: any) => !('calls' in x) && !('tasks' in x)), 'the listing is brief');
  });

  test('status with no agent yet still shows a script run', async () => {
    const other = await startTestHub({ processes: new ScriptedLauncher(() => ({ resultText: 'x' })) });
    try {
      const r = await other.call('run_script', { title: 'just logs', script: `phase('Plan')\nlog('nothing to spawn')\nreturn 1` });
      await eventually('the run ended', async () => ((await other.hub.scripts.view(r.run_id))?.status === 'succeeded' ? true : undefined), 20_000);
      const st = await runOverseer(other.home, ['status']);
      assert.equal(st.code, 0, st.stderr);
      // On PostgreSQL status also lists the live hubs (src/cli/status.ts hubLines): not this test's subject.
      assert.match(st.stdout.replace(/^hub h-\S+ on .*\n/gm, ''), new RegExp(`^No jobs yet\\.\\n\\n▸ run ${r.run_id} "just logs" succeeded · phase Plan · calls: 0 done, 0 running, 0 failed · \\$0\\.0000 — overseer run ${r.run_id}\\n$`));
    } finally {
      await other.stop();
    }
  });
});
