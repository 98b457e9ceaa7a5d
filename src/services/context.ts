// Everything the hub's services share, injected once at start (composition root: src/hub.ts).
import type { Config } from '../config.js';
import type { Clock, IdSource } from '../clock.js';
import type { Logger } from '../log.js';
import type { Db } from '../store/db.js';
import type { JobStore } from '../store/jobs.js';
import type { AgentLauncher, CommandTally, ProcessLauncher } from '../launch/types.js';
import type { PromptLibrary } from '../prompts/load.js';
import type { Bus } from './bus.js';
import type { KnowledgeBase } from '../kb/service.js';
import type { ConfineStatus } from '../confine/launcher.js';
import type { HookLedger } from '../confine/hookLedger.js';
import type { LockGuard } from '../confine/lockGuard.js';

export interface HubContext {
  config: Config;
  /** The directory the hub serves (the person's project): default cwd of agents. */
  projectDir: string;
  db: Db;
  store: JobStore;
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
  /** The knowledge base (memory injection at launch). */
  kb?: KnowledgeBase;
  /** Whether children run confined (src/confine); undefined with an injected process launcher. */
  confinement?: ConfineStatus;
  /** Undoes writes to held files made by anyone but their holder (src/confine/lockGuard.ts). */
  lockGuard?: LockGuard;
  /** Which tool calls the lock hook decided on, per job (the hook_bypassed backstop). */
  hookLedger?: HookLedger;
  /** The health monitor (src/floor/monitor.ts): hears the children's activity and their Overseer calls. */
  health?: { activity(jobId: string, line?: string): void; callStarted(jobId: string): () => void; commands(jobId: string, tally: CommandTally): void };
  /** Hears every transcript line as it is written, and each attempt's end (the search index, src/search). */
  transcripts?: { line(jobId: string, attempt: number, line: string): void; attemptEnded(jobId: string, attempt: number): void };
  /** Progress tick for blocking tools (ms). */
  progressEveryMs: number;
}

/** Who is calling a tool (src/domain/caller.ts). */
export type { Caller } from '../domain/caller.js';
