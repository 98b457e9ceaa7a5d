// `overseer validate|dispatch|runs|run`: batch dispatch from a file (src/cli/dispatch.ts).
import type { Command } from 'commander';

interface Common { json?: boolean }

export function registerRuns(program: Command): void {
  program.command('validate <file>').description('check a dispatch file (.toml, .yaml): every problem with file:line, exit 1 if any').option('--json', 'machine-readable output')
    .action(async (file: string, o: Common) => (await import('./dispatch.js')).runValidate(file, o));
  program.command('dispatch <file>').description('run a dispatch file of tasks (.toml, .yaml) or a script (.js, docs/scripts.md); starts a hub if none runs; --wait: exit 0 only when every task (the script) succeeded')
    .option('--wait', 'follow the run until it ends; exit 0 when every task succeeded, else 1 with a summary').option('--timeout <s>', 'with --wait: longest to wait, seconds (default a day)')
    .option('--title <text>', 'name of the run').option('--args <json>', 'a script\'s args: one JSON value (quote it for the shell)').option('--json', 'machine-readable output')
    .action(async (file: string, o: Common & { wait?: boolean; title?: string; timeout?: string; args?: string }) => (await import('./dispatch.js')).runDispatch(file, o));
  program.command('runs').description('runs (script runs and dispatch runs), newest first, with their kind').option('--limit <n>', 'most runs (default 50)').option('--json', 'machine-readable output')
    .action(async (o: Common & { limit?: string }) => (await import('./dispatch.js')).runRuns(o));
  program.command('run <id>').description('one run: a script run\'s status, result or error with its line, cost, phases, calls and log; a dispatch run\'s status, note and tasks').option('--json', 'machine-readable output')
    .action(async (id: string, o: Common) => (await import('./dispatch.js')).runRun(id, o));
}
