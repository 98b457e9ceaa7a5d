// `overseer watch`: the full-screen live view of the crew (src/tui/). This module only checks
// that there is something to watch and a terminal to draw on, then mounts the app.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../config.js';
import { liveHub } from '../hubfiles/hubLock.js';
import { CliError, UsageError } from './errors.js';

export async function runWatch(o: { project?: string } = {}): Promise<void> {
  const { home, maxAgents, databaseUrl } = loadConfig();
  if (o.project !== undefined) {
    const { projectNameProblem, projectNameMessage } = await import('../contract/projectNames.js');
    const problem = projectNameProblem(o.project);
    if (problem) throw new UsageError(`--${projectNameMessage(o.project, problem)}`);
  }
  // On PostgreSQL the database is there or the feed says why (src/floor/follow.ts); SQLite's file may not be yet.
  const db = join(home, 'state.db');
  if (!databaseUrl && !existsSync(db) && !(await liveHub(home))) {
    throw new CliError(`Nothing to watch: no Overseer hub is running and there is no state database for this project (looked in ${home}: no live hub in hub.json, no state.db). Start a hub with overseer serve in your project (or open your lead's Claude Code, whose overseer mcp starts one); OVERSEER_HOME picks another state directory.`);
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new CliError('overseer watch draws on an interactive terminal and reads keys from it: run it in a terminal (stdin and stdout a TTY). For a script, use overseer status [--json].');
  }
  // ink draws nothing live when CI or CONTINUOUS_INTEGRATION is set (it reads them once, on
  // import); on a real terminal the person is watching, so they do not apply to this process.
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  // React's production build: the development one checks every render and costs CPU per frame.
  process.env.NODE_ENV ??= 'production';
  // The MCP client (hubTools) loads on the first action: a watch that only watches never pays for it.
  const hubTools = () => import('./hubTools.js');
  const hub = {
    connect: async (h: string) => (await hubTools()).connectHub(h),
    refused: async (err: unknown) => err instanceof (await hubTools()).ToolRefused,
  };
  // `t` takes over an agent with `overseer attach`'s own code: attach_agent while the screen is up, then the person's part on this terminal.
  const takeOver = async (jobId: string): Promise<() => Promise<string>> => {
    const attach = await import('./attach.js');
    const a = await attach.takeOver(jobId);
    return () => attach.handOver(a);
  };
  await (await import('../tui/run.js')).runWatchApp({ home, databaseUrl, cap: maxAgents, project: o.project, hub, takeOver });
}
