// Unit: the node flags a background hub is started with (src/hubproc/spawn.ts): the memory flags
// come first, a flag the user already gave (command line or NODE_OPTIONS) is left to the user,
// and this process's own arguments (e.g. --import tsx) are passed on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HUB_NODE_FLAGS, hubNodeArgs } from '../../src/hubproc/spawn.js';

test('a hub gets the memory flags, then the parent\'s own node arguments', () => {
  assert.ok(HUB_NODE_FLAGS.includes('--max-semi-space-size=1'));
  assert.deepEqual(hubNodeArgs(['--import', 'tsx'], ''), [...HUB_NODE_FLAGS, '--import', 'tsx']);
});

test('a flag the user set on the command line or in NODE_OPTIONS wins', () => {
  assert.deepEqual(hubNodeArgs(['--max-semi-space-size=16'], ''), ['--max-semi-space-size=16']);
  assert.deepEqual(hubNodeArgs([], '--max_semi_space_size=8 --enable-source-maps'), []);
});
