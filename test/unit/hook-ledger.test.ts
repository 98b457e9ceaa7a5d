// The hook_bypassed backstop's ledger (src/confine/hookLedger.ts): which tool results ran without
// a hook decision.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HookLedger } from '../../src/confine/hookLedger.js';

test('a guarded tool whose call the hook decided on is fine; one it never saw is unguarded', () => {
  const l = new HookLedger();
  l.note('j-1', 'toolu_1');
  const r = l.unguarded('j-1', [
    { toolUseId: 'toolu_1', name: 'Write', isError: false, text: 'ok' },
    { toolUseId: 'toolu_2', name: 'Bash', isError: false, text: 'ok' },
    { toolUseId: 'toolu_3', name: 'mcp__overseer__finish', isError: false, text: 'ok' },
    { toolUseId: 'toolu_4', name: undefined, isError: false, text: 'ok' },
  ]);
  assert.deepEqual(r.map((x) => x.toolUseId), ['toolu_2'], 'only the guarded call with no decision; unguarded tools and unknown names are not judged');
});

test('a call refused before any hook (a permission rule) never ran: not a bypass; a Bash that failed did run', () => {
  const l = new HookLedger();
  const r = l.unguarded('j-2', [
    { toolUseId: 'a', name: 'Read', isError: true, text: 'File is in a directory that is denied by your permission settings.' },
    { toolUseId: 'b', name: 'Bash', isError: true, text: 'Permission to use Bash with command rm x has been denied.' },
    { toolUseId: 'c', name: 'Bash', isError: true, text: 'Exit code 1\nwrote half of it' },
  ]);
  assert.deepEqual(r.map((x) => x.toolUseId), ['c']);
});

test('decisions are per job and forgotten when the job ends', () => {
  const l = new HookLedger();
  l.note('j-3', 'x');
  assert.equal(l.unguarded('j-4', [{ toolUseId: 'x', name: 'Edit', isError: false, text: '' }]).length, 1, 'another job\'s decision does not count');
  l.forget('j-3');
  assert.equal(l.unguarded('j-3', [{ toolUseId: 'x', name: 'Edit', isError: false, text: '' }]).length, 1);
});
