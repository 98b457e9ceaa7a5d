// A real hub process (`overseer serve`, dist/cli/main.js) with its own state directory, and a
// lead connected to it over HTTP with that directory's lead token: the many-hubs e2e tests
// (test/e2e/many-hubs.test.ts) start several on one PostgreSQL database.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MAIN, cliEnv } from './cli.js';
import { eventually } from './wait.js';
import { ok } from './mcp.js';
import { claudeBin, claudeEnv, makeTempDir } from './claude.js';
import { watchProcess } from './process.js';
import { freshDatabase } from './postgres.js';

export interface ServedHub {
  proc: ChildProcess;
  pid: number;
  home: string;
  url: string;
  lead: Client;
  /** A lead tool call's parsed result (fails the test on an error). */
  call(tool: string, args: Record<string, unknown>): Promise<any>;
  /** Resolves with the exit code (or signal name) once the process is gone. */
  exited: Promise<number | string | null>;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM and wait (kill -9 after 15 s); nothing if it is gone already. */
  stop(): Promise<void>;
}

/** `cwd`: the project it serves (default: a directory of its own beside its state). */
export async function serveHub(o: { dir: string; name: string; env: Record<string, string>; cwd?: string }): Promise<ServedHub> {
  const home = join(o.dir, o.name, 'state');
  const cwd = o.cwd ?? join(o.dir, o.name);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(cwd, { recursive: true });
  const proc = spawn(process.execPath, [MAIN, 'serve', '-p', '0'], { cwd, env: cliEnv({ ...o.env, OVERSEER_HOME: home }), stdio: ['ignore', 'pipe', 'pipe'] });
  const w = watchProcess(proc);
  const { exited } = w;
  const url = await eventually(`hub ${o.name} listening`, () => {
    if (w.gone()) throw new Error(`hub ${o.name} exited before listening:\n${w.err()}`);
    return /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(w.out())?.[1];
  }, 60_000);
  const token = readFileSync(join(home, 'lead.token'), 'utf8').trim();
  const lead = new Client({ name: `lead-${o.name}`, version: '1' });
  await lead.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return {
    proc, pid: proc.pid!, home, url, lead, exited,
    call: (tool, args) => ok(lead, tool, args),
    stderr: () => w.err(),
    async stop() {
      await lead.close().catch(() => undefined);
      if (w.gone()) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** One crew's ground for the many-hubs e2e tests: a fresh PostgreSQL database and a temp directory with a
 * `project` folder; `cleanups` (run by the test file's `after`) drops and removes them. */
export async function crewGround(prefix: string, cleanups: (() => Promise<unknown>)[]): Promise<{ url: string; dir: string; project: string }> {
  const db = await freshDatabase();
  cleanups.push(() => db.drop());
  const dir = await makeTempDir(prefix);
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const project = join(dir, 'project');
  mkdirSync(project);
  return { url: db.url, dir, project };
}

/** `overseer serve` for its own state directory on the crew's database, serving `project`, its claude children
 * on the fake model `fake`; its lead connected over HTTP; stopped by `cleanups`. */
export async function serveCrewHub(name: string, o: { dir: string; project: string; url: string; fake: { url: string } }, cleanups: (() => Promise<unknown>)[]): Promise<ServedHub> {
  const env = claudeEnv({ home: join(o.dir, `${name}-home`), baseUrl: o.fake.url, extra: { OVERSEER_DATABASE_URL: o.url, CLAUDE_BIN: claudeBin() } });
  mkdirSync(join(o.dir, `${name}-home`), { recursive: true });
  const h = await serveHub({ dir: o.dir, name, env: env as Record<string, string>, cwd: o.project });
  cleanups.push(() => h.stop());
  return h;
}
