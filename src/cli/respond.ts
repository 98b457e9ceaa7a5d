// `overseer respond <request_id> (--approve|--reject|--answer <text>) [--comment <text>]` and
// `overseer requests` (also `overseer respond` without an id): the person answers agents'
// requests from a terminal, through the running hub's requests API. A person-only request
// needs the person's confirmation on an interactive terminal, or an explicit --as-person.
// Exit codes: 0 done, 1 runtime failure (no hub, too late, not confirmed), 2 usage error.
import type { Command } from 'commander';
import type { RequestView } from '../approvals/view.js';

const USAGE = 2;
const FAILED = 1;

interface RespondOpts { approve?: boolean; reject?: boolean; answer?: string; comment?: string; asPerson?: boolean; json?: boolean; all?: boolean }

class Exit extends Error {
  constructor(readonly code: number, message: string) { super(message); }
}

/** Registers `respond` and `requests` on the overseer program. */
export function registerRespond(program: Command): void {
  const usage = (e: { exitCode: number }): never => process.exit(e.exitCode === 0 ? 0 : USAGE);
  program.command('respond [request_id] [verb]').description('answer an agent\'s request as the person (no id: list pending requests); verb approve|reject is the same as --approve|--reject')
    .option('--approve', 'approve (approvals, permission prompts)').option('--reject', 'reject (approvals, permission prompts)')
    .option('--answer <text>', 'answer a question').option('--comment <text>', 'a comment for the agent')
    .option('--as-person', 'you are the person answering: skip the terminal confirmation of person-only requests (never for an AI agent)')
    .option('--json', 'machine-readable output')
    .exitOverride(usage)
    .action(async (id: string | undefined, verb: string | undefined, o: RespondOpts) => { process.exitCode = await run(() => (id ? respond(id, withVerb(verb, o)) : list(o))); });
  program.command('requests').description('pending requests of agents, who may answer them, and late answers')
    .option('--all', 'closed requests too').option('--json', 'machine-readable output')
    .exitOverride(usage)
    .action(async (o: RespondOpts) => { process.exitCode = await run(() => list(o)); });
}

/** `respond <id> approve|reject` as a word, the way people type it. */
function withVerb(verb: string | undefined, o: RespondOpts): RespondOpts {
  if (verb === undefined) return o;
  if (verb !== 'approve' && verb !== 'reject') throw new Exit(USAGE, `unknown answer ${JSON.stringify(verb)}: use approve, reject, or --answer <text> for a question`);
  return { ...o, [verb]: true };
}

async function run(f: () => Promise<void>): Promise<number> {
  try {
    await f();
    return 0;
  } catch (err) {
    process.stderr.write(`overseer: ${(err as Error).message}\n`);
    return err instanceof Exit ? err.code : FAILED;
  }
}

async function client() {
  const [{ loadConfig }, { requestsClient }] = await Promise.all([import('../config.js'), import('../approvals/client.js')]);
  return requestsClient(loadConfig().home);
}

/** An API error reply as an Exit: bad input and unknown ids are usage errors, the rest failures. */
function replyError(r: { status: number; body: any }): Exit {
  const msg = String(r.body?.error?.message ?? `the hub answered HTTP ${r.status}`);
  return new Exit(r.status === 400 || r.status === 404 ? USAGE : FAILED, msg);
}

