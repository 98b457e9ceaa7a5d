#!/usr/bin/env node
// The `overseer` command. Every subcommand loads its module lazily so `overseer mcp` starts fast.
import { Command, CommanderError, Option } from 'commander';
import { packageVersion } from '../version.js';
import { describeFailure, UsageError } from './errors.js';

const program = new Command();
// Usage errors (commander's own included) exit 2, runtime failures 1: commander throws instead
// of exiting, and the handler at the end decides the code.
program.exitOverride();
program
  .name('overseer')
  .description('MCP server that makes one Claude Code session the lead of a crew of coding agents')
  .version(packageVersion(), '-v, --version');

program.command('mcp').description('stdio MCP server for the lead: a bridge to the hub of this state directory (started in the background on first use)')
  .action(async () => (await import('./mcp.js')).runMcp());
program.command('serve').description('long-lived hub over HTTP (lead connects with the token in <state>/lead.token)')
  .option('-p, --port <port>', 'port on 127.0.0.1 (default: OVERSEER_PORT or any free port)')
  .addOption(new Option('--background', 'what `overseer mcp` starts: silent, exits when idle').hideHelp())
  .action(async (o: { port?: string; background?: boolean }) => (await import('./mcp.js')).runServe(o));
program.command('stop').description('stop the hub of this state directory (its running agents are interrupted)')
  .action(async () => (await import('./mcp.js')).runStop());
program.command('init').description('add Overseer to this git repository: the server in .mcp.json, the tool permission in .claude/settings.json, the lock hook in .claude/settings.local.json')
  .option('--dry-run', 'show what would change, change nothing')
  .option('--force', 'also outside a git repository (in the current directory)')
  .action(async (o: { dryRun?: boolean; force?: boolean }) => (await import('./init.js')).runInit(o));
const kb = program.command('kb').description('the knowledge base (project and global)');
kb.command('list').description('entries, newest first').option('--scope <scope>', 'project|global|all').option('--tag <tag>').option('--limit <n>').option('--json')
  .action(async (o: Record<string, string>) => (await import('./kb.js')).runKb('list', [], o));
kb.command('search <query...>').description('full-text search (bm25)').option('--scope <scope>').option('--limit <n>').option('--json')
  .action(async (q: string[], o: Record<string, string>) => (await import('./kb.js')).runKb('search', q, o));
kb.command('add').description('add a learning (triaged like report_learnings)').requiredOption('--title <title>').requiredOption('--content <content>').option('--tags <a,b>').option('--scope <scope>', 'project|global').option('--json')
  .action(async (o: Record<string, string>) => (await import('./kb.js')).runKb('add', [], o));
kb.command('rm <entry_id>').description('delete an entry').option('--json').action(async (id: string, o: Record<string, string>) => (await import('./kb.js')).runKb('rm', [id], o));
program.command('templates').description('project templates (.overseer/templates/*.md) with their run stats').option('--json', 'machine-readable output')
  .action(async (o: { json?: boolean }) => (await import('./templates.js')).runTemplates(o));
program.command('doctor').description('check node, git, the state, the claude/codex CLIs, their endpoints and credentials, gh').option('--json', 'machine-readable output')
  .option('--worker', 'check this machine as a worker host instead: the database (OVERSEER_DATABASE_URL) and its schema, the clones, the agent CLIs, confinement')
  .action(async (o: { json?: boolean; worker?: boolean }) => (await import('./doctor.js')).runDoctor(o));
program.command('status').description('table of jobs, with totals and what needs you; --watch: again on every change').option('--json', 'machine-readable output (with --watch: one JSON floor per line)')
  .option('--status <status>', 'only jobs in this status').option('--label <label>', 'only jobs with this label').option('--parent <job>', 'only children of this job (- or lead: the lead\'s own)')
  .option('--project <name>', 'only jobs of this project (jobs of archived projects are hidden unless their project is named)')
  .option('--watch', 'render again whenever the floor changes (the running hub\'s stream, else the database read-only) until Ctrl-C')
  .option('--floor', 'print the whole floor (needs you, running tree, queued, done, workflows, locks, totals) as JSON')
  .action(async (o: { json?: boolean; status?: string; label?: string; parent?: string; project?: string; watch?: boolean; floor?: boolean }) => (await import('./statusCommand.js')).runStatus(o));
