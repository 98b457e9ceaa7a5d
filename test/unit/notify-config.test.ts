// The `notify` configuration (src/floor/notify/schema.ts through loadConfigFrom): what it accepts,
// its defaults, and readable errors that name the sink's path, the bad value and the fix.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfigFrom } from '../../src/config.js';
import { InvalidInputError } from '../../src/errors.js';

function invalid(notify: unknown): string {
  try {
    loadConfigFrom({ home: '/s', notify });
  } catch (err) {
    assert.ok(err instanceof InvalidInputError, String(err));
    return err.message;
  }
  assert.fail(`accepted ${JSON.stringify(notify)}`);
}

describe('notify config', () => {
  test('every sink type, with names, events and rates', () => {
    const c = loadConfigFrom({
      home: '/s',
      notify: {
        sinks: [
          { type: 'desktop' },
          { type: 'webhook', url: 'https://example.com/hook', events: ['failed', 'succeeded'] },
          { type: 'slack', url: 'http://127.0.0.1:9/x', name: 'team' },
          { type: 'command', argv: ['/usr/local/bin/page-me', '--loud'], events: ['needs_input'] },
        ],
        rate: { perMinute: 20 },
      },
    });
    assert.equal(c.notify.sinks.length, 4);
    assert.deepEqual(c.notify.sinks[1], { type: 'webhook', url: 'https://example.com/hook', events: ['failed', 'succeeded'] });
    assert.deepEqual(c.notify.rate, { perMinute: 20, repeatS: 300 });
  });

  test('OVERSEER_NOTIFY holds JSON text', () => {
    const c = loadConfigFrom({ home: '/s', notify: '{"sinks":[{"type":"desktop","events":["stalled"]}]}' });
    assert.deepEqual(c.notify.sinks, [{ type: 'desktop', events: ['stalled'] }]);
  });

  test('an unknown sink type names the sink, the env var and the types there are', () => {
    const msg = invalid({ sinks: [{ type: 'desktop' }, { type: 'pager', url: 'https://x' }] });
    assert.match(msg, /notify\.sinks\.1\.type \(env OVERSEER_NOTIFY\) = "pager": type must be one of desktop, webhook, slack, command/);
  });

  test('a URL that is not http(s), or not a URL, or missing', () => {
    assert.match(invalid({ sinks: [{ type: 'webhook', url: 'ftp://example.com/x' }] }), /notify\.sinks\.0\.url \(env OVERSEER_NOTIFY\) = "ftp:\/\/example\.com\/x": must be an http:\/\/ or https:\/\/ URL/);
    assert.match(invalid({ sinks: [{ type: 'slack', url: 'hooks.slack.com/services/T0' }] }), /notify\.sinks\.0\.url .*= "hooks\.slack\.com\/services\/T0": must be an http/);
    assert.match(invalid({ sinks: [{ type: 'slack' }] }), /notify\.sinks\.0\.url .*= \(missing\): Required/);
  });

  test('the value is found inside the JSON text of the environment variable too', () => {
    assert.match(invalid('{"sinks":[{"type":"webhook","url":"file:///etc/passwd"}]}'), /notify\.sinks\.0\.url \(env OVERSEER_NOTIFY\) = "file:\/\/\/etc\/passwd"/);
  });

  test('an unknown key in a sink says which keys that sink takes', () => {
    assert.match(invalid({ sinks: [{ type: 'webhook', url: 'https://x.test', headers: {} }] }), /notify\.sinks\.0 \(env OVERSEER_NOTIFY\): "headers": unknown key: this sink takes only type, url, name, events/);
    assert.match(invalid({ sinks: [], rates: {} }), /notify \(env OVERSEER_NOTIFY\): "rates": unknown key: notify takes only sinks, rate/);
  });

  test('events: known names, at least one, none twice', () => {
    assert.match(invalid({ sinks: [{ type: 'desktop', events: ['failed', 'exploded'] }] }), /notify\.sinks\.0\.events\.1 .*= "exploded": events must be some of needs_input, failed, succeeded/);
    assert.match(invalid({ sinks: [{ type: 'desktop', events: [] }] }), /notify\.sinks\.0\.events .*= \[\]: list at least one event/);
    assert.match(invalid({ sinks: [{ type: 'desktop', events: ['failed', 'failed'] }] }), /an event is listed twice/);
  });

  test('command: argv with the program first, no empty element', () => {
    assert.match(invalid({ sinks: [{ type: 'command', argv: [] }] }), /notify\.sinks\.0\.argv .*= \[\]: argv needs at least the program/);
    assert.match(invalid({ sinks: [{ type: 'command', argv: ['x', ''] }] }), /notify\.sinks\.0\.argv\.1 .*: an argv element is empty/);
    assert.match(invalid({ sinks: [{ type: 'command', argv: 'notify.sh' }] }), /notify\.sinks\.0\.argv .*= "notify\.sh": Expected array/);
  });

  test('sink names are unique; rates are bounded whole numbers', () => {
    assert.match(invalid({ sinks: [{ type: 'desktop', name: 'me' }, { type: 'slack', url: 'https://x.test', name: 'me' }] }), /notify\.sinks\.1\.name .*= "me": two sinks are named "me"/);
    assert.match(invalid({ rate: { perMinute: 0 } }), /notify\.rate\.perMinute .*= 0: Number must be greater than or equal to 1/);
    assert.match(invalid({ rate: { repeatS: 1.5 } }), /notify\.rate\.repeatS .*= 1\.5: Expected integer/);
  });

  test('text that is not JSON is reported as such', () => {
    assert.match(invalid('sinks=desktop'), /notify \(env OVERSEER_NOTIFY\) = "sinks=desktop": Expected object, received string/);
  });
});
