// Notification sinks and the dispatcher (src/floor/notify/sinks/, dispatch.ts), on the real
// machine: HTTP to a local receiver, real programs (node, shell scripts standing in for
// notify-send and osascript), a fake clock for the rate limits, a pino logger that is read back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Dispatcher } from '../../src/floor/notify/dispatch.js';
import type { NotifyPayload } from '../../src/floor/notify/payload.js';
import type { SinkConfig } from '../../src/config/notify.js';
import { makeSink, type Sink, type SinkDeps } from '../../src/floor/notify/sinks/index.js';
import { runProgram } from '../../src/floor/notify/sinks/exec.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { deadPort } from '../helpers/net.js';
import { alive, eventually } from '../helpers/wait.js';

const payload: NotifyPayload = {
  event: 'failed', job_id: 'j-1a2b', title: 'Fix "the" parser', reason: 'crashed: exit 1', command: 'overseer logs j-1a2b',
  at: '2025-01-02T03:04:05.000Z', project: 'shop', project_dir: '/src/shop',
};

let dir = '';
let rx: Receiver;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ovs-notify-'));
  rx = await startReceiver();
});
after(async () => {
  await rx.close();
  rmSync(dir, { recursive: true, force: true });
});

const deps = (over: Partial<SinkDeps> = {}): SinkDeps => ({ env: process.env, platform: 'linux', cwd: dir, fetch: globalThis.fetch, ...over });
const sink = (c: SinkConfig, d = deps()): Sink => {
  const s = makeSink(c, 0, d);
  assert.ok(!('unavailable' in s), JSON.stringify(s));
  return s;
};

/** A pino logger whose lines the test reads. */
function capture(): { log: pino.Logger; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = [];
  return { lines, log: pino({ level: 'debug' }, { write: (s: string) => { lines.push(JSON.parse(s)); } }) };
}

/** A fake program on a PATH of its own: appends its arguments, one per line, then a separator, to `out`. */
function fakeProgram(name: string, out: string): string {
  const bin = mkdtempSync(join(dir, 'bin-'));
  writeFileSync(join(bin, name), `#!/bin/sh\nfor a in "$@"; do printf '%s\\n' "$a" >> '${out}'; done\necho --- >> '${out}'\n`);
  chmodSync(join(bin, name), 0o755);
  return bin;
}

describe('webhook and slack', () => {
  test('webhook: POSTs the payload as JSON', async () => {
    await sink({ type: 'webhook', url: `${rx.url}/hook?k=secret` }).send(payload);
    const r = await rx.waitFor('the webhook POST', (x) => x.path === '/hook?k=secret');
    assert.equal(r.method, 'POST');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(r.json, payload);
  });

  test('slack: POSTs { text } with the command in backticks', async () => {
    await sink({ type: 'slack', url: `${rx.url}/slack` }).send(payload);
    const r = await rx.waitFor('the slack POST', (x) => x.path === '/slack');
    assert.deepEqual(Object.keys(r.json), ['text']);
    assert.equal(r.json.text, '*shop*: Fix "the" parser (j-1a2b) failed — crashed: exit 1. Run `overseer logs j-1a2b`');
  });

  test('a non-2xx answer is a failure naming the status and what it said, not the URL\'s secret path', async () => {
    rx.answer('/broken/s3cret', 500, 'boom today');
    await assert.rejects(sink({ type: 'webhook', url: `${rx.url}/broken/s3cret` }).send(payload), (err: Error) => {
      assert.equal(err.message, `POST to ${rx.url} answered HTTP 500: boom today`);
      return true;
    });
    rx.answer('/moved', 302);
    await assert.rejects(sink({ type: 'slack', url: `${rx.url}/moved` }).send(payload), /answered HTTP 302/);
  });

  test('a closed port is a failure saying the connection was refused', async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    await assert.rejects(sink({ type: 'webhook', url: `${url}/x` }).send(payload), new RegExp(`^Error: POST to ${url} failed: ECONNREFUSED$`));
  });
});

