// The hub's MCP server: one method table per role, built once (tools, and for the lead the
// prompts and resources), and a session per connection (session.ts) on a transport: HTTP
// (http.ts, via src/server/http.ts) or any SDK-shaped transport (memory.ts: the tests'
// in-memory pair, stdio). Replaces the MCP SDK's McpServer, whose per-session tool registration
// and schemas cost memory and time (docs/performance-native-mcp.md).
import type { Caller } from '../services/context.js';
import type { Logger } from '../log.js';
import type { ToolDef } from '../tools/registry.js';
import { registerPrompts, type PromptDeps } from './prompts.js';
import { registerResources, type ResourceDeps } from './resources.js';
import { methodTable, type Methods } from './methods.js';
import { McpSession, type Outbound } from './session.js';
import { ToolTable, type OnCall } from './tools.js';
import { connectTransport, type SdkTransport } from './memory.js';
import { ResourceTable } from './resourceTable.js';

export const SERVER_NAME = 'overseer';

export interface ServerDeps {
  tools: readonly ToolDef[];
  version: string;
  log: Logger;
  /** Runs around every tool call (renews the caller's locks, tracks an agent's time in our tools, the lead's digest). */
  onCall?: OnCall;
  /** MCP prompts (recipes and project templates) and resources, for leads. */
  prompts?: PromptDeps;
  resources?: ResourceDeps;
}

const INSTRUCTIONS: Record<Caller['role'], string> = {
  lead: 'Overseer runs a crew of coding agents for you. spawn_agent starts one (returns a job_id at once); wait_for_agents blocks until they end; get_agent / read_agent_output show what they did.',
  agent: 'You are an Overseer agent. Use report_status while you work and finish when done.',
};

/** An MCP server for one connection, to attach to a transport. */
export interface McpConnection {
  /** Once connected. */
  readonly session: McpSession | undefined;
  connect(transport: SdkTransport): Promise<void>;
  close(): Promise<void>;
}

export class NativeMcpServer {
  private readonly tables = new Map<Caller['role'], { methods: Methods; tools: ToolTable }>();
  private readonly sessions = new Set<McpSession>();
  private stopWatching?: () => void;

  constructor(private readonly deps: ServerDeps) {}

  /** The role's method table (built at first use, then shared by every session of the role). */
  methods(role: Caller['role']): Methods {
    return this.table(role).methods;
  }

  tools(role: Caller['role']): ToolTable {
    return this.table(role).tools;
  }

  /** A new session of `caller` whose output goes to `out`. */
  session(caller: Caller, out: Outbound): McpSession {
    const s = new McpSession(this.methods(caller.role), caller, out);
    this.sessions.add(s);
    s.onClose(() => this.sessions.delete(s));
    return s;
  }

  /** A session of `caller` for an SDK-shaped transport, made on connect; `opened` is told of it. */
  connection(caller: Caller, opened?: (s: McpSession) => void): McpConnection {
    let session: McpSession | undefined;
    let close = async (): Promise<void> => undefined;
    return {
      get session() { return session; },
      connect: async (t) => {
        close = await connectTransport(t, (out) => {
          session = this.session(caller, out);
          opened?.(session);
          return session;
        });
      },
      close: () => close(),
    };
  }

  /** Send a notification to every open session of a role. */
  broadcast(role: Caller['role'], method: string): void {
    for (const s of this.sessions) if (s.caller.role === role) s.notify(method);
  }

  /** Stop the prompts watcher and close every session. */
  close(): void {
    this.stopWatching?.();
    for (const s of [...this.sessions]) s.close();
  }

  private table(role: Caller['role']): { methods: Methods; tools: ToolTable } {
    let t = this.tables.get(role);
    if (t) return t;
    const d = this.deps;
    const methods = methodTable({ name: SERVER_NAME, version: d.version }, { tools: { listChanged: true }, logging: {} }, INSTRUCTIONS[role]);
    const tools = new ToolTable(d.tools, role, d.log, d.onCall);
    methods.requests.set('tools/list', () => tools.listResult());
    methods.requests.set('tools/call', (params, ctx) => tools.call(params, ctx.session.caller, ctx));
    // Resources ignore subtree rights and prompts are slash commands for the person: lead only.
    if (role === 'lead') {
      if (d.prompts) this.stopWatching = registerPrompts(methods, d.prompts, () => this.broadcast('lead', 'notifications/prompts/list_changed'));
      if (d.resources) registerResources(new ResourceTable(methods), d.resources);
    }
    this.tables.set(role, (t = { methods, tools }));
    return t;
  }
}
