// Unit: `overseer spawn`, `overseer workflow start` and `overseer debate start` take every option of
// their tool — one flag per schema field, named as the field in kebab-case — so a field added to
// the schema cannot be forgotten; values are converted (numbers, lists, JSON, --no-x) and a bad one
// is a usage error naming the flag and what it takes (src/cli/schemaFlags.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Command } from 'commander';
import type { z } from 'zod';
import { SpawnInput } from '../../src/contract/agents.js';
import { StartWorkflowInput } from '../../src/contract/workflows.js';
import { StartDebateInput } from '../../src/contract/debates.js';
import { registerVerbs } from '../../src/cli/verbs.js';
import { registerWorkflowCommands } from '../../src/cli/workflowCommands.js';
import { registerDebateCommands } from '../../src/cli/debateCommands.js';
import { addSchemaFlags, kebab, objectShape, schemaArgs } from '../../src/cli/schemaFlags.js';
import { UsageError } from '../../src/cli/errors.js';

/** The commands as main.ts registers them for a run of `overseer <argv…>`. */
async function program(...argv: string[]): Promise<Command> {
  const p = new Command();
  p.command('debate <id>').action(() => undefined); // as main.ts registers it
  const full = ['node', 'overseer', ...argv];
  await registerVerbs(p, full);
  await registerWorkflowCommands(p, full);
  await registerDebateCommands(p, full);
  return p;
}

const sub = (c: Command, ...path: string[]): Command => path.reduce((at, name) => at.commands.find((x) => x.name() === name)!, c);

test('every field of spawn_agent, start_workflow and start_debate has its flag on the command', async () => {
  const cases: [Command, z.ZodTypeAny][] = [
    [sub(await program('spawn'), 'spawn'), SpawnInput], [sub(await program('workflow', 'start'), 'workflow', 'start'), StartWorkflowInput],
    [sub(await program('help', 'debate'), 'debate', 'start'), StartDebateInput]];
  for (const [cmd, schema] of cases) {
    const longs = new Set(cmd.options.map((o) => o.long));
    const fields = Object.keys(objectShape(schema));
    assert.ok(fields.length > 5);
    for (const f of fields) assert.ok(longs.has(`--${kebab(f)}`), `${cmd.name()}: no --${kebab(f)} for the field ${f}`);
  }
  // The CLI's own options stay: --wait, --timeout (of the wait) and the former --every.
  const spawnLongs = sub(await program('spawn', '--prompt', 'x'), 'spawn').options.map((o) => o.long);
  // Another command's run does not load the schemas: spawn is there without its schema flags.
  assert.equal(sub(await program('status'), 'spawn').options.some((o) => o.long === '--priority'), false);
  for (const own of ['--wait', '--timeout', '--json', '--every', '--timeout-s', '--budget-usd', '--depends-on']) assert.ok(spawnLongs.includes(own), own);
});

/** Parses argv against the schema's flags and returns the tool's arguments (or throws). */
function argsOf(schema: z.ZodTypeAny, argv: string[], splitOff: string[] = []): Record<string, unknown> {
  const cmd = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
  const flags = addSchemaFlags(cmd, schema, { splitOff });
  let out: Record<string, unknown> = {};
  cmd.action((o: Record<string, unknown>) => { out = schemaArgs(schema, flags, o); });
  cmd.parse(argv, { from: 'user' });
  return out;
}

test('values are converted: numbers, lists comma-separated or repeated, checks repeated only, JSON, --x and --no-x', () => {
  const a = argsOf(SpawnInput, ['--prompt', 'do it', '--priority', '5', '--depends-on', 'j-1,j-2', '--depends-on', 'j-3', '--labels', 'a, b',
    '--checks', 'command:node -e "console.log(1, 2)"', '--checks', 'diff_not_empty', '--budget-usd', '0.5', '--retry', 'same', '--worktree', '--no-bootstrap',
    '--context', '{"api":"the schema"}', '--timeout-s', '90', '--max-turns', '7', '--role', 'reviewer', '--template', 't', '--provider', 'codex', '--model', 'm'], ['checks']);
  assert.deepEqual(a, {
    prompt: 'do it', priority: 5, depends_on: ['j-1', 'j-2', 'j-3'], labels: ['a', 'b'], checks: ['command:node -e "console.log(1, 2)"', 'diff_not_empty'],
    budget_usd: 0.5, retry: 'same', worktree: true, bootstrap: false, context: { api: 'the schema' }, timeout_s: 90, max_turns: 7, role: 'reviewer', template: 't', provider: 'codex', model: 'm',
  });
  const w = argsOf(StartWorkflowInput, ['--task', 'build', '--no-worktree', '--implementer', '{"provider":"codex"}', '--phase-limits', '{"max_turns":3}', '--max-cycles', '2']);
  assert.deepEqual(w, { task: 'build', worktree: false, implementer: { provider: 'codex' }, phase_limits: { max_turns: 3 }, max_cycles: 2 });
  const d = argsOf(StartDebateInput, ['--task', 'which', '--sides', '[{"provider":"claude"},{"provider":"codex","model":"o"}]', '--post-action', 'do it', '--post-action-side', '1', '--verify']);
  assert.deepEqual(d, { task: 'which', sides: [{ provider: 'claude' }, { provider: 'codex', model: 'o' }], post_action: 'do it', post_action_side: 1, verify: true });
});

test('a bad value is a usage error naming the flag and what it takes', () => {
  const bad: [z.ZodTypeAny, string[], RegExp][] = [
    [SpawnInput, ['--prompt', 'x', '--priority', 'high'], /^--priority "high" is not a number: --priority takes a number/],
    [SpawnInput, ['--prompt', 'x', '--priority', '11'], /^--priority: priority must be between -10 and 10/],
    [SpawnInput, ['--prompt', 'x', '--retry', 'maybe'], /^--retry "maybe" is not one of none, same, analyze/],
    [SpawnInput, ['--prompt', 'x', '--provider', 'gpt'], /^--provider "gpt" is not one of claude, codex/],
    [SpawnInput, ['--prompt', 'x', '--context', '{api'], /^--context "\{api" is not JSON .*takes a JSON value/],
    [SpawnInput, ['--prompt', 'x', '--checks', 'lint'], /^--checks \(at 0\): unknown check "lint"/],
    [SpawnInput, ['--prompt', 'x', '--budget-usd', '-1'], /^--budget-usd: budget_usd must be more than 0/],
    [SpawnInput, ['--prompt', '  '], /^--prompt: prompt is empty/],
    [StartDebateInput, ['--task', 'x', '--sides', '[{"provider":"claude"}]'], /^--sides: a debate has exactly two sides/],
    [StartWorkflowInput, ['--task', 'x', '--max-cycles', '0'], /^--max-cycles: max_cycles must be between 1 and 50/],
  ];
  for (const [schema, argv, want] of bad) {
    assert.throws(() => argsOf(schema, argv, ['checks']), (e: unknown) => e instanceof UsageError && want.test(e.message), argv.join(' '));
  }
  // A required field missing is commander's own usage error (exit 2 by describeFailure).
  assert.throws(() => argsOf(SpawnInput, ['--title', 't']), /required option '--prompt <text>' not specified/);
});
