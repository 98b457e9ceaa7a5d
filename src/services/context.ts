// Everything the hub's services share, injected once at start (composition root: src/hub.ts).
// Only what every service may use: a collaborator some services need is passed to their
// constructors, never added here (docs/architecture.md, "The composition root").
import type { Config } from '../config.js';
import type { Clock, IdSource } from '../clock.js';
import type { Logger } from '../log.js';
import type { SqlDb } from '../store/sql/open.js';
import type { AgentLauncher, ProcessLauncher } from '../launch/types.js';
import type { PromptLibrary } from '../prompts/load.js';
import type { Bus } from './bus.js';

export interface HubContext {
  config: Config;
  /** The directory the hub serves (the person's project): default cwd of agents. */
  projectDir: string;
  /** The data layer (issue 29): every service reads and writes through it. */
  sql: SqlDb;
  bus: Bus;
  clock: Clock;
  ids: IdSource;
  log: Logger;
  processes: ProcessLauncher;
  launchers: Partial<Record<'claude' | 'codex', AgentLauncher>>;
  prompts: PromptLibrary;
  /** Children's MCP endpoint; known once the HTTP listener is up. */
  mcpUrl(): string;
  /** Environment children inherit. */
  childEnv: NodeJS.ProcessEnv;
  /** Progress tick for blocking tools (ms). */
  progressEveryMs: number;
}

/** Who is calling a tool (src/domain/caller.ts). */
export type { Caller } from '../domain/caller.js';
