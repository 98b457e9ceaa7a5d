// Unit: the CLI's option checks and exit-code mapping: `--tail abc` / `--limit -1` / `1.5` are
// usage errors naming the option; commander's errors are usage errors except help/version. (The
// job-id prefix lookup is tested on both databases: test/integration/sql-cli.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CommanderError } from 'commander';
import { intOption, choiceOption } from '../../src/cli/args.js';
import { CliError, UsageError, describeFailure } from '../../src/cli/errors.js';
import { InvalidInputError, NotFoundError } from '../../src/errors.js';

test('intOption accepts whole numbers in range and refuses everything else with the option named', () => {
  assert.equal(intOption('tail', undefined, 1, 10), undefined);
  assert.equal(intOption('tail', '7', 1, 10), 7);
  assert.equal(intOption('tail', ' 10 ', 1, 10), 10);
  for (const bad of ['abc', '', '-1', '0', '11', '1.5', '1e3', '0x5', 'NaN', '99999999999999999999']) {
    assert.throws(() => intOption('tail', bad, 1, 10), (e: unknown) => e instanceof UsageError && e.message.startsWith(`--tail ${JSON.stringify(bad)} is not valid: give a whole number from 1 to 10`), bad);
  }
  assert.equal(choiceOption('scope', 'all', ['project', 'all'] as const), 'all');
  assert.throws(() => choiceOption('scope', 'x', ['project', 'all'] as const), /--scope "x" is not valid: use project, all/);
});

test('describeFailure: usage errors 2, runtime failures 1, help/version 0; a stack only for the unexpected', () => {
  assert.deepEqual(describeFailure(new UsageError('u')), { code: 2, message: 'u' });
  assert.deepEqual(describeFailure(new InvalidInputError('bad')), { code: 2, message: 'bad' });
  assert.deepEqual(describeFailure(new CliError('c')), { code: 1, message: 'c' });
  assert.deepEqual(describeFailure(new NotFoundError('n')), { code: 1, message: 'n' });
  assert.equal(describeFailure(new CommanderError(1, 'commander.unknownOption', "error: unknown option '--x'")).code, 2);
  assert.equal(describeFailure(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)')).code, 0);
  const odd = describeFailure(new TypeError('boom'));
  assert.equal(odd.code, 1);
  assert.match(odd.stack ?? '', /TypeError: boom/);
});

