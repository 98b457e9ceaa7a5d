// The watch's READY TO SHIP block and a request's detail pane (src/tui/rows.ts, keys.ts,
// detail.ts, screen.ts), pure: where the block sits, what its rows show, what s / x / t do on
// it and elsewhere, and the plan's labelled sections under the selected request only.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildRows, parseFilter } from '../../src/tui/rows.js';
import { keyAction, type Keys } from '../../src/tui/keys.js';
import { allLines } from '../../src/tui/screen.js';
import type { Floor, NeedsYouItem, ShipItem } from '../../src/floor/types.js';

const keys = (o: Partial<Keys> = {}): Keys => ({ upArrow: false, downArrow: false, pageUp: false, pageDown: false, home: false, end: false, return: false, escape: false, ctrl: false, ...o });
const NOW = 1_800_000_000_000;

const item = (id: string, o: Partial<ShipItem> = {}): ShipItem => ({
  job_id: id, title: `Ship ${id}`, status: 'succeeded', branch: `overseer/${id}`, repo_root: '/r', diff_stat: '2 files changed, 5 insertions(+)', checks: 'passed',
  check_names: ['command:npm test'], check_detail: null, overlaps: [], ended_at: NOW - 180_000, age_ms: 180_000, project: null, command: `overseer merge ${id}`, send_back: null, role: null, ...o,
});
const approval: NeedsYouItem = {
  kind: 'approval', key: 'req:r-1', job_id: 'j-1', title: 'Pusher', text: 'push fix/login', request_id: 'r-1', at: NOW, command: 'overseer respond r-1', who: 'any',
  summary: 'push fix/login', plan: { rationale: 'CI needs the branch', resources: ['origin', 'fix/login'], risks: 'a force push', rollback: 'git push origin :fix/login' },
};
const floor = (o: Partial<Floor>): Floor => ({
  at: NOW, source: 'hub', hub: { url: null, pid: null, started_at: null, uptime_ms: null, version: null },
  totals: { running: 0, queued: 0, done: 0, failed: 0, needs_you: 0, cost_usd: 0, cost_unknown: false, cap: 8 },
  needs_you: [], running: [], queued: [], done: [], workflows: [], locks: [], ...o,
});

describe('READY TO SHIP in watch', () => {
  const f = floor({ needs_you: [approval], ready_to_ship: [item('j-a'), item('j-b', { checks: 'failed', status: 'failed', check_detail: 'completion checks failed: npm test', overlaps: [{ job_id: 'j-a', title: 'Ship j-a', files: ['x.ts'] }] })] });
  const rows = buildRows(f);
  const on = (key: string) => rows.find((r) => r.key === key);

  test('a block between NEEDS YOU and RUNNING, one row per branch with branch, checks, age, diff stat, overlaps', () => {
    assert.deepEqual(rows.filter((r) => r.kind === 'heading').map((r) => r.key), ['heading:needs_you', 'heading:ship']);
    const text = allLines(rows, NOW, 120).map((l) => l.text).join('\n');
    assert.match(text, /READY TO SHIP \(2\)/);
    assert.match(text, /⇪ Ship j-a {2}⎇ overseer\/j-a {2}checks ✓ passed {2}ended 3m00s ago {2}j-a/);
    assert.match(text, /2 files changed, 5 insertions\(\+\)/);
    assert.match(text, /checks ✗ FAILED.*\n.*completion checks failed: npm test · overlaps j-a \(x\.ts\)/);
    assert.deepEqual(buildRows(f, { filter: parseFilter('status:checks_failed') }).filter((r) => r.kind === 'ship').map((r) => r.key), ['ship:j-b']);
  });

  test('s ships (after y/n in the app), x dismisses, t takes over its agent, d is the diff; a failed check is refused; s elsewhere is refused', () => {
    assert.deepEqual(keyAction('s', keys(), on('ship:j-a')), { kind: 'ship', job: { job_id: 'j-a', title: 'Ship j-a' }, branch: 'overseer/j-a' });
    assert.deepEqual(keyAction('x', keys(), on('ship:j-b')), { kind: 'dismiss', job: { job_id: 'j-b', title: 'Ship j-b' }, branch: 'overseer/j-b' });
    assert.deepEqual(keyAction('t', keys(), on('ship:j-a')), { kind: 'attach', job: { job_id: 'j-a', title: 'Ship j-a' } });
    assert.deepEqual(keyAction('d', keys(), on('ship:j-a')), { kind: 'diff', job: { job_id: 'j-a', title: 'Ship j-a' } });
    const refused = keyAction('s', keys(), on('ship:j-b'));
    assert.equal(refused.kind, 'refuse');
    assert.match((refused as { message: string }).message, /not shipped: the checks of "Ship j-b" \(j-b\) failed \(completion checks failed: npm test\); a branch whose checks did not pass is never merged/);
    assert.deepEqual(keyAction('s', keys(), on('need:req:r-1')), { kind: 'refuse', message: 's ships a finished branch: select one in READY TO SHIP' });
  });
});

