import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQueueName, place, placementLabels, queueName, serves, type WorkerSeat } from '../../src/domain/placement.js';

const gpu: WorkerSeat = { name: 'gpu-box', labels: ['big-disk', 'gpu'], clis: { claude: '2.0' }, live: true };
const plain: WorkerSeat = { name: 'w2', labels: [], clis: { claude: '2.0', codex: '0.5' }, live: true };
const ask = (o: Partial<Parameters<typeof place>[0]> = {}) => ({ cli: 'claude', labels: [], portable: true, ...o });

test('labels with a colon and the hub\'s own tags never place a job', () => {
  assert.deepEqual(placementLabels(['run:1', 'gpu', 'team:api', 'workflow', 'gpu', 'a']), ['a', 'gpu']);
});

test('no worker registered: the hub\'s machine, labels are tags, a host is refused', () => {
  assert.deepEqual(place(ask({ labels: ['gpu'] }), []), { where: 'hub' });
  const r = place(ask({ host: 'gpu-box' }), []);
  assert.equal(r.where, 'refused');
  assert.match((r as { message: string }).message, /no worker host is registered/);
});

test('with workers: a portable job goes to any worker with the CLI; one that cannot leave stays', () => {
  assert.deepEqual(place(ask(), [gpu, plain]), { where: 'queue', queue: 'att_claude', host: null, labels: [] });
  assert.deepEqual(place(ask({ portable: false }), [gpu, plain]), { where: 'hub' });
  assert.deepEqual(place(ask({ cli: 'codex' }), [gpu]), { where: 'hub' });
  assert.deepEqual(place(ask(), [{ ...plain, live: false }]), { where: 'hub' });
});

test('labels and host place the job; unknown ones are refused naming the workers', () => {
  const r = place(ask({ labels: ['gpu', 'team:x'] }), [gpu, plain]);
  assert.deepEqual(r, { where: 'queue', queue: 'att_claude__l_gpu', host: null, labels: ['gpu'] });
  const bad = place(ask({ labels: ['tpu'] }), [gpu, plain]);
  assert.equal(bad.where, 'refused');
  assert.match((bad as { message: string }).message, /no registered worker has the label "tpu".*gpu-box \(live; labels big-disk,gpu; CLIs claude\); w2/);
  const host = place(ask({ host: 'nope' }), [gpu, plain]);
  assert.match((host as { message: string }).message, /host "nope" is not a registered worker; the workers are: gpu-box/);
  assert.match((place(ask({ host: 'w2', labels: ['gpu'] }), [gpu, plain]) as { message: string }).message, /no registered worker named "w2" has all of the labels "gpu"/);
  assert.match((place(ask({ cli: 'codex', labels: ['gpu'] }), [gpu, plain]) as { message: string }).message, /no worker that fits has the codex CLI/);
  assert.match((place(ask({ portable: false, labels: ['gpu'] }), [gpu]) as { message: string }).message, /worktree: true/);
  // a registered worker that is not live still places: the job waits in its queue
  assert.equal(place(ask({ host: 'gpu-box' }), [{ ...gpu, live: false }]).where, 'queue');
});

test('queue names round-trip and say who may serve them', () => {
  const q = queueName('claude', 'gpu-box', ['gpu', 'big-disk']);
  assert.match(q, /^[A-Za-z0-9_-]+$/);
  assert.deepEqual(parseQueueName(q), { cli: 'claude', host: 'gpu-box', labels: ['big-disk', 'gpu'] });
  assert.equal(parseQueueName('something_else'), undefined);
  assert.equal(serves(gpu, q), true);
  assert.equal(serves(plain, q), false);
  assert.equal(serves(plain, 'att_codex'), true);
  assert.equal(serves(gpu, 'att_codex'), false, 'a worker without the CLI never takes the job');
  assert.equal(serves(gpu, queueName('claude', null, ['gpu'])), true);
  assert.equal(serves({ ...gpu, name: 'other' }, q), false);
});