describe('command', () => {
  test('gets the payload as JSON on stdin and its fields as OVERSEER_* variables, in the project directory', async () => {
    const out = join(dir, 'cmd.json');
    const script = `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>require('fs').writeFileSync(${JSON.stringify(out)},JSON.stringify({stdin:s,cwd:process.cwd(),env:Object.fromEntries(Object.entries(process.env).filter(([k])=>k.startsWith('OVERSEER_')))})))`;
    await sink({ type: 'command', argv: [process.execPath, '-e', script] }, deps({ env: { ...process.env, OVERSEER_REQUEST_ID: 'stale' } })).send({ ...payload, suppressed: 3 });
    const got = JSON.parse(readFileSync(out, 'utf8'));
    assert.deepEqual(JSON.parse(got.stdin), { ...payload, suppressed: 3 });
    assert.equal(got.cwd, dir);
    assert.equal(got.env.OVERSEER_EVENT, 'failed');
    assert.equal(got.env.OVERSEER_JOB_ID, 'j-1a2b');
    assert.equal(got.env.OVERSEER_COMMAND, 'overseer logs j-1a2b');
    assert.equal(got.env.OVERSEER_SUPPRESSED, '3');
    assert.equal(got.env.OVERSEER_PROJECT_DIR, '/src/shop');
    assert.equal('OVERSEER_REQUEST_ID' in got.env, false, 'a field the payload lacks is unset, not inherited');
  });

  test('a program that fails, is missing, or ignores its stdin', async () => {
    await assert.rejects(sink({ type: 'command', argv: [process.execPath, '-e', 'console.error("no  route\\n to pager"); process.exit(3)'] }).send(payload), new RegExp(`exited with code 3: no route to pager$`));
    await assert.rejects(sink({ type: 'command', argv: [join(dir, 'nope')] }).send(payload), /nope: not found$/);
    await sink({ type: 'command', argv: ['/bin/true'] }).send(payload);
  });

  test('a program past its time limit is killed, with what it started', async () => {
    const pidFile = join(dir, 'bg.pid');
    await assert.rejects(runProgram('/bin/sh', ['-c', `sleep 60 & echo $! > '${pidFile}'; wait`], { env: process.env, cwd: dir, timeoutMs: 300 }), /^Error: \/bin\/sh took longer than 0.3 s and was killed$/);
    const bg = Number(readFileSync(pidFile, 'utf8'));
    await eventually('the background sleep to be killed', () => !alive(bg), 5000);
  });

  test('done when the program exits, though something it left behind still holds its stderr', async () => {
    const started = Date.now();
    await runProgram('/bin/sh', ['-c', 'sleep 5 & exit 0'], { env: process.env, cwd: dir, timeoutMs: 10_000 });
    assert.ok(Date.now() - started < 4000, `took ${Date.now() - started} ms`);
  });
});

describe('desktop', () => {
  test('off when notify-send is not on PATH, and says how to get it', () => {
    const s = makeSink({ type: 'desktop' }, 1, deps({ env: { PATH: dir } }));
    assert.deepEqual(s, { unavailable: 'notify-send is not on PATH (Debian/Ubuntu: apt-get install libnotify-bin)' });
    assert.deepEqual(makeSink({ type: 'desktop' }, 1, deps({ platform: 'win32' })), { unavailable: 'desktop notifications are not supported on win32' });
  });

  test('Linux: notify-send with the title and body as separate arguments after -- (no shell); critical for needs_input and failed', async () => {
    const out = join(dir, 'notify-send.txt');
    await sink({ type: 'desktop' }, deps({ env: { PATH: fakeProgram('notify-send', out) } })).send({ ...payload, reason: 'crashed; $(rm -rf /) `x`' });
    await sink({ type: 'desktop' }, deps({ env: { PATH: fakeProgram('notify-send', out) } })).send({ ...payload, event: 'succeeded', reason: '- added tests' });
    assert.equal(readFileSync(out, 'utf8'), [
      '--app-name=Overseer', '--urgency=critical', '--', 'Overseer shop: Fix "the" parser (j-1a2b) failed', 'crashed; $(rm -rf /) `x`', 'overseer logs j-1a2b', '---',
      '--app-name=Overseer', '--', 'Overseer shop: Fix "the" parser (j-1a2b) succeeded', '- added tests', 'overseer logs j-1a2b', '---', '',
    ].join('\n'));
  });

  test('macOS: osascript with the texts as escaped AppleScript strings', async () => {
    const out = join(dir, 'osascript.txt');
    await sink({ type: 'desktop' }, deps({ platform: 'darwin', env: { PATH: fakeProgram('osascript', out) } })).send({ ...payload, reason: 'a \\ b' });
    assert.equal(readFileSync(out, 'utf8'),
      `-e\ndisplay notification "a \\\\ b overseer logs j-1a2b" with title "Overseer shop: Fix \\"the\\" parser (j-1a2b) failed"\n---\n`);
  });
});