const schedules = program.command('schedules').description('schedules (spawn_agent at / every_s / cron): how each repeats, its next run, or why it ended')
  .option('--status <status>', 'active, done, stopped or cancelled').option('--json', 'machine-readable output')
  .action(async (o: { status?: string; json?: boolean }) => (await import('./schedules.js')).runSchedules(o));
schedules.command('cancel <schedule>').description('stop a schedule: no further run; a run waiting for its time is cancelled').option('--reason <text>').option('--json', 'machine-readable output')
  .action(async (id: string, o: { reason?: string; json?: boolean }) => (await import('./schedules.js')).runCancelSchedule(id, o));
program.command('logs [job]').description('transcript of a job (id or unique prefix) with times, and the hub\'s verdict; --all: every live job, interleaved').option('-f, --follow', 'keep printing until the job ends (following retries); with --all, until no job is live')
  .option('--all', 'every running, queued or waiting job, each line prefixed by its title').option('--json', 'raw transcript lines, plus overseer.attempt / overseer.verdict lines').option('--tail <n>', 'how many events (default 200)').option('--attempt <n>', 'which attempt (default latest)')
  .action(async (job: string | undefined, o: { follow?: boolean; json?: boolean; tail?: string; attempt?: string; all?: boolean }) => {
    if (o.all) {
      if (job) throw new UsageError('give a job or --all, not both');
      return (await import('./logsAll.js')).runLogsAll(o);
    }
    if (!job) throw new UsageError('name a job (id or unique prefix), or pass --all for every live job');
    return (await import('./logs.js')).runLogs(job, o);
  });
program.command('watch').description('full-screen live view of the crew (needs you, running, queued, done), with keys to approve, message, pause, cancel, follow logs and diffs')
  .option('--project <name>', 'only this project\'s agents (archived projects are hidden unless named)')
  .action(async (o: { project?: string }) => (await import('./watch.js')).runWatch(o));
program.command('events').description('what the hub recorded: spawns, permission decisions and their rule, lock denials, reconciles, messages, ends')
  .option('--job <id>', 'one job (id or unique prefix)').option('--json', 'machine-readable output').option('--limit <n>', 'most recent N (default 100)')
  .action(async (o: { job?: string; json?: boolean; limit?: string }) => (await import('./events.js')).runEvents(o));
program.command('overlaps').description('files two live worktree branches both change (the conflict guard)').option('--all', 'also the closed ones').option('--json')
  .action(async (o: { all?: boolean; json?: boolean }) => (await import('./overlaps.js')).runOverlaps(o));
program.command('search <query...>').description('search what the agents said (text, tool calls, tool results), newest first: words, "phrase", word*, a OR b, -word')
  .option('--job <id>', 'one job (id or unique prefix)').option('--label <label>', 'only jobs with this label').option('--since <when>', 'only since then: 30m, 2h, 7d or an ISO time')
  .option('--limit <n>', 'most results (default 20, at most 100)').option('--json', 'machine-readable output')
  .allowUnknownOption() // -word (exclude) is query syntax, not an option
  .action(async (q: string[], o: { job?: string; label?: string; since?: string; limit?: string; json?: boolean }) => (await import('./search.js')).runSearch(q, o));
program.command('debates').description('debates, newest first: status, sides, rounds, cost').option('--status <status>', 'running|consensus|disagreement|failed|cancelled').option('--limit <n>').option('--json', 'machine-readable output')
  .action(async (o: { status?: string; limit?: string; json?: boolean }) => (await import('./debates.js')).runDebates(o));
program.command('debate <id>').description('one debate: every round\'s positions and verdicts, the post-action, review and response').option('--json', 'machine-readable output')
  .action(async (id: string, o: { json?: boolean }) => (await import('./debates.js')).runDebate(id, o));
