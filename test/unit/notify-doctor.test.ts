// `overseer doctor`'s notifications line (src/floor/notify/doctor.ts): off, every sink and where
// it goes (never a URL's secret path), and a warning for a sink that cannot work here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigFrom } from '../../src/config.js';
import { checkNotify } from '../../src/floor/notify/doctor.js';

const cfg = (notify: unknown) => loadConfigFrom({ home: '/s', notify });

test('no sinks: ok, off', () => {
  assert.deepEqual(checkNotify(cfg({}), { env: {}, platform: 'linux' }), { name: 'notifications', status: 'ok', detail: 'off: no sinks configured (config key notify, docs/notifications.md)' });
});

test('every sink with its events; URLs by origin only', () => {
  const c = checkNotify(cfg({ sinks: [
    { type: 'slack', name: 'team', url: 'https://hooks.slack.com/services/T0/B0/s3cret' },
    { type: 'webhook', url: 'http://127.0.0.1:8080/hook?token=s3cret', events: ['succeeded'] },
    { type: 'command', argv: ['page-me', '--loud'], events: ['needs_input'] },
    { type: 'desktop', events: ['failed'] },
  ], rate: { perMinute: 3 } }), { env: {}, platform: 'linux', which: (n) => `/usr/bin/${n}` });
  assert.equal(c.status, 'ok');
  assert.equal(c.detail, '4 sinks, at most 3 a minute each: '
    + 'team: slack to https://hooks.slack.com (needs_input, failed, workflow_blocked, workflow_done, stalled, budget_high, limited); '
    + 'webhook[1]: webhook to http://127.0.0.1:8080 (succeeded); command[2]: command /usr/bin/page-me (needs_input); desktop[3]: desktop via /usr/bin/notify-send (failed)');
  assert.doesNotMatch(JSON.stringify(c), /s3cret/);
});

test('a desktop sink without notify-send, a command that is not there: warn, saying which and what to do', () => {
  const c = checkNotify(cfg({ sinks: [{ type: 'desktop' }, { type: 'command', argv: ['/nonexistent/page-me'] }] }), { env: {}, platform: 'linux', which: () => undefined });
  assert.equal(c.status, 'warn');
  assert.match(c.detail, /; but desktop\[0\]: notify-send is not on PATH, so this sink is off; command\[1\]: \/nonexistent\/page-me is not an executable file$/);
  assert.match(c.fix!, /apt-get install libnotify-bin/);
  assert.equal(checkNotify(undefined, { env: {}, platform: 'linux' }).status, 'warn');
});