async function list(o: RespondOpts): Promise<void> {
  const api = await client();
  const r = await api.get(`/api/requests?status=${o.all ? 'all' : 'pending'}`);
  if (r.status !== 200) throw replyError(r);
  if (o.json) {
    process.stdout.write(`${JSON.stringify(r.body, null, 2)}\n`);
    return;
  }
  const reqs = r.body.requests as RequestView[];
  const late = (r.body.late as RequestView[]).filter((q) => q.late_answers?.length);
  const out: string[] = [reqs.length ? `${reqs.length} ${o.all ? '' : 'pending '}request${reqs.length === 1 ? '' : 's'}:` : 'No pending requests.'];
  for (const q of reqs) out.push('', await describe(q));
  if (late.length) out.push('', 'Late answers (ignored: their request had closed):');
  for (const q of late) for (const l of q.late_answers ?? []) out.push(`  ${q.request_id}  ${l.answered_by} at ${l.at}: ${l.decision ?? JSON.stringify(l.answer)} — ${l.note}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

async function describe(q: RequestView): Promise<string> {
  const { planText } = await import('../approvals/form.js');
  const agent = q.agent_title ? `"${q.agent_title}" (${q.job_id})` : q.job_id;
  const head = `${q.request_id}  ${q.kind}  ${q.status}${q.awaiting ? `  for: ${q.awaiting === 'any' ? 'you or the lead' : q.awaiting === 'person' ? 'you (the person) only' : 'the lead'}` : ''}  agent ${agent}`;
  const plan = q.plan ? `\n${planText(JSON.stringify(q.plan)).replace(/^/gm, '    ')}` : '';
  const tool = q.tool_name ? `\n    tool: ${q.tool_name} ${JSON.stringify(q.tool_input).slice(0, 500)}` : '';
  const options = q.options ? `\n    options: ${q.options.join(' | ')}` : '';
  const closed = q.status === 'pending' ? '' : `\n    ${q.decision ?? q.answer ?? ''} by ${q.answered_by ?? '-'} at ${q.answered_at ?? '-'}`;
  const answer = q.status !== 'pending' ? '' : q.kind === 'question' ? `\n    answer: overseer respond ${q.request_id} --answer <text>` : `\n    answer: overseer respond ${q.request_id} --approve|--reject [--comment <text>]`;
  return `${head}\n    ${q.summary.replace(/\n/g, '\n    ')}${plan}${tool}${options}${closed}${answer}`;
}

async function respond(id: string, o: RespondOpts): Promise<void> {
  const given = [o.approve, o.reject, o.answer !== undefined].filter(Boolean).length;
  if (given !== 1) throw new Exit(USAGE, `give exactly one of --approve, --reject or --answer <text> (got ${given === 0 ? 'none' : 'more than one'}). Example: overseer respond ${id} --approve --comment "go ahead"`);
  const api = await client();
  const path = `/api/requests/${encodeURIComponent(id)}`;
  const got = await api.get(path);
  if (got.status !== 200) throw replyError(got);
  const q = got.body.request as RequestView;
  let confirmation: 'tty' | 'flag' | undefined;
  if (q.who === 'person' && q.status === 'pending') confirmation = o.asPerson ? 'flag' : await confirmOnTerminal(q, o);
  const body = { decision: o.approve ? 'approved' : o.reject ? 'rejected' : undefined, answer: o.answer, comment: o.comment, channel: 'cli', confirmation };
  const r = await api.post(`${path}/respond`, body);
  if (r.status !== 200) throw replyError(r);
  const done = r.body.request as RequestView;
  if (o.json) process.stdout.write(`${JSON.stringify(done, null, 2)}\n`);
  else process.stdout.write(`${done.request_id}: ${done.decision ?? JSON.stringify(done.answer)} (answered_by ${done.answered_by}); agent ${done.agent_title ? `"${done.agent_title}" ` : ''}${done.job_id} has the answer.\n`);
}

/** The person confirms a person-only answer on an interactive terminal. */
async function confirmOnTerminal(q: RequestView, o: RespondOpts): Promise<'tty'> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new Exit(USAGE, `request ${q.request_id} is for the person only, and this is not an interactive terminal, so nobody can confirm that you are the person. Run the command in your own terminal, or add --as-person if you are the person (an AI agent must never do that: tell the person instead).`);
  }
  const what = o.approve ? 'APPROVE' : o.reject ? 'REJECT' : `ANSWER ${JSON.stringify(o.answer)} to`;
  process.stdout.write(`${await describe(q)}\n\n`);
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const a = (await rl.question(`${what} this request as the person? [y/N] `)).trim().toLowerCase();
    if (a !== 'y' && a !== 'yes') throw new Exit(FAILED, `not answered: request ${q.request_id} is still pending.`);
  } finally {
    rl.close();
  }
  return 'tty';
}
