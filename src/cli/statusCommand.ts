// `overseer status`: checks the options, then prints the table (status.ts), or follows the
// floor (statusWatch.ts, loaded only for --watch and --floor). The command's entry, so the
// table and the watch, which renders the table, do not import each other.
import { JOB_STATUSES } from '../domain/job.js';
import { PROJECT_NAME } from '../contract/projectNames.js';
import { UsageError } from './errors.js';
import { openState } from './state.js';
import { statusJson, statusText, type StatusOptions } from './status.js';

export function runStatus(opts: StatusOptions): void | Promise<void> {
  if (opts.status && !(JOB_STATUSES as readonly string[]).includes(opts.status)) {
    throw new UsageError(`--status ${JSON.stringify(opts.status)} is not a job status; use one of ${JOB_STATUSES.join(', ')}`);
  }
  if ((opts.floor || (opts.watch && opts.json)) && (opts.status || opts.label || opts.parent || opts.project)) {
    throw new UsageError('--status, --label, --parent and --project filter the table; the floor (--floor, or --watch --json) is printed whole: filter it with jq');
  }
  if (opts.project !== undefined && !PROJECT_NAME.test(opts.project)) {
    throw new UsageError(`--project ${JSON.stringify(opts.project)} is not a project name: 1..100 letters, digits, "-", "_", "." or "/"`);
  }
  if (opts.watch) return import('./statusWatch.js').then((m) => m.watchStatus(opts));
  if (opts.floor) return import('./statusWatch.js').then((m) => m.printFloor());
  return printStatus(opts);
}

async function printStatus(opts: StatusOptions): Promise<void> {
  const state = await openState();
  try {
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(await statusJson(state, opts), null, 2)}\n`);
      return;
    }
    process.stdout.write(await statusText(state, opts));
  } finally {
    await state.close();
  }
}
