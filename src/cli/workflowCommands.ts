// `overseer workflow start`: start a workflow as the lead's start_workflow does, through the running
// hub (hubTools.ts), every option of the tool a flag named as its field (schemaFlags.ts).
import type { Command } from 'commander';
import { wanted } from './wanted.js';

export async function registerWorkflowCommands(program: Command, argv: readonly string[] = process.argv): Promise<void> {
  const wf = program.command('workflow').description('workflows (assess, review, implement cycles; docs/workflows.md)');
  const start = wf.command('start').description('start a workflow, as the lead would: every start_workflow option as a flag named as its field')
    .option('--json', 'machine-readable output');
  if (!wanted('workflow', argv)) return; // the schema (zod) loads only for `overseer workflow …`
  const { StartWorkflowInput } = await import('../contract/workflows.js');
  const { addSchemaFlags, schemaArgs } = await import('./schemaFlags.js');
  const flags = addSchemaFlags(start, StartWorkflowInput, { splitOff: ['checks'] });
  start.action(async (o: { json?: boolean } & Record<string, unknown>) => {
    const args = schemaArgs(StartWorkflowInput, flags, o); // bad flags exit 2 here: nothing starts
    const { withHub } = await import('./hubTools.js');
    await withHub(async (h) => {
      const r = await h.call('start_workflow', args);
      process.stdout.write(o.json ? `${JSON.stringify(r, null, 2)}\n` : `${r.workflow_id} ${r.status}${r.branch ? ` (branch ${r.branch})` : ''}\n`);
    });
  });
}
