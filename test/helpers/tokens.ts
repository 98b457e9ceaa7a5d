// A ProcessLauncher for tests and benchmarks that need a running agent's own token (to call the
// hub's HTTP endpoint or the lock hook as that agent): it captures the token from the launch env.
import { NodeLauncher } from '../../src/launch/process.js';
import type { ChildHandle, ProcessLauncher, SpawnCmd } from '../../src/launch/types.js';

/** Delegates to the real launcher and records each child's agent token (SpawnCmd env.OVERSEER_TOKEN) by job id. */
export class TokenRecorder implements ProcessLauncher {
  private readonly inner = new NodeLauncher();
  private readonly tokens = new Map<string, string>();
  private readonly waiters = new Map<string, ((t: string) => void)[]>();

  launch(cmd: SpawnCmd): ChildHandle {
    const id = cmd.env.OVERSEER_AGENT_ID;
    const token = cmd.env.OVERSEER_TOKEN;
    if (id && token) {
      this.tokens.set(id, token);
      for (const w of this.waiters.get(id) ?? []) w(token);
      this.waiters.delete(id);
    }
    return this.inner.launch(cmd);
  }

  /** The token of `jobId`'s latest launch; rejects after `ms`. */
  token(jobId: string, ms = 30_000): Promise<string> {
    const t = this.tokens.get(jobId);
    if (t) return Promise.resolve(t);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`job ${jobId} was not launched within ${ms} ms`)), ms);
      const list = this.waiters.get(jobId) ?? [];
      list.push((tok) => { clearTimeout(timer); resolve(tok); });
      this.waiters.set(jobId, list);
    });
  }
}
