// Waiting for a workflow (src/workflow/) in a test hub to settle.
import type { Hub } from '../../src/hub.js';

/** Resolves when the workflow leaves `running` (event-driven: every job or workflow change re-checks;
 * the workflow's script run may block or finish it after its last job event). */
export function settled(hub: Hub, id: string, timeoutMs = 30_000): Promise<any> {
  return new Promise((resolve, reject) => {
    let done = false;
    const check = async (): Promise<void> => {
      await hub.workflows.idle(id);
      const w = await hub.workflows.get(id);
      if (!done && w.status !== 'running') { done = true; off(); clearTimeout(t); resolve(w); }
    };
    const offJob = hub.ctx.bus.on('job', () => void check());
    const offWf = hub.ctx.bus.on('workflow', (e) => { if (e.workflowId === id) void check(); });
    const off = (): void => { offJob(); offWf(); };
    const t = setTimeout(() => { off(); void hub.workflows.get(id).then((w) => w.status, (err: Error) => err.message).then((st) => reject(new Error(`workflow ${id} still ${st} after ${timeoutMs} ms`))); }, timeoutMs);
    void check();
  });
}