program.command('dashboard').description('a one-time login link for the dashboard the running hub serves on 127.0.0.1')
  .option('--open', 'open it in the browser').option('--revoke', 'end every dashboard session instead').option('--json', 'machine-readable output')
  .action(async (o: { open?: boolean; revoke?: boolean; json?: boolean }) => (await import('./dashboard.js')).runDashboard(o));
program.command('worker').description('a worker host for the crew in OVERSEER_DATABASE_URL: registers (name, capacity, labels, its agent CLIs), heartbeats, runs the agents queued for it (own state directory: OVERSEER_HOME), stops cleanly on SIGTERM (its agents interrupted)')
  .option('--name <name>', 'its name in overseer hosts and for placement (default: this machine\'s host name)').option('--capacity <n>', 'children it runs at once (default: the number of cores)')
  .option('--labels <a,b>', 'placement labels a job may ask for').option('--lease <seconds>', 'how long a heartbeat holds its lease (default 30; it beats every sixth of it)')
  .action(async (o: { name?: string; capacity?: string; labels?: string; lease?: string }) => (await import('./worker.js')).runWorker(o));
program.command('hosts').description('the worker hosts: name, capacity, running, heartbeat age, labels, state (live, stopped, lost)').option('--json', 'machine-readable output')
  .action(async (o: { json?: boolean }) => (await import('./hosts.js')).runHosts(o));
program.command('backup <file>').description('copy the state database to <file> while the hub runs (SQLite\'s online backup; on PostgreSQL use pg_dump)')
  .option('--force', 'replace <file> if it exists').option('--json', 'machine-readable output')
  .action(async (file: string, o: { force?: boolean; json?: boolean }) => (await import('./housekeeping.js')).runBackup(file, o));
program.command('gc').description('forget what jobs that ended long ago leave behind (logs, search index, transcripts, closed items); a dry run unless --apply')
  .option('--older-than <age>', 'jobs that ended before this long ago: 30d, 12h, 2w, or an ISO time (default 30d)')
  .option('--apply', 'remove it (without: say what would go, change nothing)').option('--json', 'machine-readable output')
  .action(async (o: { olderThan?: string; apply?: boolean; json?: boolean }) => (await import('./housekeeping.js')).runGc(o));
program.command('demo').description('a real orchestration: a lead claude fans out to three child claudes (offline fake model unless --live)')
  .option('--live', 'use the real model (needs ANTHROPIC_API_KEY or a logged-in claude)').option('--keep', 'keep the temp repo and state')
  .action(async (o: { live?: boolean; keep?: boolean }) => { await (await import('./demo.js')).runDemo(o); });

// `overseer mcp` is on the path of Claude Code's start-up (it waits for the server's first
// answers): it skips loading the other commands (about 60 ms, docs/performance.md).
if (process.argv[2] !== 'mcp') {
  (await import('./respond.js')).registerRespond(program);
  await (await import('./verbs.js')).registerVerbs(program);
  (await import('./projectCommands.js')).registerProjects(program);
  (await import('./runs.js')).registerRuns(program);
  (await import('./attach.js')).registerAttach(program);
  (await import('./merge.js')).registerMerge(program);
  (await import('./queue.js')).registerQueue(program);
  await (await import('./workflowCommands.js')).registerWorkflowCommands(program);
  await (await import('./debateCommands.js')).registerDebateCommands(program);
  (await import('./brief.js')).registerBrief(program);
}

program.parseAsync(process.argv).catch((err: unknown) => {
  const f = describeFailure(err);
  if (f.message) process.stderr.write(`overseer: ${f.message}\n`);
  if (f.stack && process.env.OVERSEER_DEBUG) process.stderr.write(`${f.stack}\n`);
  // `--version` and `--help` end here with code 0 having logged nothing: they load the CLI alone.
  if (err instanceof CommanderError && err.exitCode === 0) process.exit(0);
  void import('../log.js').then((l) => l.flushAndExit(f.code), () => process.exit(f.code));
});