describe('send back on a READY TO SHIP row in watch', () => {
  const failed = { round: 1, max: 2, status: 'failed', reason: 'conflict', sendable: true, request_id: null };
  const f = floor({ ready_to_ship: [item('j-c', { send_back: failed, role: 'reviewer' }), item('j-d'), item('j-e', { send_back: { ...failed, round: 2, status: 'asked', sendable: false, request_id: 'r-9' } })] });
  const rows = buildRows(f);
  const on = (key: string) => rows.find((r) => r.key === key);

  test('b sends back a row with a failed merge on record; refused with no failed merge, or at the bound; shown with its round x/max and its role', () => {
    assert.deepEqual(keyAction('b', keys(), on('ship:j-c')), { kind: 'send_back', job: { job_id: 'j-c', title: 'Ship j-c' }, branch: 'overseer/j-c' });
    const none = keyAction('b', keys(), on('ship:j-d'));
    assert.equal(none.kind, 'refuse');
    assert.match((none as { message: string }).message, /not sent back: "Ship j-d" \(j-d\) has no failed merge to send back; ship it first/);
    const asked = keyAction('b', keys(), on('ship:j-e'));
    assert.match((asked as { message: string }).message, /its send-back is asked/);
    assert.deepEqual(keyAction('b', keys(), undefined), { kind: 'refuse', message: 'b sends back a finished branch: select one in READY TO SHIP' });
    const text = allLines(rows, NOW, 140).map((l) => l.text).join('\n');
    assert.match(text, /⇪ Ship j-c {2}\[reviewer\] {2}⎇ overseer\/j-c/);
    assert.match(text, /merge conflicted · sent back 1\/2 · b sends it back/);
    assert.match(text, /sent back 2\/2: the bound, the person decides \(r-9\)/);
  });
});

describe('a request\'s detail pane in watch', () => {
  test('the selected approval shows its plan\'s four labelled sections under it; not selected, only its line', () => {
    const f = floor({ needs_you: [approval, { ...approval, key: 'req:r-2', request_id: 'r-2', kind: 'question', plan: undefined, options: ['red', 'blue'] }] });
    const rows = buildRows(f);
    const shown = allLines(rows, NOW, 100, 'need:req:r-1').map((l) => l.text);
    const at = shown.findIndex((l) => /push fix\/login/.test(l));
    assert.deepEqual(shown.slice(at + 1, at + 6), [
      '    rationale CI needs the branch',
      '    resources • origin',
      '              • fix/login',
      '    risks     a force push',
      '    rollback  git push origin :fix/login',
    ]);
    assert.ok(!allLines(rows, NOW, 100, null).some((l) => /rationale/.test(l.text)), 'no pane without the selection');
    assert.ok(allLines(rows, NOW, 100, 'need:req:r-2').some((l) => l.text === '    options   red · blue'), 'a question\'s options');
  });
});
