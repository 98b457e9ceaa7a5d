// A write refused by a lock mount, explained in the lock's words (src/confine/mountRefusal.ts):
// which errors count, which files they name, and that each (writer, file, holder) is told once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RefusalNotices, refusalText, refusedBy, type BoundLock } from '../../src/confine/mountRefusal.js';

const lock = (path: string, holder = 'j-a'): BoundLock => ({ path, holder, holderText: `agent ${holder} ("Holder A")`, reason: 'A owns it', until: '2026-11-28T17:00:00.000Z' });
const shared = lock('/work/t/shared.txt');
const other = lock('/work/t/src/other.ts', 'lead');

test('the errors of programs writing a read-only bind mount name the lock', () => {
  const refused = [
    "Error: EROFS: read-only file system, open 'shared.txt'",
    "OSError: [Errno 30] Read-only file system: 'shared.txt'",
    'sh: 1: cannot create shared.txt: Read-only file system',
    "mv: cannot move 'm.tmp' to 'shared.txt': Device or resource busy",
    "EBUSY: resource busy or locked, rename '/work/t/shared.txt.tmp.2.123' -> '/work/t/shared.txt'",
    "PermissionError: [Errno 30] Read-only file system: '/work/t/shared.txt'",
  ];
  for (const t of refused) assert.deepEqual(refusedBy(t, [shared, other]), [shared], t);
});

test('no refusal without the errno, and none for a file the text does not name', () => {
  assert.deepEqual(refusedBy("cat: shared.txt: No such file or directory", [shared]), []);
  assert.deepEqual(refusedBy('wrote shared.txt', [shared]), []);
  assert.deepEqual(refusedBy("sed: cannot rename ./sedX1: Device or resource busy", [shared]), [], 'a file it does not name');
  assert.deepEqual(refusedBy("EROFS: read-only file system, open 'shared.txt.bak'", [shared]), [], 'another file with the name as a prefix');
  assert.deepEqual(refusedBy("EROFS: read-only file system, open 'other.ts'", [shared, other]), [other]);
});

test('the notice says the holder, reason, expiry and how to wait', () => {
  const t = refusalText([shared]);
  assert.match(t, /refused by a file lock, not by the file system/);
  assert.match(t, /\/work\/t\/shared\.txt is held by agent j-a \("Holder A"\) for "A owns it" until 2026-11-28T17:00:00\.000Z/);
  assert.match(t, /lock_files with files \["\/work\/t\/shared\.txt"\] and a timeout_s/);
});

test('each writer is told once per file and holder; a new holder is news', () => {
  const told: string[][] = [];
  let bound = [shared];
  const n = new RefusalNotices({ bound: () => bound, tell: (w, _t, ls) => told.push([w, ...ls.map((l) => `${l.path}@${l.holder}`)]) });
  n.toolResults('j-b', ["OSError: [Errno 30] Read-only file system: 'shared.txt'"]);
  n.toolResults('j-b', ["OSError: [Errno 30] Read-only file system: 'shared.txt'"]);
  n.toolResults('j-c', ["OSError: [Errno 30] Read-only file system: 'shared.txt'"]);
  n.toolResults('j-b', ['all good']);
  bound = [lock('/work/t/shared.txt', 'j-d')];
  n.toolResults('j-b', ["OSError: [Errno 30] Read-only file system: 'shared.txt'"]);
  assert.deepEqual(told, [['j-b', '/work/t/shared.txt@j-a'], ['j-c', '/work/t/shared.txt@j-a'], ['j-b', '/work/t/shared.txt@j-d']]);
});
