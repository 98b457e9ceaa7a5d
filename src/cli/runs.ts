// `overseer validate|dispatch|runs|run`: batch dispatch from a file (src/cli/dispatch.ts).
import type { Command } from 'commander';

interface Common { json?: boolean }

export function registerRuns(program: Command): void {
  program.command('validate <file>').description('check a dispatch file (.toml, .yaml): every problem with file:line, exit 1 if any').option('--json', 'machine-readable output')
    .action(async (file: string, o: Common) => (await import('./dispatch.js')).runValidate(file, o));
  program.command('dispatch <file>').description('run a dispatch file of tasks (starts a hub if none runs); --wait: exit 0 only when every task succeeded')
    .option('--wait', 'follow the run until it ends; exit 0 when every task succeeded, else 1 with a summary').option('--timeout <s>', 'with --wait: longest to wait, seconds (default a day)')
    .option('--title <text>', 'name of the run').option('--json', 'machine-readable output')
    .action(async (file: string, o: Common & { wait?: boolean; title?: string; timeout?: string }) => (await import('./dispatch.js')).runDispatch(file, o));
  program.command('runs').description('dispatch runs, newest first').option('--limit <n>', 'most runs (default 50)').option('--json', 'machine-readable output')
    .action(async (o: Common & { limit?: string }) => (await import('./dispatch.js')).runRuns(o));
  program.command('run <id>').description('one dispatch run: status, note, and each task with its job').option('--json', 'machine-readable output')
    .action(async (id: string, o: Common) => (await import('./dispatch.js')).runRun(id, o));
}
