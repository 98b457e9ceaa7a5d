// Waiting for a debate (src/debate/) in a test hub to leave `running` (event-driven: every
// debate and job change re-checks).
import type { Hub } from '../../src/hub.js';
import type { DebateView } from '../../src/debate/index.js';

export function debateSettled(hub: Hub, id: string, timeoutMs = 120_000): Promise<DebateView> {
  return new Promise((resolve, reject) => {
    let done = false;
    const check = async (): Promise<void> => {
      await hub.debates.idle(id);
      const d = await hub.debates.get(id);
      if (!done && d.status !== 'running') { done = true; offs.forEach((f) => f()); clearTimeout(t); resolve(d); }
    };
    const offs = [hub.ctx.bus.on('job', () => void check()), hub.ctx.bus.on('debate', () => void check())];
    const t = setTimeout(() => { offs.forEach((f) => f()); void hub.debates.get(id).then((d) => reject(new Error(`debate ${id} still ${d.status} after ${timeoutMs} ms: ${JSON.stringify(d.rounds)}`)), reject); }, timeoutMs);
    void check();
  });
}
