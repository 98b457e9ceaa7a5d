// `overseer brief [show]`, `overseer brief set <text|@file>`, `overseer brief clear`: the person's
// side of the crew brief (src/brief), through the running hub's /api/floor/brief with the lead
// token — the same schema and checks as the lead's set_brief; nothing behind the hub's back.
// `@file` reads the text from that file (as curl's -d @file): a plain argument is always the text
// itself, so a brief that happens to name a path is never read from disk by surprise.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { BriefChange, BriefView } from '../contract/brief.js';
import { CliError, UsageError } from './errors.js';

interface Opts { json?: boolean }

async function api() {
  const [{ loadConfig }, { requestsClient, HubUnavailableError }] = await Promise.all([import('../config.js'), import('../approvals/client.js')]);
  try {
    return requestsClient(loadConfig().home);
  } catch (err) {
    if (err instanceof HubUnavailableError) throw new CliError(err.message);
    throw err;
  }
}

function reply(r: { status: number; body: any }): any {
  if (r.status === 200) return r.body;
  const msg = String(r.body?.error?.message ?? `the hub answered HTTP ${r.status}`);
  throw r.status === 400 ? new UsageError(msg) : new CliError(msg);
}

/** The text of `set`'s argument: `@path` is read from that file. */
export function briefText(arg: string): string {
  if (!arg.startsWith('@')) return arg;
  const path = arg.slice(1);
  if (!path) throw new UsageError('"@" names no file: give @path/to/brief.md, or the text itself');
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read the brief from ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}. Nothing changed.`);
  }
}

function print(v: BriefView | BriefChange, o: Opts): void {
  if (o.json) {
    process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
    return;
  }
  const head = v.text === null ? 'No crew brief.' : `Crew brief (v${v.version}, set by ${v.set_by} at ${v.set_at}):`;
  const sent = 'sent_to' in v ? `\nSent to ${v.sent_to.length} running agent(s)${v.sent_to.length ? `: ${v.sent_to.join(', ')}` : ''}.` : '';
  process.stdout.write(`${head}${v.text === null ? '' : `\n${v.text}`}${sent}\n`);
}

export function registerBrief(program: Command): void {
  const brief = program.command('brief').description('the crew brief: one standing text every new agent gets in its first prompt, and running agents get once as a message when it changes');
  brief.command('show', { isDefault: true }).description('print the brief').option('--json', 'machine-readable output')
    .action(async (o: Opts) => print(reply(await (await api()).get('/api/floor/brief')), o));
  brief.command('set <text>').description('set the brief: the text, or @file to read it from a file (at most 8000 characters)').option('--json', 'machine-readable output')
    .action(async (arg: string, o: Opts) => {
      const text = briefText(arg);
      print(reply(await (await api()).post('/api/floor/brief', { text })), o);
    });
  brief.command('clear').description('remove the brief (running agents are told once)').option('--json', 'machine-readable output')
    .action(async (o: Opts) => print(reply(await (await api()).post('/api/floor/brief/clear', {})), o));
}
