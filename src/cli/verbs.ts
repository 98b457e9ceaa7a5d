// `overseer msg|pause|resume|cancel|spawn|wait`: a person (or a script) acting on the crew without
// the lead's chat, through the hub's own tools (hubTools.ts). Every verb prints one line, or the
// tool's JSON with --json. Exit codes: 0 done; 1 runtime failure (no hub); 2 refused or bad input;
// `wait`: 0 when every job succeeded, 1 when one did not, 124 on timeout.
import { Option, type Command } from 'commander';
import { wanted } from './wanted.js';
import type { HubTools } from './hubTools.js';
import { UsageError } from './errors.js';

export const EXIT_TIMEOUT = 124;

interface Common { json?: boolean }

async function withHub<T>(f: (h: HubTools) => Promise<T>): Promise<T> {
  return (await import('./hubTools.js')).withHub(f);
}

const print = (o: Common, value: unknown, line: string): void => {
  process.stdout.write(o.json ? `${JSON.stringify(value, null, 2)}\n` : `${line}\n`);
};

interface WaitOpts extends Common { any?: boolean; timeout?: string }

function seconds(v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0 || n > 86_400) throw new UsageError(`--timeout ${JSON.stringify(v)} is not a number of seconds between 0 and 86400`);
  return n;
}

/** Waits through attention wake-ups until the jobs end (all, or any) or the time is up. */
export async function waitFor(h: HubTools, ids: string[], o: { any?: boolean; timeoutS: number }): Promise<{ done: any[]; pending: string[]; timed_out: boolean; attention: unknown[] }> {
  const until = Date.now() + o.timeoutS * 1000;
  const attention: unknown[] = [];
  for (;;) {
    const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
    const r = await h.call('wait_for_agents', { job_ids: ids, mode: o.any ? 'any' : 'all', timeout_s: left }, left * 1000 + 30_000);
    attention.push(...(r.attention ?? []));
    const finished = o.any ? r.done.length > 0 : r.pending.length === 0;
    if (finished || r.timed_out || left === 0) return { ...r, attention, timed_out: !finished };
  }
}

export function waitExitCode(r: { done: { status: string }[]; timed_out: boolean }): number {
  if (r.timed_out) return EXIT_TIMEOUT;
  return r.done.every((d) => d.status === 'succeeded') ? 0 : 1;
}

