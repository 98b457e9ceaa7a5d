// `overseer demo`: a real orchestration. A real lead `claude` gets Overseer over stdio and
// fans out to three real child `claude` processes that each write a file in a fresh temp git
// repository. Against the bundled fake model by default (offline); `--live` uses the real one.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFakeAnthropic } from '../fakemodel/fakeAnthropic.js';
import { demoScripts, DEMO_FILES, DEMO_LEAD_PROMPT } from '../fakemodel/demoScripts.js';
import { packageRoot } from '../config.js';
import { gitSync } from '../git/exec.js';
import { ClaudeLauncher } from '../launch/claude/launcher.js';
import { childEnvFrom } from '../launch/childEnv.js';
import { parseClaudeLine } from '../launch/claude/events.js';
import { renderEvent } from '../launch/claude/transcript.js';
import { LineSplitter } from '../launch/lineSplitter.js';
import { CliError, table } from './status.js';
import { openReadOnly } from '../store/sql/readOnly.js';
import { stopHub } from '../hubproc/stop.js';

const out = (s: string): void => { process.stdout.write(`${s}\n`); };

export interface DemoResult {
  ok: boolean;
  repo: string;
  files: { file: string; ok: boolean }[];
  jobs: { id: string; status: string; title: string; turns: number; cost_usd: number }[];
  leadExit: number | null;
  seconds: number;
}

export async function runDemo(o: { live?: boolean; keep?: boolean }): Promise<DemoResult> {
  const started = Date.now();
  const claude = new ClaudeLauncher({ bin: process.env.CLAUDE_BIN, packageRoot: packageRoot() }).resolveBin();
  if (!claude) throw new CliError('No claude binary found. Install Claude Code (npm i -g @anthropic-ai/claude-code) or set CLAUDE_BIN.');
  const dir = mkdtempSync(join(tmpdir(), 'overseer-demo-'));
  const repo = join(dir, 'repo');
  mkdirSync(repo);
  const git = (...a: string[]): string => gitSync(a, { cwd: repo }).stdout;
  git('init', '-q', '-b', 'main');
  writeFileSync(join(repo, 'README.md'), '# Demo repository\n');
  git('add', '-A');
  git('-c', 'user.name=Overseer Demo', '-c', 'user.email=demo@localhost', 'commit', '-qm', 'initial');

  const fake = o.live ? undefined : await startFakeAnthropic({ scripts: demoScripts });
  const env: NodeJS.ProcessEnv = { ...childEnvFrom(process.env), OVERSEER_HOME: join(dir, 'state'), OVERSEER_LOG_LEVEL: 'info' };
  if (fake) {
    Object.assign(env, {
      HOME: join(dir, 'home'), ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'sk-demo-fake', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1', CLAUDE_CODE_MAX_RETRIES: '1', ENABLE_TOOL_SEARCH: 'false', DISABLE_AUTOUPDATER: '1',
    });
    for (const k of Object.keys(env)) if (k.startsWith('ANTHROPIC_') && !['ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'].includes(k)) delete env[k];
    mkdirSync(env.HOME!, { recursive: true });
  }
  const mainJs = fileURLToPath(new URL('./main.js', import.meta.url));
  const mcpConfig = { mcpServers: { overseer: { type: 'stdio', command: process.execPath, args: [mainJs, 'mcp'], env: { OVERSEER_HOME: env.OVERSEER_HOME! } } } };
  const prompt = o.live
    ? 'Use the overseer MCP tools to fan out three agents in parallel. Each creates one file in this repository: ' + DEMO_FILES.map((f) => `${f.file} containing ${JSON.stringify(f.content)}`).join('; ') + '. Spawn them with spawn_agent, wait for all of them with wait_for_agents, then summarise what each did in three lines.'
    : DEMO_LEAD_PROMPT;

  out(`Overseer demo — ${o.live ? 'LIVE model' : 'offline, scripted fake model'}`);
  out(`repository: ${repo}`);
  out('lead: a real `claude -p` with Overseer over stdio; children: real `claude` processes spawned by the hub\n');

  const args = ['-p', prompt, '--output-format', 'stream-json', '--verbose', '--mcp-config', JSON.stringify(mcpConfig), '--strict-mcp-config',
    '--permission-mode', 'dontAsk', '--allowedTools', 'mcp__overseer__*', '--max-turns', '12'];
  const leadExit = await new Promise<number | null>((resolve) => {
    const child = spawn(claude, args, { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const split = new LineSplitter((line) => {
      const p = parseClaudeLine(line);
      if (!p.ok) return;
      const text = renderEvent(p.event, { maxFieldChars: 300 });
      if (text) out(`  lead │ ${text.replace(/\n/g, '\n  lead │ ')}`);
    });
    child.stdout.on('data', (c: Buffer) => split.push(c));
    let err = '';
    child.stderr.on('data', (c: Buffer) => { err += c.toString(); });
    const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 300_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      split.end();
      if (code !== 0 && err.trim()) out(`  lead stderr: ${err.trim().slice(-1000)}`);
      resolve(code);
    });
  });
  // The hub is a process of its own that outlives its lead: stop it before reading and removing its state.
  await stopHub(join(dir, 'state'));
  await fake?.close();

  const files = DEMO_FILES.map((f) => ({ file: f.file, ok: existsSync(join(repo, f.file)) && readFileSync(join(repo, f.file), 'utf8') === f.content }));
  let jobs: DemoResult['jobs'] = [];
  const dbFile = join(dir, 'state', 'state.db');
  if (existsSync(dbFile)) {
    const s = openReadOnly(dbFile);
    try {
      jobs = await s.sql.db.selectFrom('jobs').select(['id', 'status', 'title', 'turns', 'cost_usd']).orderBy('seq').execute();
    } finally {
      await s.close();
    }
  }
  const seconds = (Date.now() - started) / 1000;
  out('\nJobs the hub ran:');
  out(table([['JOB', 'STATUS', 'TURNS', 'COST', 'TITLE'], ...jobs.map((j) => [j.id, j.status, String(j.turns), `$${j.cost_usd.toFixed(4)}`, j.title])]).replace(/^/gm, '  '));
  out('\nFiles in the repository:');
  for (const f of files) out(`  ${f.ok ? '✔' : '✘'} ${f.file}`);
  const ok = leadExit === 0 && files.every((f) => f.ok) && jobs.length === 3 && jobs.every((j) => j.status === 'succeeded');
  out(`\n${ok ? 'Demo succeeded' : 'Demo FAILED'} in ${seconds.toFixed(1)} s (lead exit ${leadExit}).`);
  if (o.keep) out(`Kept ${dir} (state in ${join(dir, 'state')}; try: OVERSEER_HOME=${join(dir, 'state')} overseer status)`);
  else rmSync(dir, { recursive: true, force: true });
  if (!ok) process.exitCode = 1;
  return { ok, repo, files, jobs, leadExit, seconds };
}
