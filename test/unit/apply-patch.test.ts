// applyPatchTargets on Codex apply_patch bodies (docs/cli-facts.md X6).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatchTargets } from '../../src/domain/applyPatch.js';

describe('applyPatchTargets', () => {
  test('multi-file patch: add, update, delete in order', () => {
    const patch = [
      '*** Begin Patch',
      '*** Add File: src/new.ts',
      '+export const x = 1;',
      '*** Update File: src/old.ts',
      '@@ function f()',
      '-  return 1;',
      '+  return 2;',
      '*** Delete File: src/gone.ts',
      '*** End Patch',
      '',
    ].join('\n');
    assert.deepEqual(applyPatchTargets(patch), ['src/new.ts', 'src/old.ts', 'src/gone.ts']);
  });
  test('move: both the source and the destination', () => {
    const patch = '*** Begin Patch\n*** Update File: a/old.ts\n*** Move to: b/new.ts\n@@\n-x\n+y\n*** End Patch';
    assert.deepEqual(applyPatchTargets(patch), ['a/old.ts', 'b/new.ts']);
  });
  test('the verified hook input of docs/cli-facts.md X6', () => {
    assert.deepEqual(applyPatchTargets('*** Begin Patch\n*** Add File: locked.txt\n+hello from patch\n*** End Patch\n'), ['locked.txt']);
  });
  test('CRLF line endings', () => {
    assert.deepEqual(applyPatchTargets('*** Begin Patch\r\n*** Update File: a.ts\r\n+x\r\n*** Delete File: b.ts\r\n*** End Patch\r\n'), ['a.ts', 'b.ts']);
  });
  test('leading and trailing spaces trimmed', () => {
    assert.deepEqual(applyPatchTargets('  *** Add File:   spaced.ts  \n\t*** Delete File: tabbed.ts'), ['spaced.ts', 'tabbed.ts']);
  });
  test('paths with spaces and absolute paths are kept as written', () => {
    assert.deepEqual(applyPatchTargets('*** Add File: docs/a b.md\n*** Update File: /abs/x.ts'), ['docs/a b.md', '/abs/x.ts']);
  });
  test('deduplicated, first occurrence wins the order', () => {
    assert.deepEqual(applyPatchTargets('*** Update File: a\n*** Update File: b\n*** Delete File: a'), ['a', 'b']);
  });
  test('no headers → []', () => {
    assert.deepEqual(applyPatchTargets(''), []);
    assert.deepEqual(applyPatchTargets('*** Begin Patch\n*** End Patch'), []);
    assert.deepEqual(applyPatchTargets('echo hi > x'), []);
    assert.deepEqual(applyPatchTargets('*** Add File:\n*** Update File:   '), []);
    assert.deepEqual(applyPatchTargets('+*** Add File: inside-content.ts'), []);
  });
});
