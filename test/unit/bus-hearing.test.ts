// Who hears what on the bus (src/services/bus.ts; docs/decisions.md "Events across hubs"): by
// default a subscriber hears only this hub's events; `remote: true` this hub's and the others';
// `remote: 'only'` the others' alone. A resync runs each remote subscriber's re-read once, however
// many events it subscribed with one function, and never after it unsubscribed. The relay's tap
// sees every local emit, also when a subscriber throws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Bus } from '../../src/services/bus.js';

const fail = (err: unknown): never => { throw err; };

test('local, remote and remote-only subscribers each hear what they asked for', () => {
  const bus = new Bus();
  const heard: string[] = [];
  bus.on('job', (e) => void heard.push(`local ${e.jobId}`));
  bus.on('job', (e) => void heard.push(`both ${e.jobId}`), { remote: true, resync: null });
  bus.on('job', (e) => void heard.push(`only ${e.jobId}`), { remote: 'only', resync: null });
  bus.emit('job', { jobId: 'here', status: 'running' });
  bus.emitRemote('job', { jobId: 'there', status: 'running' }, fail);
  assert.deepEqual(heard, ['local here', 'both here', 'both there', 'only there']);
});

test('a resync runs each re-read once, and no more after unsubscribing; a failing one goes to onError', async () => {
  const bus = new Bus();
  let rechecks = 0;
  const recheck = (): void => void rechecks++;
  const offs = (['job', 'note', 'lock'] as const).map((e) => bus.on(e, recheck, { remote: true, resync: recheck }));
  bus.on('run', () => undefined, { remote: true, resync: null });
  const errors: unknown[] = [];
  const offBad = bus.on('request', () => undefined, { remote: true, resync: async () => { throw new Error('boom'); } });
  bus.resync((err) => errors.push(err));
  assert.equal(rechecks, 1, 'one function subscribed for three events re-checks once');
  await new Promise((r) => setImmediate(r));
  assert.equal((errors[0] as Error | undefined)?.message, 'boom');
  offs.forEach((off) => off());
  offBad();
  bus.resync(fail);
  assert.equal(rechecks, 1, 'unsubscribed: no re-read');
  bus.emitRemote('job', { jobId: 'x', status: 'queued' }, fail);
  assert.equal(rechecks, 1, 'unsubscribed: no remote event either');
});

test('the tap sees every local emit, never a remote one, and also when a subscriber throws', async () => {
  const bus = new Bus();
  const tapped: string[] = [];
  const untap = bus.tap((name) => void tapped.push(name));
  bus.on('lock', () => { throw new Error('subscriber failed'); });
  assert.throws(() => bus.emit('lock', { holder: 'j' }), /subscriber failed/);
  await bus.emitSettled('job', { jobId: 'j', status: 'succeeded' }, fail);
  bus.emitRemote('note', { key: 'k', version: 1 }, fail);
  untap();
  bus.emit('note', { key: 'k', version: 2 });
  assert.deepEqual(tapped, ['lock', 'job']);
});
