// Real child processes (test/helpers/sqlRacer.ts) that race on one database: send each a command
// at the same moment and collect their answers, with a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const RACER = join(import.meta.dirname, 'sqlRacer.ts');

export interface Racer {
  pid: number;
  send(cmd: Record<string, unknown>): Promise<Record<string, unknown>>;
  kill(): void;
}

/** Start a racer (sqlRacer.ts, or another child speaking the same protocol); resolves once it is ready for commands. */
export async function startRacer(deadlineMs = 30_000, script = RACER): Promise<Racer> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const answers: ((line: string) => void)[] = [];
  let exited = '';
  const waiting: ((err: Error) => void)[] = [];
  child.once('exit', (code, signal) => {
    exited = `racer ${child.pid} exited (${code ?? signal})`;
    waiting.splice(0).forEach((f) => f(new Error(exited)));
  });
  createInterface({ input: child.stdout! }).on('line', (line) => answers.shift()?.(line));
  const next = (what: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      if (exited) return reject(new Error(exited));
      const timer = setTimeout(() => reject(new Error(`racer ${child.pid}: no answer to ${what} within ${deadlineMs} ms`)), deadlineMs);
      waiting.push(reject);
      answers.push((line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as Record<string, unknown>);
      });
    });
  await next('start');
  return {
    pid: child.pid!,
    send(cmd) {
      const answer = next(JSON.stringify(cmd));
      child.stdin!.write(JSON.stringify(cmd) + '\n');
      return answer.then((a) => {
        if (typeof a.error === 'string') throw new Error(`racer ${child.pid}: ${a.error}`);
        return a;
      });
    },
    kill: () => void child.kill('SIGKILL'),
  };
}

/** The same command to every racer at once (written back to back), their answers in order. */
export function all(racers: readonly Racer[], cmd: Record<string, unknown>): Promise<Record<string, unknown>[]> {
  return Promise.all(racers.map((r) => r.send(cmd)));
}
