// What the watch draws: its lines fitted to an 80-column terminal (nothing wider, nothing
// wrapped), the header's totals and source, and the list screen rendered by ink to a string.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createElement } from 'react';
import { renderToString, Text } from 'ink';
import { buildRows } from '../../src/tui/rows.js';
import { allLines, scrollTop } from '../../src/tui/screen.js';
import { cols, duration, fit, headerLines, money, runningLines } from '../../src/tui/format.js';
import { ListScreen } from '../../src/tui/components.js';
import { floorSignature } from '../../src/tui/feed.js';
import { floor, job, NOW, request } from '../helpers/floor.js';

const long = 'x'.repeat(200);
const crowded = floor({
  totals: { running: 2, queued: 1, done: 1, failed: 1, needs_you: 1, cost_usd: 1.5, cost_unknown: true, cap: 4 },
  needs_you: [request({ request_id: 'r-1', job_id: 'j-a', title: 'Asker', text: `migrate the users table ${long}` })],
  running: [job({
    job_id: 'j-lead', title: `A very long title ${long}`, progress: 0.6, turns: 7, max_turns: 20, last_line: `editing src/${long}`,
    warnings: [{ id: 1, kind: 'stalled', detail: 'no output for 5m', raised_at: NOW }],
    lock_waits: [{ paths: ['/p/a.ts'], holders: ['j-kid'] }],
    children: [job({ job_id: 'j-kid', title: 'Kid', depth: 2, parent_id: 'j-lead' })],
  })],
  queued: [job({ job_id: 'j-q', title: 'Later', status: 'waiting', started_at: null, why_waiting: `depends on j-lead (running) ${long}` })],
  done: [job({ job_id: 'j-d', title: 'Finished', status: 'succeeded', ended_at: NOW - 1000, result_line: `all good ${long}`, branch: 'overseer/finished', diff_stat: '3 files changed, 10 insertions(+)', pr_url: 'https://example.invalid/pr/1' })],
  workflows: [{ workflow_id: 'w-1', title: 'Refactor', status: 'running', phase: 'review', cycle: 4, max_cycles: 10, milestones_done: 3, milestones_total: 5, bar: '3/5 · cycle 4 · review', current_job: 'j-lead' }],
  locks: [{ path: `/p/${long}`, holder: 'j-kid', holder_title: 'Kid', expires_at: NOW + 60_000, waiters: ['j-lead'] }],
});

describe('format', () => {
  test('durations, money, fitting', () => {
    assert.deepEqual([duration(42_000), duration(192_000), duration(14 * 60_000 + 5000), duration(7_500_000), duration(3 * 86_400_000 + 4 * 3_600_000)], ['42s', '3m12s', '14m', '2h05m', '3d04h']);
    assert.equal(money(0.01234), '$0.0123');
    assert.equal(money(12.345, true), '$12.35?');
    assert.equal(fit('abcdef', 4), 'abc…');
    assert.equal(fit('abc', 4), 'abc');
  });

  test('every line of a crowded floor fits in 80 columns (and in 40)', () => {
    for (const width of [80, 40]) {
      const lines = allLines(buildRows(crowded, { showLocks: true }), NOW, width);
      for (const l of lines) assert.ok(cols(l.text) <= width - 2, `${cols(l.text)} > ${width - 2}: ${l.text}`);
      for (const h of headerLines(crowded, NOW, width)) assert.ok(cols(h) <= width, h);
    }
  });

  test('a RUNNING row shows elapsed, turns, cost, progress, tokens, model; its detail the warning, the lock wait and the last line', () => {
    const l = runningLines(crowded.running[0]!, NOW, 120);
    assert.match(l.main, /^A very long title x+…   1m30s    7\/20t   \$0\.0123   1\.5k tok  ■■■□□ 60%       claude\/sonnet$/);
    assert.equal(cols(l.main), 120);
    assert.match(l.detail!, /^  ⚠ stalled: no output for 5m  ⏳ waits for \/p\/a\.ts \(held by j-kid\)  ↳ editing src\/x+…$/);
    const at78 = runningLines(crowded.running[0]!, NOW, 78);
    assert.match(at78.main, /^A very long title x+…   1m30s    7\/20t   \$0\.0123   1\.5k tok  ■■■□□ 60%$/, 'at 80 columns the model moves to the detail line');
    assert.match(at78.detail!, /^  claude\/sonnet  ⚠ stalled/);
    const narrow = runningLines(crowded.running[0]!, NOW, 50);
    assert.match(narrow.main, /1m30s   \$0\.0123$/, 'at 50 columns elapsed and cost stay');
  });

  test('the header says where the floor comes from: the hub with its uptime, or read-only', () => {
    const [a, b] = headerLines(crowded, NOW, 100);
    assert.equal(a, 'overseer watch · hub pid 4242 up 10m · v0.1.0');
    assert.equal(b, '2 running · 1 queued · 1 done · 1 failed · $1.50? spent · cap 4 · 1 need you');
    const [ro] = headerLines(floor({ source: 'database', hub: { url: null, pid: null, started_at: null, uptime_ms: null, version: null } }), NOW, 100);
    assert.match(ro, /no hub: read-only \(actions need a running hub\)/);
  });
});

