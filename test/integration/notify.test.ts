// Integration: notifications from a real hub (real claude children on the fake model) to real
// sinks — a webhook and a Slack sink on a local HTTP receiver, a command that writes its stdin
// to a file, a desktop sink whose notify-send is a script first on PATH, and a webhook on a
// closed port that fails without stopping the others or the hub (issue 10 point 4).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import pino from 'pino';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { startReceiver, type Receiver, type Received } from '../helpers/receiver.js';
import { deadPort } from '../helpers/net.js';
import { finishStep } from '../helpers/holder.js';
import { waitForJob } from '../helpers/wait.js';
import { insertWorkflow, updateWorkflow, type WorkflowFields } from '../../src/store/sql/workflows.js';
import { HealthSchema } from '../../src/config.js';
import type { NotifyPayload } from '../../src/floor/notify/index.js';

let h: TestHub;
let rx: Receiver;
let tmp = '';
let deadUrl = '';
const logLines: Record<string, any>[] = [];
const savedPath = process.env.PATH;
const cmdOut = (): string => join(tmp, 'command.jsonl');
const desktopOut = (): string => join(tmp, 'notify-send.txt');

const scripts = {
  quick: [finishStep('all 12 tests pass\nthe details: …'), { text: 'done' }],
  broken: [{ tools: [{ name: 'mcp__overseer__finish', input: { result: 'could not reach the staging DB', outcome: 'failure' } }] }, { text: 'done' }],
  asker: [
    { tools: [{ name: 'mcp__overseer__request_approval', input: { summary: 'push the release branch to origin', timeout_s: 120 } }] },
    finishStep('pushed'),
    { text: 'done' },
  ],
  sleeper: [{ delayMs: 60_000, text: 'never' }],
  leadonly: [
    { tools: [{ name: 'mcp__overseer__ask_lead', input: { question: 'which port?', who: 'lead', timeout_s: 120 } }] },
    finishStep('used 8080'),
    { text: 'done' },
  ],
};

/** The webhook's notice of `event` for `jobId`. */
const hook = (event: string, jobId: string, timeoutMs = 60_000): Promise<Received> =>
  rx.waitFor(`webhook ${event} of ${jobId}`, (r) => r.path === '/hook' && r.json?.event === event && r.json?.job_id === jobId, timeoutMs);
