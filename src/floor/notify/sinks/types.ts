// The shape every sink has, and what sinks get from outside (so tests can swap the world).
import type { NotifyPayload } from '../payload.js';

/** One destination. `send` resolves when delivered and rejects with a readable Error when not. */
export interface Sink {
  readonly name: string;
  readonly type: string;
  send(p: NotifyPayload): Promise<void>;
}

/** The parts of the machine sinks use: environment (PATH, inherited by commands), platform, working directory, fetch. */
export interface SinkDeps {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  cwd: string;
  fetch: typeof fetch;
}
