// Harness for integration and end-to-end tests: a real Hub (real SQLite file, real HTTP
// endpoint on port 0, real claude children) against the fake Anthropic API, with a lead
// client linked in memory. `call` returns the parsed JSON result or throws the error text.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Hub } from '../../src/hub.js';
import { loadConfigFrom, type Config } from '../../src/config.js';
import { startFakeAnthropic, type FakeAnthropic, type Script } from '../../src/fakemodel/fakeAnthropic.js';
import { claudeBin, claudeEnv, makeTempDir } from './claude.js';
import type { Caller } from '../../src/services/context.js';
import type { ProcessLauncher } from '../../src/launch/types.js';
import type { Logger } from '../../src/log.js';
import type { Clock } from '../../src/clock.js';
import { freshDatabase } from './postgres.js';

export interface TestHub {
  hub: Hub;
  fake: FakeAnthropic;
  dir: string;
  home: string;
  project: string;
  client: Client;
  call<T = any>(tool: string, args: Record<string, unknown>, opts?: { onprogress?: (p: unknown) => void; signal?: AbortSignal }): Promise<T>;
  callRaw(tool: string, args: Record<string, unknown>): Promise<{ isError?: boolean; text: string }>;
  connect(caller: Caller): Promise<Client>;
  stop(opts?: { keep?: boolean }): Promise<void>;
}

export class ToolError extends Error {}

/**
 * OVERSEER_TEST_DATABASE=postgres runs the hubs of the tests on PostgreSQL (`.ci/run` runs the
 * integration tests so, a second time): each state directory gets a fresh database of its own, kept
 * while a test restarts a hub on the same directory (`stop({ keep: true })`), dropped with it.
 */
const databases = new Map<string, { url: string; drop(): Promise<void> }>();

async function testDatabase(home: string): Promise<string | undefined> {
  if (process.env.OVERSEER_TEST_DATABASE !== 'postgres') return undefined;
  let d = databases.get(home);
  if (!d) {
    d = await freshDatabase();
    databases.set(home, d);
  }
  return d.url;
}

/** The PostgreSQL URL of the test hub whose state directory is `home` (none on SQLite): a CLI run against that state needs it (test/helpers/overseerCli.ts). */
export function testDatabaseUrl(home: string): string | undefined {
  return databases.get(home)?.url;
}

async function dropTestDatabase(home: string): Promise<void> {
  const d = databases.get(home);
  databases.delete(home);
  await d?.drop();
}

export async function startTestHub(o: {
  scripts?: Record<string, Script>;
  config?: Partial<Config>;
  project?: string;
  fake?: FakeAnthropic;
  processes?: ProcessLauncher;
  progressEveryMs?: number;
  /** Reuse this directory (state in <dir>/state unless config.home says otherwise, HOME in <dir>/home) instead of a fresh one. */
  dir?: string;
  /** Extra variables for the children's environment (e.g. a Codex provider's API key). */
  extraEnv?: Record<string, string>;
  /** The hub's logger (default: silent), for tests that read what the hub logged. */
  log?: Logger;
  /** The hub's clock (default: the system's), for tests that move time (schedules). */
  clock?: Clock;
  /** The Hub class (default: the sources'); benchmarks pass the built one (bench/common.ts builtHub). */
  hubClass?: typeof Hub;
} = {}): Promise<TestHub> {
  const dir = o.dir ?? (await makeTempDir('ovs-test'));
  const home = o.config?.home ?? join(dir, 'state');
  const project = o.project ?? dir;
  const fake = o.fake ?? (await startFakeAnthropic({ scripts: o.scripts }));
  if (o.fake && o.scripts) for (const [k, v] of Object.entries(o.scripts)) fake.addScript(k, v);
  // Worktrees go under the test's own directory, never into the developer's ~/.local/share.
  // A config that names databaseUrl — even undefined: SQLite — decides; otherwise the run's choice.
  const databaseUrl = o.config && 'databaseUrl' in o.config ? o.config.databaseUrl : await testDatabase(home);
  const config = loadConfigFrom({ home, claudeBin: claudeBin(), killGraceMs: 2000, worktreesDir: join(dir, 'worktrees'), ...o.config, ...(databaseUrl ? { databaseUrl } : {}) });
  const childEnv = claudeEnv({ home: join(dir, 'home'), baseUrl: fake.url, extra: o.extraEnv });
  const hub = await (o.hubClass ?? Hub).open({ config, projectDir: project, childEnv, processes: o.processes, progressEveryMs: o.progressEveryMs, kbGlobalDb: join(dir, 'global-kb.db'), log: o.log, clock: o.clock });
  await hub.start();
  const clients: Client[] = [];
  const connect = async (caller: Caller): Promise<Client> => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const server = hub.server(caller);
    await server.connect(a);
    const client = new Client({ name: 'test-lead', version: '1.0.0' });
    await client.connect(b);
    clients.push(client);
    return client;
  };
  const client = await connect({ role: 'lead' });
  const callRaw = async (tool: string, args: Record<string, unknown>, opts: { onprogress?: (p: unknown) => void; signal?: AbortSignal } = {}) => {
    const r = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000, onprogress: opts.onprogress, signal: opts.signal, resetTimeoutOnProgress: true });
    const content = r.content as { type: string; text: string }[];
    return { isError: r.isError as boolean | undefined, text: content.map((c) => c.text).join('\n') };
  };
  return {
    hub, fake, dir, home, project, client, connect,
    callRaw,
    async call(tool, args, opts) {
      const r = await callRaw(tool, args, opts);
      if (r.isError) throw new ToolError(r.text);
      return JSON.parse(r.text);
    },
    async stop(opts = {}) {
      for (const c of clients) await c.close().catch(() => undefined);
      await hub.stop();
      if (!o.fake) await fake.close();
      if (!opts.keep) {
        await rm(dir, { recursive: true, force: true });
        await dropTestDatabase(home);
      }
    },
  };
}