const hooks = (event: string, id: string): NotifyPayload[] => rx.received.filter((r) => r.path === '/hook' && r.json?.event === event && (r.json.job_id === id || r.json.workflow_id === id)).map((r) => r.json);
const slackTexts = (): string[] => rx.received.filter((r) => r.path === '/slack').map((r) => r.json.text as string);

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'ovs-notify-it-'));
  rx = await startReceiver();
  deadUrl = `http://127.0.0.1:${await deadPort()}`;
  // A notify-send of our own, first on PATH: the desktop sink looks it up when the hub starts.
  const bin = join(tmp, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> '${desktopOut()}'; done\necho --- >> '${desktopOut()}'\n`);
  chmodSync(join(bin, 'notify-send'), 0o755);
  process.env.PATH = `${bin}${delimiter}${savedPath ?? ''}`;
  const appendStdin = `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>require('fs').appendFileSync(${JSON.stringify(cmdOut())},s))`;
  h = await startTestHub({
    scripts,
    log: pino({ level: 'info' }, { write: (s: string) => { logLines.push(JSON.parse(s)); } }),
    config: {
      notify: {
        sinks: [
          { type: 'webhook', name: 'hook', url: `${rx.url}/hook`, events: ['needs_input', 'failed', 'succeeded', 'stalled', 'workflow_blocked', 'workflow_done'] },
          { type: 'slack', name: 'team', url: `${rx.url}/slack` },
          { type: 'webhook', name: 'dead', url: `${deadUrl}/gone`, events: ['needs_input', 'failed', 'succeeded'] },
          { type: 'command', name: 'cmd', argv: [process.execPath, '-e', appendStdin], events: ['failed', 'succeeded', 'needs_input'] },
          { type: 'desktop', name: 'desk', events: ['failed'] },
        ],
        rate: { perMinute: 60, repeatS: 300 },
      },
      health: HealthSchema.parse({ stalledS: 3, checkMs: 100 }),
    },
  });
}, { timeout: 60_000 });
after(async () => {
  await h?.stop();
  await rx?.close();
  process.env.PATH = savedPath;
  rmSync(tmp, { recursive: true, force: true });
}, { timeout: 60_000 });

describe('notifications from a real hub', () => {
  let quick = '';
  let broken = '';
  let asker = '';
  let leadOnly = '';

  test('a job that succeeds: the webhook gets its payload once, with the command to read it', { timeout: 60_000 }, async () => {
    quick = (await h.call('spawn_agent', { prompt: '@script:quick', title: 'Quick one' })).job_id;
    const r = await hook('succeeded', quick);
    const p = r.json as NotifyPayload;
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(
      { event: p.event, job_id: p.job_id, title: p.title, reason: p.reason, command: p.command, project: p.project, project_dir: p.project_dir },
      { event: 'succeeded', job_id: quick, title: 'Quick one', reason: 'all 12 tests pass', command: `overseer logs ${quick}`, project: basename(h.project), project_dir: h.project },
    );
    assert.equal(p.hub_url, new URL(h.hub.http!.url).origin);
    assert.ok(Math.abs(Date.parse(p.at) - Date.now()) < 120_000, p.at);
    assert.equal(p.suppressed, undefined);
  });

  test('a job that fails: webhook, Slack text with the command in backticks, desktop notification', { timeout: 60_000 }, async () => {
    broken = (await h.call('spawn_agent', { prompt: '@script:broken', title: 'Broken one' })).job_id;
    const p = (await hook('failed', broken)).json as NotifyPayload;
    assert.equal(p.title, 'Broken one');
    assert.equal(p.command, `overseer logs ${broken}`);
    assert.match(p.reason, /^reported_failure: .* — could not reach the staging DB$/);
    // Its failure's text, not any text of it: on a loaded machine the child can be silent past the 3 s stall threshold first.
    const slack = await rx.waitFor('the Slack text of the failure', (r) => r.path === '/slack' && String(r.json?.text).includes(`(${broken}) failed`));
    assert.deepEqual(Object.keys(slack.json), ['text']);
    assert.match(slack.json.text, new RegExp(`^\\*${basename(h.project)}\\*: Broken one \\(${broken}\\) failed — reported_failure: .*\\. Run \`overseer logs ${broken}\`$`));
  });

  test('a request opened by a child: needs_input with `overseer respond <id>`; answered, the child goes on', { timeout: 60_000 }, async () => {
    asker = (await h.call('spawn_agent', { prompt: '@script:asker', title: 'Releaser' })).job_id;
    const p = (await hook('needs_input', asker)).json as NotifyPayload;
    // The bus may say again that a request changed while it is still open: it is not a new request.
    h.hub.ctx.bus.emit('request', { jobId: asker, requestId: p.request_id! });
    const pending = (await h.call('list_requests', {})).requests.filter((r: any) => r.job_id === asker);
    assert.equal(pending.length, 1);
    assert.equal(p.request_id, pending[0].request_id);
    assert.equal(p.command, `overseer respond ${pending[0].request_id} approve`);
    assert.equal(p.reason, 'approval: push the release branch to origin');
    await rx.waitFor('the Slack text of the request', (r) => r.path === '/slack' && String(r.json?.text).includes(`Releaser (${asker}) needs input — approval: push the release branch to origin. Run \`overseer respond ${p.request_id} approve\``));


    await h.call('respond', { request_id: p.request_id, decision: 'approved' });
    await waitForJob(h.hub, asker, (j) => j.status === 'succeeded', 60_000);
    await hook('succeeded', asker);
  });

  test('an agent the health monitor finds stalled', { timeout: 60_000 }, async () => {
    const id = (await h.call('spawn_agent', { prompt: '@script:sleeper', title: 'Sleeper' })).job_id;
    const p = (await hook('stalled', id, 30_000)).json as NotifyPayload;
    assert.equal(p.title, 'Sleeper');
    assert.equal(p.warning, 'stalled');
    assert.match(p.reason, /^stalled: no output for \S+ \(threshold 3s\)$/);
    assert.equal(p.command, `overseer logs ${id}`);
    await h.call('cancel_agent', { job_id: id });
  });

  test('a question only the lead may answer is not sent to the person', { timeout: 60_000 }, async () => {
    const id = (leadOnly = (await h.call('spawn_agent', { prompt: '@script:leadonly', title: 'Lead only' })).job_id);
    await waitForJob(h.hub, id, (j) => j.status === 'needs_input', 60_000);
    const req = (await h.call('list_requests', {})).requests.find((r: any) => r.job_id === id);
    assert.equal(req.who, 'lead');
    await h.call('respond', { request_id: req.request_id, answer: '8080' });
    await hook('succeeded', id);
    await h.hub.notifier!.drain();
    assert.deepEqual(rx.received.filter((r) => r.json?.request_id === req.request_id), []);
  });

  test('a workflow that blocks, then is done: notified once per change', { timeout: 60_000 }, async () => {
    const now = Date.now();
    const q = h.hub.ctx.sql.db;
    const emit = { update: async (id: string, fields: WorkflowFields, at: number): Promise<void> => {
      const w = (await updateWorkflow(q, id, fields, at))!;
      h.hub.ctx.bus.emit('workflow', { workflowId: w.id, status: w.status, phase: w.phase, cycle: w.cycle });
    } };
    await insertWorkflow(q, {
      id: 'w-notify', title: 'Add OAuth', task: 't', status: 'running', cycle: 1, phase: 'implement', cwd: h.project, repo_root: null, worktree_path: null,
      branch: 'overseer/add-oauth', base_commit: null, implementer_json: '{}', reviewer_json: '{}', max_cycles: 5, approve_plan: 0, plan_approved: 0,
      checks_json: '[]', template: null, phase_limits_json: null, state_json: '{}', blocked_json: null, current_job: quick, approval_request: null,
      pr_url: null, git_note: null, created_at: now, ended_at: null, plan_text: null,
    });
    await emit.update('w-notify', { status: 'blocked', blocked_json: JSON.stringify({ code: 'zero_progress', message: 'no milestone in 2 phases', phase: 'implement', cycle: 1, job_id: quick }) }, now);
    const b = (await rx.waitFor('workflow_blocked', (r) => r.path === '/hook' && r.json?.event === 'workflow_blocked')).json as NotifyPayload;
    assert.deepEqual([b.workflow_id, b.job_id, b.title, b.command], ['w-notify', quick, 'Add OAuth', `overseer logs ${quick}`]);
    assert.match(b.reason, /^zero_progress: no milestone in 2 phases/);
    await emit.update('w-notify', { cycle: 2 }, now); // still blocked: not news
    await emit.update('w-notify', { status: 'succeeded', pr_url: 'https://github.com/o/r/pull/7' }, now);
    const d = (await rx.waitFor('workflow_done', (r) => r.path === '/hook' && r.json?.event === 'workflow_done')).json as NotifyPayload;
    assert.equal(d.reason, 'PR https://github.com/o/r/pull/7');
    await h.hub.notifier!.drain();
    assert.equal(hooks('workflow_blocked', 'w-notify').length, 1);
  });

  test('the sink on a closed port was logged and counted; every other sink delivered everything, once', { timeout: 60_000 }, async () => {
    // The bus repeats a job's status when a request of the ended job closes: not a second end.
    h.hub.ctx.bus.emit('job', { jobId: quick, status: 'succeeded' });
    await h.hub.notifier!.drain();
    const stats = Object.fromEntries(h.hub.notifier!.stats().map((s) => [s.name, s]));
    // quick, asker and leadOnly succeeded, broken failed, asker asked: 5 notices, each a failure on the dead sink.
    assert.deepEqual([stats.dead!.delivered, stats.dead!.failed], [0, 5]);
    assert.match(stats.dead!.last_error!, new RegExp(`^POST to ${deadUrl} failed: ECONNREFUSED$`));
    const warned = logLines.filter((l) => l.level === 40 && l.sink === 'dead');
    assert.equal(warned.length, 5, JSON.stringify(logLines));
    assert.equal(warned[0]!.msg, `notification sink dead failed: POST to ${deadUrl} failed: ECONNREFUSED`);
    assert.ok(!JSON.stringify(logLines).includes('/gone'), 'the webhook\'s path (its secret) is never logged');
    for (const name of ['hook', 'team', 'cmd', 'desk']) assert.equal(stats[name]!.failed, 0, `${name}: ${stats[name]!.last_error}`);
    // Nothing reached a rate limit or its repeat check: the notifier itself saw each thing once.
    // (Only sinks without `stalled`: a slow child start under load may be stalled twice, which the repeat check rightly drops.)
    for (const name of ['dead', 'cmd', 'desk']) assert.equal(stats[name]!.dropped, 0, name);

    // Each end and each request once, though the bus repeats job events.
    assert.deepEqual([hooks('succeeded', quick).length, hooks('failed', broken).length, hooks('needs_input', asker).length, hooks('succeeded', asker).length], [1, 1, 1, 1]);
    // Slack takes the default events: no successes.
    assert.equal(slackTexts().filter((t) => / succeeded — /.test(t)).length, 0, slackTexts().join('\n'));

    const lines = readFileSync(cmdOut(), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as NotifyPayload);
    assert.deepEqual(lines.map((p) => `${p.event} ${p.job_id}`).sort(), [`failed ${broken}`, `needs_input ${asker}`, `succeeded ${asker}`, `succeeded ${leadOnly}`, `succeeded ${quick}`].sort());
    assert.equal(lines.find((p) => p.event === 'failed')!.command, `overseer logs ${broken}`);

    const desktop = readFileSync(desktopOut(), 'utf8').split('---\n').filter(Boolean);
    assert.equal(desktop.length, 1, desktop.join('|'));
    assert.deepEqual(desktop[0]!.split('\n').slice(0, 4), ['--app-name=Overseer', '--urgency=critical', '--', `Overseer ${basename(h.project)}: Broken one (${broken}) failed`]);
    assert.match(desktop[0]!, new RegExp(`overseer logs ${broken}`));
  });
});
