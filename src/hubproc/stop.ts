// `overseer stop`: ask the hub serving a state directory to stop (SIGTERM: its children are
// ended and their jobs marked interrupted, the claim is released) and wait until it has gone.
import { processRunning as pidAlive } from '../hubfiles/pid.js';
import { liveHub, type HubInfo } from '../hubfiles/hubLock.js';

export type StopOutcome = { kind: 'none' } | { kind: 'stopped'; info: HubInfo; ms: number } | { kind: 'timeout'; info: HubInfo };

export async function stopHub(stateDir: string, timeoutMs = 30_000): Promise<StopOutcome> {
  const info = await liveHub(stateDir);
  if (!info) return { kind: 'none' };
  const started = Date.now();
  try {
    process.kill(info.pid, 'SIGTERM');
  } catch {
    return { kind: 'stopped', info, ms: 0 };
  }
  while (pidAlive(info.pid)) {
    if (Date.now() - started > timeoutMs) return { kind: 'timeout', info };
    await new Promise((r) => setTimeout(r, 25));
  }
  return { kind: 'stopped', info, ms: Date.now() - started };
}
