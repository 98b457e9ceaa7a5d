// The watch's view model: a Floor flattened into rows, the selection that follows its item
// (not its index) while the list changes, filters, and what each key does on the selected row.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRows, move, NO_SELECTION, parseFilter, reconcile, selectedRow, type Selection } from '../../src/tui/rows.js';
import { guard, keyAction, SETTLE_MS, type Keys } from '../../src/tui/keys.js';
import { floor, job, NOW, request } from '../helpers/floor.js';

const keys = (o: Partial<Keys> = {}): Keys => ({ upArrow: false, downArrow: false, pageUp: false, pageDown: false, home: false, end: false, return: false, escape: false, ctrl: false, ...o });

const busy = floor({
  needs_you: [request({ request_id: 'r-1', job_id: 'j-a', title: 'Asker', text: 'migrate the users table' })],
  running: [job({ job_id: 'j-lead', title: 'Parent', children: [job({ job_id: 'j-kid', title: 'Kid', depth: 2, parent_id: 'j-lead', labels: ['ui'] })] }), job({ job_id: 'j-a', title: 'Asker', status: 'needs_input' })],
  queued: [job({ job_id: 'j-q', title: 'Later', status: 'queued', started_at: null, why_waiting: 'cap: 8 running' })],
  done: [job({ job_id: 'j-d', title: 'Finished', status: 'failed', failure_class: 'check_failed', ended_at: NOW - 10_000, result_line: 'tests failed' })],
});

describe('rows', () => {
  test('sections in order with headings, empty ones hidden; the RUNNING tree parents first', () => {
    const rows = buildRows(busy);
    assert.deepEqual(rows.map((r) => r.key), [
      'heading:needs_you', 'need:req:r-1',
      'heading:running', 'running:j-lead', 'running:j-kid', 'running:j-a',
      'heading:queued', 'queued:j-q',
      'heading:done', 'done:j-d',
    ]);
    assert.deepEqual(buildRows(floor()).length, 0, 'an empty floor has no rows at all');
  });

  test('locks appear only when toggled on', () => {
    const f = floor({ locks: [{ path: '/p/a.ts', holder: 'j-lead', holder_title: 'Parent', expires_at: NOW + 60_000, waiters: ['j-kid'] }] });
    assert.equal(buildRows(f).length, 0);
    assert.deepEqual(buildRows(f, { showLocks: true }).map((r) => r.key), ['heading:locks', 'lock:/p/a.ts']);
  });

  test('filters: words, label:, status: (ANDed); a matching child keeps its parent', () => {
    assert.deepEqual(parseFilter(' label:UI  status:running fix  '), { words: ['fix'], labels: ['ui'], statuses: ['running'] });
    const keysOf = (text: string): string[] => buildRows(busy, { filter: parseFilter(text) }).map((r) => r.key);
    assert.deepEqual(keysOf('label:ui'), ['heading:running', 'running:j-lead', 'running:j-kid']);
    assert.deepEqual(keysOf('status:failed'), ['heading:done', 'done:j-d']);
    assert.deepEqual(keysOf('status:check_failed'), ['heading:done', 'done:j-d'], 'a failure class counts as a status');
    assert.deepEqual(keysOf('users'), ['heading:needs_you', 'need:req:r-1'], 'words match the request text');
    assert.deepEqual(keysOf('status:approval'), ['heading:needs_you', 'need:req:r-1'], 'a NEEDS YOU item matches its kind');
    assert.deepEqual(keysOf('asker status:needs_input'), ['heading:needs_you', 'need:req:r-1', 'heading:running', 'running:j-a'], 'and the status of its job');
    assert.deepEqual(keysOf('nothing-like-this'), []);
  });
});

