// End-to-end: the reading commands of the built CLI (node dist/cli/main.js, OVERSEER_HOME = a
// running test hub's state) on jobs of real claude children driven by the fake Anthropic API.
// `logs` shows event times, attempt headers and the hub's verdict from the database — also
// when Claude's own result said `success` for a job Overseer failed; `turns` agrees between
// logs, status --json and get_agent; `logs -f` (text and --json) follows a retry into its new
// attempt and exits by itself when the job ends; `events` and get_agent {events:true} show the
// permission decisions with the rule that decided; job ids work by unique prefix (ambiguous →
// exit 2 listing the matches); bad arguments exit 2 with a message; no state exits 1.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { buildCli, overseer, type CliRun } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/claude.js';
import { gate } from '../helpers/gate.js';

const TIME = /\d{2}:\d{2}:\d{2}/;

describe('overseer logs / events / status on real jobs', { timeout: 280_000 }, () => {
  let h: TestHub;
  const cli = (args: string[], onStdout?: (s: string) => void): Promise<CliRun> => overseer(h.project, args, { OVERSEER_HOME: h.home }, onStdout);
  let okId = '';
  let checkedId = '';
  // The first attempt of `flaky` fails only once both followers show it: a follower that starts
  // after attempt 1 ended rightly begins at attempt 2 (a CLI start took seconds on a loaded machine).
  const followed = gate(120_000);

  before(async () => {
    buildCli();
    h = await startTestHub({
      scripts: {
        // One Bash call that writes (so Claude asks check_permission; the policy's Bash rule allows it), then an answer.
        tooly: (ctx) => (ctx.step === 0 ? { tools: [{ name: 'Bash', input: { command: 'echo hi > made.txt' } }] } : { text: 'all done here' }),
        // Claude ends with result subtype success; the hub's check fails the job.
        said_ok: [{ text: 'I say it worked' }],
        // The first attempt fails (API 400), the retry succeeds; both slow enough to follow.
        flaky: async (ctx) => {
          if (ctx.prompt.includes('Previous attempt')) return { delayMs: 1000, text: 'ok on retry' };
          await followed.wait;
          return { error: { status: 400, message: 'first attempt fails' } };
        },
      },
    });
    okId = (await h.call('spawn_agent', { prompt: '@script:tooly' })).job_id;
    checkedId = (await h.call('spawn_agent', { prompt: '@script:said_ok', checks: ['command:exit 3'] })).job_id;
    await h.call('wait_for_agents', { job_ids: [okId, checkedId], timeout_s: 120 });
  });

  after(async () => {
    await h?.stop();
  });

  test('logs: times, an attempt header and footer, and the verdict; turns agree with status --json and get_agent', async () => {
    const prefix = okId.slice(0, okId.length - 2);
    const r = await cli(['logs', prefix]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^── attempt 1 \(initial\) started \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    assert.ok(lines.some((l) => new RegExp(`^${TIME.source} tool_use Bash`).test(l)), `no timed tool_use line:\n${r.stdout}`);
    assert.ok(lines.some((l) => new RegExp(`^${TIME.source} assistant: all done here`).test(l)), r.stdout);
    const summary = await h.call('get_agent', { job_id: okId });
    const status = JSON.parse((await cli(['status', '--json'])).stdout).find((j: any) => j.job_id === okId);
    assert.equal(summary.turns, 2, 'two model responses: the Bash call and the answer');
    assert.equal(status.turns, summary.turns);
    assert.match(lines.at(-2)!, new RegExp(`^── attempt 1 ended .* UTC: succeeded, ${summary.turns} turns, \\$`));
    assert.equal(lines.at(-1), `overseer: job ${okId} succeeded after 1 attempt, ${summary.turns} turns, $${summary.cost_usd.toFixed(4)} — result: all done here`);
    // Claude's own num_turns is not printed next to ours.
    assert.doesNotMatch(r.stdout, /result: success \(\d+ turns?/);
  });

  test('logs: the verdict is the hub\'s (failed, check_failed) even though Claude\'s result said success', async () => {
    const r = await cli(['logs', checkedId]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /result: success \(\$[\d.]+\) I say it worked/);
    assert.match(r.stdout.trimEnd().split('\n').at(-1)!, new RegExp(`^overseer: job ${checkedId} failed \\(check_failed\\) after 1 attempt, 1 turn, .* — error: .*exited 3`));
    const json = await cli(['logs', checkedId, '--json']);
    const verdict = JSON.parse(json.stdout.trimEnd().split('\n').at(-1)!);
    assert.equal(verdict.type, 'overseer.verdict');
    assert.equal(verdict.status, 'failed');
    assert.equal(verdict.failure_class, 'check_failed');
  });

  test('logs -f (text and --json) follows a retry into attempt 2 and exits when the job ends', async () => {
    const id = (await h.call('spawn_agent', { prompt: '@script:flaky', retry: 'same' })).job_id;
    const seen = { text: false, json: false };
    const saw = (k: 'text' | 'json') => (all: string): void => {
      seen[k] ||= k === 'text' ? all.includes('── attempt 1 (initial) started') : all.includes('"type":"overseer.attempt"');
      if (seen.text && seen.json) followed.open();
    };
    const [text, json] = await Promise.all([cli(['logs', id, '-f'], saw('text')), cli(['logs', id, '-f', '--json'], saw('json'))]);
    assert.equal(text.code, 0, text.stderr);
    const job = await h.call('get_agent', { job_id: id });
    assert.equal(job.status, 'succeeded', 'the followers exited only once the job had ended');
    assert.match(text.stdout, /── attempt 1 \(initial\) started/);
    assert.match(text.stdout, /── attempt 1 ended .*: failed \(api_error\)/);
    assert.match(text.stdout, /── attempt 2 \(retry\) started/);
    assert.match(text.stdout, /assistant: ok on retry/);
    assert.ok(text.stdout.indexOf('attempt 2 (retry)') > text.stdout.indexOf('attempt 1 ended'));
    assert.match(text.stdout.trimEnd().split('\n').at(-1)!, new RegExp(`^overseer: job ${id} succeeded after 2 attempts`));

    assert.equal(json.code, 0, json.stderr);
    const objs = json.stdout.trimEnd().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(objs.filter((o) => o.type === 'overseer.attempt').map((o) => [o.n, o.kind]), [[1, 'initial'], [2, 'retry']]);
    assert.ok(objs.some((o) => o.type === 'result'), 'the raw transcript lines are there');
    assert.deepEqual({ ...objs.at(-1), ended_at: undefined }, { type: 'overseer.verdict', job_id: id, status: 'succeeded', failure_class: null, error: null, result: 'ok on retry', turns: job.turns, cost_usd: job.cost_usd, attempts: 2, ended_at: undefined });
  });

  test('events and get_agent {events:true} show the permission decision with the rule that decided', async () => {
    const r = await cli(['events', '--job', okId, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const events = JSON.parse(r.stdout);
    assert.deepEqual(events.map((e: any) => e.kind).filter((k: string) => ['spawned', 'started', 'ended'].includes(k)), ['spawned', 'started', 'ended']);
    const perm = events.find((e: any) => e.kind === 'permission');
    assert.ok(perm, JSON.stringify(events));
    assert.equal(perm.data.tool, 'Bash');
    assert.equal(perm.data.action, 'allow');
    assert.equal(typeof perm.data.rule, 'number');
    assert.equal(perm.data.rule_tool, 'Bash');
    assert.equal(perm.data.target, 'echo hi > made.txt');
    assert.match(perm.data.reason, /allow by policy rule \d+ \(tool Bash\)/);
    const text = await cli(['events', '--job', okId]);
    assert.match(text.stdout, /^TIME \(UTC\)\s+JOB\s+EVENT\s+DETAILS$/m);
    assert.match(text.stdout, new RegExp(`^\\d{4}-\\d{2}-\\d{2} ${TIME.source}\\s+${okId}\\s+permission\\s+tool=Bash action=allow rule=\\d+ rule_tool=Bash`, 'm'));

    const g = await h.call('get_agent', { job_id: okId, events: true });
    assert.deepEqual(g.events.map((e: any) => e.id), events.map((e: any) => e.id));
    assert.equal((await h.call('get_agent', { job_id: okId })).events, undefined, 'events only on request');
    // All jobs, limited: the most recent N, newest last.
    const all = JSON.parse((await cli(['events', '--json', '--limit', '2'])).stdout);
    assert.equal(all.length, 2);
    assert.ok(all[0].id < all[1].id);
  });

  test('job ids by unique prefix; an ambiguous prefix or an unknown id is exit 2 with the reason', async () => {
    const amb = await cli(['logs', 'j-']);
    assert.equal(amb.code, 2);
    assert.match(amb.stderr, /^overseer: Job id prefix "j-" is ambiguous: it matches .*j-/m);
    for (const id of [okId, checkedId]) assert.ok(amb.stderr.includes(id));
    const short = await cli(['events', '--job', okId.slice(2), '--limit', '1']); // without "j-"
    assert.equal(short.code, 0, short.stderr);
    assert.ok(short.stdout.includes(okId));
    const unknown = await cli(['logs', 'j-zzzz']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /No job "j-zzzz"\. Recent jobs: j-/);
  });

  test('bad arguments exit 2 with a message naming the option; no stack traces', async () => {
    const cases: [string[], RegExp][] = [
      [['logs', okId, '--tail', 'abc'], /--tail "abc" is not valid: give a whole number from 1/],
      [['logs', okId, '--tail', '0'], /--tail "0" is not valid/],
      [['logs', okId, '--attempt', '99'], new RegExp(`Job ${okId} has no attempt 99: it has attempts 1\\.\\.1`)],
      [['logs', okId, '--attempt', '1.5'], /--attempt "1.5" is not valid/],
      [['events', '--limit', '-1'], /--limit "-1" is not valid/],
      [['events', '--bogus'], /unknown option '--bogus'/],
      [['logs'], /name a job \(id or unique prefix\), or pass --all/],
      [['frobnicate'], /unknown command 'frobnicate'/],
    ];
    for (const [args, re] of cases) {
      const r = await cli(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re, args.join(' '));
      assert.doesNotMatch(r.stderr, /^\s+at /m, `${args.join(' ')} printed a stack trace`);
      assert.equal(r.stdout, '');
    }
    assert.equal((await cli(['--version'])).code, 0);
    assert.equal((await cli(['--help'])).code, 0);
  });

  test('a runtime failure (no state database) exits 1 with the reason', async () => {
    const empty = await makeTempDir('ovs-nostate');
    const r = await overseer(empty, ['status'], { OVERSEER_HOME: join(empty, 'state') });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^overseer: No Overseer state at .*state \(no state\.db\)/);
  });
});
