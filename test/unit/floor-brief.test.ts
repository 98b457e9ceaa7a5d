// The crew brief on the floor and in watch: the model's field (null when cleared), the header's
// third line cut to the width, the whole text wrapped for its screen, and the key that opens it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createElement } from 'react';
import { renderToString, Text } from 'ink';
import { buildFloor, type FloorInput } from '../../src/floor/model.js';
import { briefLine, cols, wrapText } from '../../src/tui/format.js';
import { ListScreen } from '../../src/tui/components.js';
import { keyAction } from '../../src/tui/keys.js';
import { floor, NOW } from '../helpers/floor.js';

const input = (o: Partial<FloorInput>): FloorInput => ({ jobs: [], requests: [], warnings: [], workflows: [], milestones: [], locks: [], lockWaits: [], deps: [], hub: null, cap: 8, source: 'database', ...o });
const brief = { text: `Use pnpm. Never touch migrations/.\nAsk before adding a dependency. ${'x'.repeat(150)}`, version: 3, set_by: 'person' as const, set_at: NOW - 60_000 };

describe('the crew brief on the floor', () => {
  test('the model carries the row as it is; a cleared brief (text null) or none is null', () => {
    assert.deepEqual(buildFloor(input({ brief: { ...brief } }), NOW).brief, brief);
    assert.equal(buildFloor(input({ brief: { text: null, version: 4, set_by: 'lead', set_at: NOW } }), NOW).brief, null);
    assert.equal(buildFloor(input({}), NOW).brief, null);
  });

  test('watch: one line under the totals, cut to the width; none without a brief', () => {
    for (const width of [80, 50]) {
      const line = briefLine(brief, width);
      assert.ok(cols(line) <= width, line);
      assert.match(line, /^crew brief v3 \(the person, i shows all\): /);
      assert.ok(line.endsWith('…'), 'cut, and says so');
    }
    const screen = (f: ReturnType<typeof floor>) => renderToString(createElement(ListScreen, {
      floor: f, source: 'hub', now: NOW, width: 80, lines: [], top: 0, bodyHeight: 5, selKey: null, empty: 'nothing', footer: createElement(Text, null, 'status'),
    }), { columns: 80 }).split('\n');
    const withBrief = screen(floor({ brief }));
    assert.match(withBrief[2]!, /^crew brief v3 \(the person, i shows all\): Use pnpm\. Never touch migrations\/\. Ask/);
    assert.ok(withBrief[2]!.endsWith('…'), 'cut to the width');
    assert.equal(screen(floor({ brief: null })).some((l) => /crew brief/.test(l)), false);
  });

  test('i opens it whole: every word, its lines kept, nothing wider than the screen', () => {
    assert.deepEqual(keyAction('i', {} as never, undefined), { kind: 'brief' });
    const lines = wrapText(brief.text, 30);
    for (const l of lines) assert.ok(cols(l) <= 30, l);
    assert.equal(lines[0], 'Use pnpm. Never touch');
    assert.equal(lines.join('').replace(/\s+/g, ''), brief.text.replace(/\s+/g, ''), 'nothing lost');
    assert.deepEqual(lines.slice(1, 3), ['migrations/.', 'Ask before adding a'], 'its own line break kept');
  });
});