describe('selection', () => {
  test('starts on the first selectable row and moves over selectable rows only, clamped', () => {
    const rows = buildRows(busy);
    let sel = reconcile([], rows, NO_SELECTION, NOW);
    assert.equal(sel.key, 'need:req:r-1');
    assert.equal(sel.movedAt, null, 'a first selection is not a move');
    sel = move(rows, sel, 1);
    assert.equal(sel.key, 'running:j-lead', 'the heading between is skipped');
    sel = move(rows, sel, -5);
    assert.equal(sel.key, 'need:req:r-1');
    sel = move(rows, sel, Infinity);
    assert.equal(sel.key, 'done:j-d');
  });

  test('stays on the same item when rows are inserted above it or reordered', () => {
    const before = buildRows(busy);
    const sel: Selection = { key: 'running:j-a', movedAt: null };
    const more = floor({ ...busy, needs_you: [request({ request_id: 'r-0', job_id: 'j-x' }), ...busy.needs_you], running: [busy.running[1]!, busy.running[0]!] });
    const after = buildRows(more);
    assert.notEqual(after.findIndex((r) => r.key === 'running:j-a'), before.findIndex((r) => r.key === 'running:j-a'), 'its index changed');
    const next = reconcile(before, after, sel, NOW);
    assert.deepEqual(next, sel, 'same key, not marked as moved');
    assert.equal(selectedRow(after, next)?.kind, 'job');
  });

  test('when its item goes, it moves to the nearest surviving neighbour (below first) and records when', () => {
    const before = buildRows(busy);
    const gone = floor({ ...busy, needs_you: [] , running: [busy.running[0]!] });
    const next = reconcile(before, buildRows(gone), { key: 'running:j-a', movedAt: null }, NOW);
    assert.deepEqual(next, { key: 'queued:j-q', movedAt: NOW });
    const lastGone = reconcile(before, buildRows(floor({ ...busy, done: [] })), { key: 'done:j-d', movedAt: null }, NOW);
    assert.deepEqual(lastGone, { key: 'queued:j-q', movedAt: NOW }, 'the last row gone: the one above');
    assert.deepEqual(reconcile(before, [], { key: 'done:j-d', movedAt: null }, NOW), { key: null, movedAt: NOW });
  });
});

describe('keys', () => {
  const rows = buildRows(busy);
  const on = (key: string) => rows.find((r) => r.key === key);

  test('a and r answer the selected request by its id; enter answers a question', () => {
    assert.deepEqual(keyAction('a', keys(), on('need:req:r-1')), { kind: 'approve', req: { request_id: 'r-1', job_id: 'j-a', title: 'Asker', kind: 'approval' } });
    assert.equal(keyAction('r', keys(), on('need:req:r-1')).kind, 'reject');
    const q = buildRows(floor({ needs_you: [request({ request_id: 'r-q', job_id: 'j-a', kind: 'question' })] }))[1];
    assert.equal(keyAction('', keys({ return: true }), q).kind, 'answer');
    assert.match((keyAction('a', keys(), q) as { message: string }).message, /question: press enter/);
    assert.match((keyAction('a', keys(), on('running:j-a')) as { message: string }).message, /select one in NEEDS YOU/);
  });

  test('job keys act on the selected row\'s job id', () => {
    const j = on('running:j-kid');
    const expect = { job_id: 'j-kid', title: 'Kid' };
    assert.deepEqual(keyAction('m', keys(), j), { kind: 'message', job: expect });
    assert.deepEqual(keyAction('p', keys(), j), { kind: 'pause', job: expect });
    assert.deepEqual(keyAction('P', keys(), j), { kind: 'stop', job: expect });
    assert.deepEqual(keyAction('u', keys(), j), { kind: 'resume', job: expect });
    assert.deepEqual(keyAction('c', keys(), j), { kind: 'cancel', job: expect });
    assert.deepEqual(keyAction('f', keys(), j), { kind: 'follow', job: expect });
    assert.deepEqual(keyAction('', keys({ return: true }), j), { kind: 'follow', job: expect });
    assert.deepEqual(keyAction('d', keys(), j), { kind: 'diff', job: expect });
    assert.deepEqual(keyAction('c', keys(), on('need:req:r-1')), { kind: 'cancel', job: { job_id: 'j-a', title: 'Asker' } }, 'a request row acts on its agent');
    assert.equal(keyAction('c', keys(), undefined).kind, 'refuse');
  });

  test('navigation and screen keys', () => {
    assert.deepEqual(keyAction('j', keys(), undefined), { kind: 'move', delta: 1 });
    assert.deepEqual(keyAction('', keys({ upArrow: true }), undefined), { kind: 'move', delta: -1 });
    assert.equal(keyAction('q', keys(), undefined).kind, 'quit');
    assert.equal(keyAction('?', keys(), undefined).kind, 'help');
    assert.equal(keyAction('/', keys(), undefined).kind, 'filter');
    assert.equal(keyAction('l', keys(), undefined).kind, 'toggle_locks');
    assert.equal(keyAction('z', keys(), on('running:j-kid')).kind, 'none');
  });

  test('an acting key right after the selection moved by itself is refused; moving on purpose clears it', () => {
    const a = keyAction('c', keys(), on('queued:j-q'));
    const moved: Selection = { key: 'queued:j-q', movedAt: NOW };
    assert.equal(guard(a, moved, NOW + 50).kind, 'refuse');
    assert.equal(guard(a, moved, NOW + SETTLE_MS).kind, 'cancel');
    assert.equal(guard(keyAction('f', keys(), on('queued:j-q')), moved, NOW + 50).kind, 'follow', 'looking is always allowed');
    assert.equal(move(rows, moved, 0).movedAt, null);
  });
});
