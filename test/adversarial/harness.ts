// What every adversarial file needs: a real hub (real SQLite, real HTTP endpoint) whose agents
// are in-process scripted children that never end (so their per-agent tokens stay valid),
// MCP clients over HTTP as the lead or as an agent, and a snapshot of the state tables.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestHub, type TestHub } from '../helpers/hub.js';
import { ScriptedLauncher } from '../helpers/fakeLauncher.js';
import { waitForJob } from '../helpers/wait.js';
import type { Config } from '../../src/config.js';
import { sql } from 'kysely';
import { row, rows } from '../helpers/state.js';

export interface AdvHub {
  h: TestHub;
  launcher: ScriptedLauncher;
  url: string;
  port: number;
  /** Spawns a running agent (as the lead, or as `parent` over its token); returns its id and token. */
  agent(title: string, parent?: Agent, extra?: Record<string, unknown>): Promise<Agent>;
  /** An MCP client over HTTP with this bearer token. */
  client(token: string): Promise<Client>;
  stop(): Promise<void>;
}

export interface Agent { id: string; token: string; client: Client }

export interface ToolResult { isError: boolean; text: string }

/** Calls a tool and folds a JSON-RPC error and an isError result into one shape. */
export async function callTool(c: Client, name: string, args: unknown, timeoutMs = 120_000): Promise<ToolResult> {
  try {
    const r = await c.callTool({ name, arguments: args as Record<string, unknown> }, undefined, { timeout: timeoutMs });
    const text = (r.content as { type: string; text: string }[] | undefined ?? []).map((x) => x.text).join('\n');
    return { isError: r.isError === true, text };
  } catch (e) {
    return { isError: true, text: (e as Error).message };
  }
}

/** The parsed JSON of a successful call; fails the test on an error. */
export async function ok<T = any>(c: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const r = await callTool(c, name, args);
  assert.ok(!r.isError, `${name} failed: ${r.text}`);
  return JSON.parse(r.text) as T;
}

/** An MCP client over Streamable HTTP with a bearer token. */
export async function connectHttp(url: string, token: string): Promise<Client> {
  const c = new Client({ name: 'adversary', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return c;
}

export async function startAdvHub(o: { config?: Partial<Config>; project?: string } = {}): Promise<AdvHub> {
  const launcher = new ScriptedLauncher(() => ({ hang: true }));
  const h = await startTestHub({ processes: launcher, config: o.config, project: o.project });
  assert.ok(h.hub.http, 'the hub has no HTTP endpoint');
  const url = h.hub.http.url;
  const clients: Client[] = [];
  const client = async (token: string): Promise<Client> => {
    const c = await connectHttp(url, token);
    clients.push(c);
    return c;
  };
  const tokenOf = (id: string): string => {
    const cmd = launcher.spawned.filter((s) => s.env.OVERSEER_AGENT_ID === id).at(-1);
    assert.ok(cmd?.env.OVERSEER_TOKEN, `job ${id} was launched without a token`);
    return cmd.env.OVERSEER_TOKEN;
  };
  return {
    h, launcher, url, port: h.hub.http.port, client,
    async agent(title, parent, extra = {}) {
      const args = { prompt: `adversary ${title}`, title, ...extra };
      const r = parent ? await ok(parent.client, 'spawn_agent', args) : await h.call('spawn_agent', args);
      const id = r.job_id as string;
      await waitForJob(h.hub, id, (j) => j.status === 'running');
      const token = tokenOf(id);
      return { id, token, client: await client(token) };
    },
    async stop() {
      for (const c of clients) await c.close().catch(() => undefined);
      await h.stop();
    },
  };
}

/** Each state table and a column that only grows as rows are added (rowid is SQLite's alone). */
const TABLES = { jobs: 'seq', attempts: 'started_at', locks: 'acquired_at', lock_waits: 'id', notes: 'updated_at', requests: 'created_at', messages: 'id', events: 'id' } as const;

/** Row count and the highest mark of every state table, plus a digest of locks, notes and job statuses (read through the hub's layer). */
export async function snapshot(h: TestHub): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [t, mark] of Object.entries(TABLES)) {
    const r = (await row(h.hub, sql<{ n: number | string; m: number | string }>`SELECT count(*) AS n, coalesce(max(${sql.ref(mark)}), 0) AS m FROM ${sql.table(t)}`))!;
    out[t] = { n: Number(r.n), m: Number(r.m) };
  }
  out.jobStatus = await rows(h.hub, sql`SELECT id, status FROM jobs ORDER BY id`);
  out.noteVersions = await rows(h.hub, sql`SELECT * FROM notes ORDER BY key`);
  out.lockRows = await rows(h.hub, sql`SELECT path, holder FROM locks ORDER BY path`);
  return out;
}

/** The parts of two JSON snapshots that differ (for a finding's detail). */
export function diffText(before: string, after: string): string {
  const b = JSON.parse(before) as Record<string, unknown>;
  const a = JSON.parse(after) as Record<string, unknown>;
  return Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k])).map((k) => `${k}: ${JSON.stringify(b[k]).slice(0, 200)} → ${JSON.stringify(a[k]).slice(0, 200)}`).join('; ');
}