describe('Dispatcher', () => {
  /** A sink that records what it is sent, or fails when told to. */
  const recorder = (name: string, fail?: string): Sink & { got: NotifyPayload[] } => {
    const got: NotifyPayload[] = [];
    return { name, type: 'test', got, send: async (p) => { if (fail) throw new Error(fail); got.push(p); } };
  };

  test('returns before any sink runs; drain waits for them', async () => {
    const a = recorder('a');
    const d = new Dispatcher([{ sink: a, config: { type: 'desktop' } }], { perMinute: 10, repeatMs: 0 }, { now: () => 0, log: capture().log });
    d.notify(payload);
    assert.equal(a.got.length, 0, 'nothing was sent inside notify()');
    await d.drain();
    assert.deepEqual(a.got, [payload]);
  });

  test('each sink gets only its events; a failing sink is logged and counted, the others deliver', async () => {
    const { log, lines } = capture();
    const all = recorder('all');
    const onlyDone = recorder('only-done');
    const broken = recorder('broken', 'POST to http://127.0.0.1:9 failed: ECONNREFUSED');
    const d = new Dispatcher([
      { sink: all, config: { type: 'desktop', events: ['failed', 'succeeded'] } },
      { sink: onlyDone, config: { type: 'desktop', events: ['succeeded'] } },
      { sink: broken, config: { type: 'desktop' } },
    ], { perMinute: 10, repeatMs: 0 }, { now: () => 0, log });
    d.notify(payload);
    d.notify({ ...payload, event: 'succeeded', job_id: 'j-2' });
    await d.drain();
    assert.deepEqual(all.got.map((p) => p.event), ['failed', 'succeeded']);
    assert.deepEqual(onlyDone.got.map((p) => p.job_id), ['j-2']);
    const warn = lines.filter((l) => l.level === 40);
    assert.equal(warn.length, 1, JSON.stringify(lines));
    assert.equal(warn[0]!.msg, 'notification sink broken failed: POST to http://127.0.0.1:9 failed: ECONNREFUSED');
    assert.deepEqual([warn[0]!.sink, warn[0]!.event, warn[0]!.job_id], ['broken', 'failed', 'j-1a2b']);
    assert.deepEqual(d.stats().map((s) => [s.name, s.delivered, s.failed, s.dropped]), [['all', 2, 0, 0], ['only-done', 1, 0, 0], ['broken', 0, 1, 0]]);
    assert.equal(d.stats()[2]!.last_error, 'POST to http://127.0.0.1:9 failed: ECONNREFUSED');
  });

  test('rate limit per sink on the injected clock; the next delivered notice carries `suppressed`', async () => {
    let now = 1_000_000;
    const a = recorder('a');
    const d = new Dispatcher([{ sink: a, config: { type: 'desktop', events: ['failed'] } }], { perMinute: 2, repeatMs: 300_000 }, { now: () => now, log: capture().log });
    d.notify({ ...payload, job_id: 'j-1' });
    d.notify({ ...payload, job_id: 'j-1' }); // a repeat
    d.notify({ ...payload, job_id: 'j-2' });
    d.notify({ ...payload, job_id: 'j-3' }); // over 2 per minute
    d.notify({ ...payload, event: 'succeeded', job_id: 'j-4' }); // not its event: not a drop
    now += 60_000;
    d.notify({ ...payload, job_id: 'j-5' });
    await d.drain();
    assert.deepEqual(a.got.map((p) => [p.job_id, p.suppressed]), [['j-1', undefined], ['j-2', 1], ['j-5', 1]]);
    assert.equal(d.stats()[0]!.dropped, 2);
  });
});
