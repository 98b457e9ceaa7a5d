// Kills processes an agent left behind outside its process group. Codex runs tool commands in
// their own session (setsid), so a group kill misses them; every process an agent starts
// inherits OVERSEER_AGENT_ID=<job>, which /proc/<pid>/environ still shows after the agent died
// and they were reparented. Linux only; elsewhere it does nothing.
import { readdirSync, readFileSync } from 'node:fs';
import type { Logger } from '../log.js';

/** SIGKILL every process whose environment says it belongs to jobId; returns their pids. */
export function sweepAgentProcesses(jobId: string, log?: Logger): number[] {
  const marker = `OVERSEER_AGENT_ID=${jobId}`;
  const killed: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return killed;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (!env.split('\0').includes(marker)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      /* gone already */
    }
  }
  if (killed.length) log?.warn({ jobId, pids: killed }, 'killed processes the agent left behind');
  return killed;
}
