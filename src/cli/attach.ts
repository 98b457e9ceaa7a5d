// `overseer attach <job> [--then resume|finish|leave] [--result <text>] [--outcome success|failure] [--message <text>]`:
// take over an agent (docs/attach.md). Through the running hub as the lead: attach_agent stops
// the job keeping its session and returns the interactive command; it runs here on this
// terminal (stdio inherited) in the job's work tree; when it exits, the person chooses (or
// --then says) what becomes of the job, and detach_agent does it.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import type { HubTools } from './hubTools.js';
import { CliError, UsageError } from './errors.js';
import { choiceOption } from './args.js';

const THENS = ['resume', 'finish', 'leave'] as const;
type Then = (typeof THENS)[number];
interface AttachOpts { then?: string; result?: string; outcome?: string; message?: string }

export interface Attached {
  job_id: string; title: string; provider: string; session_id: string; was: string; work_dir: string; reattached_worktree: boolean;
  command: { bin: string; args: string[]; cwd: string; env: Record<string, string> };
}

export function registerAttach(program: Command): void {
  program.command('attach <job>').description('take over an agent: stop it keeping its session, open that session in the interactive CLI in its work tree, then hand it back, finish it or leave it stopped')
    .option('--then <what>', 'after you exit: resume (hand it back, it continues headless), finish (settle it with --result), leave (stay stopped); default: ask')
    .option('--result <text>', 'with --then finish: the job\'s result').option('--outcome <outcome>', 'with --then finish: success (default) or failure')
    .option('--message <text>', 'with --then resume: the agent\'s next message (default: a person worked on this session and hands it back)')
    .action(async (job: string, o: AttachOpts) => { await runAttach(job, o); });
}

async function hub(): Promise<HubTools> {
  const [{ loadConfig }, { connectHub }] = await Promise.all([import('../config.js'), import('./hubTools.js')]);
  return connectHub(loadConfig().home);
}

export async function runAttach(job: string, o: AttachOpts): Promise<void> {
  const then = checkOpts(o);
  const a = await takeOver(job);
  process.stdout.write(`${await handOver(a, { ...o, then })}\n`);
}

/** The options checked before anything is taken over (bad input changes nothing). */
function checkOpts(o: AttachOpts): Then | undefined {
  const then = choiceOption('then', o.then, THENS);
  const outcome = choiceOption('outcome', o.outcome, ['success', 'failure'] as const);
  if (then === 'finish' && !o.result?.trim()) throw new UsageError('--then finish needs --result <text> (what was done).');
  if ((o.result || outcome) && then !== 'finish' && then !== undefined) throw new UsageError('--result and --outcome go with --then finish.');
  return then;
}

/** attach_agent through the running hub: the job stopped for the person, its session's interactive command. A refusal throws, nothing taken over. */
export async function takeOver(job: string): Promise<Attached> {
  const h = await hub();
  try {
    return await h.call('attach_agent', { job_id: job }, 120_000) as Attached;
  } finally {
    await h.close();
  }
}

/**
 * The person's part, on this terminal: the interactive CLI in the job's work tree (stdio
 * inherited), then what becomes of the job (--then, else asked) through detach_agent. Resolves
 * with the line saying what became of it. `overseer watch` runs this too (`t`), with its screen left.
 */
export async function handOver(a: Attached, o: AttachOpts & { then?: Then | undefined } = {}): Promise<string> {
  const then = o.then;
  const outcome = o.outcome === 'failure' ? 'failure' : o.outcome === 'success' ? 'success' : undefined;
  // One connection to take over, another to give back: the person's session may outlast an idle MCP session.
  const err = process.stderr;
  err.write(`overseer: you are now agent ${a.job_id} ("${a.title}")${a.was === 'running' || a.was === 'needs_input' || a.was === 'frozen' ? ', stopped for you' : ` (it was ${a.was})`}: ${a.provider} session ${a.session_id} in ${a.work_dir}.${a.reattached_worktree ? ' Its worktree was re-attached.' : ''}\n`);
  err.write('overseer: exit the CLI when you are done; then choose what becomes of the job.\n');
  let code: number;
  try {
    code = await runInteractive(a);
  } catch (err) {
    // Nothing was opened: the job is not left marked taken over (it stays stopped).
    const h3 = await hub();
    await h3.call('detach_agent', { job_id: a.job_id, then: 'leave' }).catch(() => undefined).finally(() => h3.close());
    throw err;
  }
  if (code !== 0) err.write(`overseer: ${a.provider} exited with ${code}.\n`);
  const choice = then ?? (process.stdin.isTTY ? await ask(a) : undefined);
  const chosen: { then: Then; result?: string; outcome?: 'success' | 'failure'; message?: string } = choice === undefined
    ? { then: 'leave' }
    : typeof choice === 'string' ? { then: choice, ...(choice === 'finish' ? { result: o.result!.trim(), outcome: outcome ?? 'success' } : {}), ...(o.message ? { message: o.message } : {}) }
      : choice;
  if (choice === undefined) err.write('overseer: no terminal to ask and no --then: leaving the job stopped.\n');
  const h2 = await hub();
  try {
    const s = await h2.call('detach_agent', { job_id: a.job_id, ...chosen }, 120_000) as { status: string };
    const what = chosen.then === 'resume' ? 'handed back: it continues headless on the same session'
      : chosen.then === 'finish' ? `finished (${s.status})` : `left stopped (${s.status}); overseer resume ${a.job_id} continues it`;
    return `${a.job_id} ${what}.`;
  } finally {
    await h2.close();
  }
}

/** Runs the interactive CLI on this terminal; resolves with its exit code. Ctrl-C belongs to it, not to us. */
function runInteractive(a: Attached): Promise<number> {
  return new Promise((resolve, reject) => {
    const ignore = (): void => undefined;
    process.on('SIGINT', ignore);
    const child = spawn(a.command.bin, a.command.args, { cwd: a.command.cwd, env: { ...process.env, ...a.command.env }, stdio: 'inherit' });
    child.on('error', (e) => { process.off('SIGINT', ignore); reject(new CliError(`could not start ${a.command.bin}: ${e.message}. The job stays stopped: overseer attach ${a.job_id} again, or overseer resume ${a.job_id}.`)); });
    child.on('exit', (c, sig) => { process.off('SIGINT', ignore); resolve(c ?? (sig ? 128 : 1)); });
  });
}

/** The person's choice on the terminal. */
async function ask(a: Attached): Promise<{ then: Then; result?: string; outcome?: 'success' | 'failure' }> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    for (;;) {
      const c = (await rl.question(`What now for ${a.job_id}? [r] hand it back (resume headless)  [f] finish it with a result  [l] leave it stopped: `)).trim().toLowerCase();
      if (c === 'r' || c === 'resume') return { then: 'resume' };
      if (c === 'l' || c === 'leave') return { then: 'leave' };
      if (c === 'f' || c === 'finish') {
        let result = '';
        while (!result) result = (await rl.question('Result (what was done, one line): ')).trim();
        const oc = (await rl.question('Outcome [s]uccess / [f]ailure (default success): ')).trim().toLowerCase();
        return { then: 'finish', result, outcome: oc.startsWith('f') ? 'failure' : 'success' };
      }
    }
  } finally {
    rl.close();
  }
}
