// Benchmark 6: resident memory of a real hub process with 32 concurrent light children.
// `node dist/cli/main.js serve` runs with OVERSEER_HOME in a temp dir, OVERSEER_MAX_AGENTS=32,
// OVERSEER_PORT=0 and CLAUDE_BIN=bench/fixtures/sleep-agent.sh (prints nothing, then
// `exec sleep 60`). A lead client connects over Streamable HTTP with the lead token. VmRSS of
// the hub is read from /proc idle, then with 32 jobs `running` (plus VmHWM, the peak); then
// every job is cancelled, the hub gets SIGTERM, and no sleep child may be left behind.
// Needs dist/ (npm run build). Run alone: node --import tsx bench/hub-rss.ts
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { REPO_ROOT, cleanEnv, f1, fixture, out, removeDir, tempDir } from './common.js';

const CHILDREN = 32;
const POLL_MS = 100;
const RUNNING_DEADLINE_MS = 60_000;

export interface HubRssResult {
  idleMb: number;
  with32Mb: number;
  peakMb: number;
  perChildMb: number;
  /** child processes still alive after every cancel_agent returned; should be 0 */
  aliveAfterCancel: number;
  /** child processes found after the hub stopped (killed by the benchmark); should be 0 */
  leftoverChildren: number;
}

/** A field of /proc/<pid>/status in MB (the kernel reports kB). */
function procStatusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
  if (!m) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) / 1024;
}

/** Pids of live processes whose environment carries BENCH_RSS_TAG=<tag> (the hub and its children). */
function taggedPids(tag: string): number[] {
  const needle = `BENCH_RSS_TAG=${tag}`;
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const env = readFileSync(`/proc/${e}/environ`, 'latin1');
      if (!env.split('\0').includes(needle)) continue;
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      if (/\)\s+Z\s/.test(stat)) continue; // zombie: already dead, waiting for its parent
      pids.push(Number(e));
    } catch {
      /* gone, or not ours */
    }
  }
  return pids;
}

async function until<T>(what: string | (() => string), deadlineMs: number, fn: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${deadlineMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(POLL_MS);
  }
}

function exited(p: ChildProcess): Promise<void> {
  return p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', () => r()));
}

/** Wait for `p` to exit, at most `ms` (the timer is cleared so it keeps nothing alive). */
async function exitedWithin(p: ChildProcess, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([exited(p), new Promise<void>((r) => { timer = setTimeout(r, ms); })]);
  clearTimeout(timer);
  return p.exitCode !== null || p.signalCode !== null;
}

