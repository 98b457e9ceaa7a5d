// Is a process running? Like pidAlive, but a zombie (killed, not yet reaped by its parent —
// e.g. a hub the asking bridge started) counts as gone.
import { readFileSync } from 'node:fs';
import { pidAlive } from '../launch/process.js';

export function processRunning(pid: number): boolean {
  if (!pidAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true; // no /proc: trust kill(0)
  }
}