test('a floor that changed only in what the screen does not show has the same signature', () => {
  const later = { ...crowded, at: NOW + 5000, hub: { ...crowded.hub, uptime_ms: 605_000 }, running: crowded.running.map((j) => ({ ...j, elapsed_ms: 95_000, last_event_at: NOW + 4000 })) };
  assert.equal(floorSignature(later), floorSignature(crowded));
  assert.notEqual(floorSignature({ ...crowded, running: crowded.running.map((j) => ({ ...j, turns: 8 })) }), floorSignature(crowded));
});

describe('screen', () => {
  test('the window scrolls only as far as needed to keep the selected row in view', () => {
    const lines = allLines(buildRows(crowded, { showLocks: true }), NOW, 80);
    assert.equal(scrollTop(lines, 'need:req:r-1', 4, 0), 0);
    const doneTop = scrollTop(lines, 'done:j-d', 4, 0);
    const doneLines = lines.map((l, i) => [l.key, i] as const).filter(([k]) => k === 'done:j-d').map(([, i]) => i);
    assert.ok(doneLines.every((i) => i >= doneTop && i < doneTop + 4), 'both lines of the DONE row are in view');
    assert.equal(scrollTop(lines, 'done:j-d', 4, doneTop), doneTop, 'no jump while it stays in view');
    assert.equal(scrollTop(lines, 'need:req:r-1', 4, doneTop), 0, 'back up: its heading comes along');
  });

  test('ink draws the list at 80×24: sections in order, the selected row marked, no line wider than 80', () => {
    const width = 80;
    const rows = buildRows(crowded);
    const lines = allLines(rows, NOW, width);
    const out = renderToString(createElement(ListScreen, {
      floor: crowded, source: 'hub', now: NOW, width, lines, top: 0, bodyHeight: 20, selKey: 'running:j-kid', empty: null,
      footer: createElement(Text, null, 'status'),
    }), { columns: width });
    const screen = out.split('\n');
    assert.equal(screen.length, 23, 'header 2 + body 20 + status 1: one line short of the terminal');
    for (const l of screen) assert.ok(cols(l) <= width, `wider than ${width}: ${l}`);
    const at = (re: RegExp): number => screen.findIndex((l) => re.test(l));
    assert.ok(at(/^  NEEDS YOU \(1\)/) < at(/^  RUNNING \(2\)/));
    assert.ok(at(/^  RUNNING/) < at(/^  WORKFLOWS \(1\)/));
    assert.ok(at(/^  WORKFLOWS/) < at(/^  QUEUED \/ WAITING \(1\)/));
    assert.ok(at(/^  QUEUED/) < at(/^  DONE \(1\)/));
    assert.match(screen[at(/Kid/)]!, /^▶ {3}Kid/, 'the child is indented under its parent and selected');
    assert.match(out, /■■■□□ 3\/5 · cycle 4 · review/);
    assert.doesNotMatch(out, /LOCKS/, 'locks only on request');
  });
});
