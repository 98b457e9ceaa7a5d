// The command loop of a test's helper process (hubProc.ts, crewHub.ts): it says it is ready, then
// answers each JSON line on stdin ({n, op, …}) with one JSON line on stdout ({n, …result} or
// {n, error}), and exits after answering `lastOp`.
import { createInterface } from 'node:readline';

export const say = (o: unknown): void => void process.stdout.write(JSON.stringify(o) + '\n');

export async function commandLoop(run: (cmd: Record<string, unknown>) => Promise<Record<string, unknown>>, lastOp: string): Promise<void> {
  say({ event: 'ready' });
  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = JSON.parse(line) as Record<string, unknown>;
    try {
      say({ n: cmd.n, ...(await run(cmd)) });
    } catch (err) {
      say({ n: cmd.n, error: (err as Error).stack ?? String(err) });
    }
    if (cmd.op === lastOp) process.exit(0);
  }
}
