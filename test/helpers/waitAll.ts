// wait_for_agents until every job has ended, collecting what `attention` said on the way (a wait
// returns early when something needs the lead, e.g. a provider limit holding the crew).
import type { TestHub } from './hub.js';

export async function waitAll(h: Pick<TestHub, 'call'>, ids: string[], timeoutS: number): Promise<{ done: any[]; attention: any[]; timedOut: boolean }> {
  const attention: any[] = [];
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const w = await h.call('wait_for_agents', { job_ids: ids, timeout_s: Math.max(1, Math.round((deadline - Date.now()) / 1000)) });
    attention.push(...w.attention);
    if (!w.pending.length || w.timed_out) return { done: w.done, attention, timedOut: w.timed_out };
  }
}