export async function benchHubRss(): Promise<HubRssResult> {
  const cli = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run npm run build first`);
  const dir = await tempDir('rss');
  const tag = path.basename(dir);
  const state = path.join(dir, 'state');
  let hubProc: ChildProcess | undefined;
  let client: Client | undefined;
  let stderr = '';
  try {
    const project = dir;
    hubProc = spawn(process.execPath, [cli, 'serve'], {
      cwd: project,
      env: cleanEnv({
        HOME: path.join(dir, 'home'),
        OVERSEER_HOME: state,
        OVERSEER_MAX_AGENTS: String(CHILDREN),
        OVERSEER_PORT: '0',
        OVERSEER_LOG_LEVEL: 'warn',
        CLAUDE_BIN: fixture('sleep-agent.sh'),
        BENCH_RSS_TAG: tag,
      }),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const hub = hubProc;
    hub.stdout!.resume();
    hub.stderr!.setEncoding('utf8');
    hub.stderr!.on('data', (d: string) => { stderr = (stderr + d).slice(-4000); });
    const pid = hub.pid!;

    const info = await until('hub.json', 20_000, () => {
      if (hub.exitCode !== null) throw new Error(`the hub exited with ${hub.exitCode}: ${stderr}`);
      try {
        // hub.json appears once the hub listens (written by the holder of the state directory's claim).
        const i = JSON.parse(readFileSync(path.join(state, 'hub.json'), 'utf8')) as { url: string; pid: number };
        return i.url ? i : undefined;
      } catch {
        return undefined;
      }
    });
    const token = readFileSync(path.join(state, 'lead.token'), 'utf8').trim();
    const c = new Client({ name: 'bench-rss-lead', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(info.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    client = c;
    const call = async (tool: string, args: Record<string, unknown>): Promise<any> => {
      const r = await c.callTool({ name: tool, arguments: args }, undefined, { timeout: 60_000 });
      const text = (r.content as { text: string }[]).map((x) => x.text).join('\n');
      if (r.isError) throw new Error(`${tool} failed: ${text}`);
      return JSON.parse(text);
    };

    // Idle: one round trip done (the lead's MCP session exists), settle a moment.
    await call('list_agents', {});
    await sleep(500);
    const idleMb = procStatusMb(pid, 'VmRSS');

    const ids: string[] = [];
    for (let i = 0; i < CHILDREN; i++) ids.push((await call('spawn_agent', { prompt: `bench rss child ${i}`, title: `rss ${i}` })).job_id);
    // Poll list_agents (status running), following next_cursor: results are paged by size.
    let seen = 0;
    await until(() => `${CHILDREN} running jobs (last poll saw ${seen})`, RUNNING_DEADLINE_MS, async () => {
      let n = 0;
      let cursor: string | undefined;
      do {
        const l = await call('list_agents', { status: 'running', limit: 200, ...(cursor ? { cursor } : {}) });
        n += l.agents.length;
        cursor = l.next_cursor ?? undefined;
      } while (cursor);
      seen = n;
      return n >= CHILDREN ? true : undefined;
    });
    await sleep(500);
    const with32Mb = procStatusMb(pid, 'VmRSS');
    const peakMb = procStatusMb(pid, 'VmHWM');
    const sleeping = taggedPids(tag).filter((p) => p !== pid).length;

    await Promise.all(ids.map((id) => call('cancel_agent', { job_id: id })));
    await sleep(100);
    const afterCancel = taggedPids(tag).filter((p) => p !== pid).length;
    await c.close().catch(() => undefined);
    client = undefined;

    hub.kill('SIGTERM');
    if (!(await exitedWithin(hub, 15_000))) {
      out('  (the hub did not exit within 15 s of SIGTERM; killing its process group)\n');
      try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
      await exited(hub);
    }
    await sleep(200);
    const left = taggedPids(tag);
    for (const p of left) {
      try { process.kill(-p, 'SIGKILL'); } catch { /* not a group leader or gone */ }
      try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    }

    const perChildMb = (with32Mb - idleMb) / CHILDREN;
    out(
      `hub RSS idle: ${f1(idleMb)} MB; with ${CHILDREN} running children: ${f1(with32Mb)} MB (peak VmHWM ${f1(peakMb)} MB); ` +
        `per child: ${(perChildMb * 1024).toFixed(0)} kB\n` +
        `  ${sleeping} child processes seen while running; ${afterCancel} alive after cancel_agent; after hub SIGTERM: ${left.length} left${left.length ? ' (killed by the benchmark)' : ''}\n`,
    );
    return { idleMb, with32Mb, peakMb, perChildMb, aliveAfterCancel: afterCancel, leftoverChildren: left.length };
  } finally {
    await client?.close().catch(() => undefined);
    if (hubProc && hubProc.exitCode === null && hubProc.signalCode === null) {
      try { process.kill(-hubProc.pid!, 'SIGKILL'); } catch { /* gone */ }
      await exitedWithin(hubProc, 5000);
    }
    for (const p of taggedPids(tag)) {
      try { process.kill(-p, 'SIGKILL'); } catch { /* not a group leader or gone */ }
      try { process.kill(p, 'SIGKILL'); } catch { /* gone */ }
    }
    await removeDir(dir);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchHubRss().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