function waitLines(r: { done: any[]; pending: string[]; timed_out: boolean }): string {
  const lines = r.done.map((d) => `${d.job_id}  ${d.status}${d.failure_class ? ` (${d.failure_class})` : ''}  ${String(d.result ?? d.error ?? '').replace(/\s+/g, ' ').slice(0, 100)}`);
  if (r.timed_out) lines.push(`timed out; still running: ${r.pending.join(', ')}`);
  return lines.join('\n');
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

export async function registerVerbs(program: Command, argv: readonly string[] = process.argv): Promise<void> {
  program.command('msg <job> <text...>').description('send a message into an agent\'s conversation; job \'*\': to every running agent (--project, --status narrow it)').option('--json', 'machine-readable output')
    .option('--project <name>', 'with \'*\': only agents of this project').option('--status <status>', 'with \'*\': only agents in this status (default running)')
    .action(async (job: string, text: string[], o: Common & { project?: string; status?: string }) => withHub(async (h) => {
      if (job === '*') {
        const b = await h.call('message_agent', { to: '*', text: text.join(' '), ...(o.project !== undefined ? { project: o.project } : {}), ...(o.status !== undefined ? { status: o.status } : {}) });
        return print(o, b, b.recipients.length === 0 ? String(b.note) : [
          ...(b.delivered.length ? [`delivered to ${b.delivered.length}: ${b.delivered.join(', ')}`] : []),
          ...(b.queued.length ? [`stored for ${b.queued.length} (they read it on their next turn): ${b.queued.join(', ')}`] : []),
        ].join('\n'));
      }
      if (o.project !== undefined || o.status !== undefined) throw new UsageError('--project and --status choose the agents of a broadcast: use overseer msg \'*\' --project <name> "<text>", or drop them to message one job');
      const r = await h.call('message_agent', { job_id: job, text: text.join(' ') });
      if (r.delivered) return print(o, r, `delivered to ${job}`);
      const status = String((await h.call('get_agent', { job_id: job })).status);
      print(o, r, ENDED.has(status)
        ? `${job} has ended (${status}): the message is kept and reaches it only if it is resumed (overseer resume ${job})`
        : `stored for ${job} (${status}; it reads it when it runs again)`);
    }));
  program.command('pause <job>').description('pause a running agent: freeze it in place, or --stop it keeping its session').option('--stop', 'end the process, keep the session to resume').option('--json', 'machine-readable output')
    .action(async (job: string, o: Common & { stop?: boolean }) => withHub(async (h) => {
      const r = await h.call('pause_agent', { job_id: job, mode: o.stop ? 'stop' : 'freeze' });
      print(o, r, `${job} ${r.status}`);
    }));
  program.command('resume <job>').description('resume a frozen, stopped, interrupted or ended agent; or a dispatch run (r-…): re-run what did not succeed').option('--message <text>', 'the next user turn for a stopped or ended session').option('--json', 'machine-readable output')
    .action(async (job: string, o: Common & { message?: string }) => job.startsWith('r-') ? (await import('./dispatch.js')).runResumeRun(job, o) : withHub(async (h) => {
      const r = await h.call('resume_agent', { job_id: job, ...(o.message ? { message: o.message } : {}) });
      print(o, r, `${job} ${r.status}`);
    }));
  program.command('cancel <job>').description('cancel an agent and everything it spawned').option('--reason <text>', 'why (the job\'s error reads "cancelled: <reason>")').option('--no-cascade', 'leave its sub-agents running').option('--json', 'machine-readable output')
    .action(async (job: string, o: Common & { reason?: string; cascade?: boolean }) => withHub(async (h) => {
      const r = await h.call('cancel_agent', { job_id: job, ...(o.reason ? { reason: o.reason } : {}), cascade: o.cascade !== false });
      print(o, r, r.status === 'cancelled' ? `${job} cancelled` : `${job} had already ended (${r.status}): nothing to cancel`);
    }));
  const spawn = program.command('spawn').description('start an agent, as the lead would: every spawn_agent option as a flag named as its field (docs/cli.md)')
    .option('--wait', 'wait until it ends (exit code as for overseer wait)').option('--timeout <s>', 'with --wait: longest to wait, seconds', '3600').option('--json', 'machine-readable output')
    .addOption(new Option('--every <s>', 'the former name of --every-s').hideHelp());
  // Every spawn_agent field is a flag (schemaFlags.ts); the schema (zod) loads only for `overseer spawn`.
  if (!wanted('spawn', argv)) return registerWait(program);
  const { SpawnInput } = await import('../contract/agents.js');
  const { addSchemaFlags, schemaArgs } = await import('./schemaFlags.js');
  const flags = addSchemaFlags(spawn, SpawnInput, { splitOff: ['checks'] });
  spawn.action(async (o: Common & { wait?: boolean; timeout: string; every?: string } & Record<string, unknown>) => {
    const timeoutS = seconds(o.timeout, 3600);
    if (o.every !== undefined && o.everyS === undefined) o.everyS = o.every;
    const args = schemaArgs(SpawnInput, flags, o); // bad flags exit 2 here: nothing is spawned
    return withHub(async (h) => {
      const r = await h.call('spawn_agent', args);
      if (!o.wait) return print(o, r, `${r.job_id} ${r.status}${r.schedule_id ? ` (schedule ${r.schedule_id}, runs at ${r.run_at})` : ''}${r.warning ? `\nwarning: ${r.warning}` : ''}`);
      const w = await waitFor(h, [r.job_id], { timeoutS });
      print(o, { spawned: r, ...w }, waitLines(w));
      process.exitCode = waitExitCode(w);
    });
  });
  registerWait(program);
}

function registerWait(program: Command): void {
  program.command('wait <jobs...>').description('wait until agents end: exit 0 when all succeeded, 1 when one did not, 124 on timeout')
    .option('--any', 'return when the first one ends').option('--timeout <s>', 'longest to wait, seconds', '3600').option('--json', 'machine-readable output')
    .action(async (jobs: string[], o: WaitOpts) => withHub(async (h) => {
      const w = await waitFor(h, jobs, { any: o.any, timeoutS: seconds(o.timeout, 3600) });
      print(o, w, waitLines(w));
      process.exitCode = waitExitCode(w);
    }));
}
