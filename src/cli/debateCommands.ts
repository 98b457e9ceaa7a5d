// `overseer debate start`: start a debate as the lead's start_debate does, through the running hub
// (hubTools.ts), every option of the tool a flag named as its field (schemaFlags.ts); `--sides`
// takes JSON, e.g. '[{"provider":"claude"},{"provider":"codex"}]'. It is a subcommand of
// `overseer debate <id>` (main.ts), which still shows one debate.
import type { Command } from 'commander';
import { wanted } from './wanted.js';

export async function registerDebateCommands(program: Command, argv: readonly string[] = process.argv): Promise<void> {
  const debate = program.commands.find((c) => c.name() === 'debate') ?? program.command('debate');
  const start = debate.command('start').description('start a debate, as the lead would: every start_debate option as a flag named as its field (--sides as JSON)')
    .option('--json', 'machine-readable output');
  if (!wanted('debate', argv)) return; // the schema (zod) loads only for `overseer debate …`
  const { StartDebateInput } = await import('../contract/debates.js');
  const { addSchemaFlags, schemaArgs } = await import('./schemaFlags.js');
  const flags = addSchemaFlags(start, StartDebateInput);
  start.action(async (o: Record<string, unknown>, cmd: Command) => {
    const json = cmd.optsWithGlobals().json === true; // `overseer debate <id>` has its own --json
    const args = schemaArgs(StartDebateInput, flags, o); // bad flags exit 2 here: nothing starts
    const { withHub } = await import('./hubTools.js');
    await withHub(async (h) => {
      const r = await h.call('start_debate', args);
      process.stdout.write(json ? `${JSON.stringify(r, null, 2)}\n` : `${r.debate_id} ${r.status}\n`);
    });
  });
}
