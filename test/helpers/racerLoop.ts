// The loop of a racer process (test/helpers/sqlRacer.ts, lockRacer.ts): says it is ready, then
// runs one JSON command per stdin line and writes its JSON answer on stdout (an error as
// {ok: false, error}); `close` ends the process after its answer.
import { createInterface } from 'node:readline';

export async function serveRacer(run: (cmd: Record<string, unknown>) => Promise<unknown>): Promise<void> {
  const say = (o: unknown): void => void process.stdout.write(JSON.stringify(o) + '\n');
  say({ ready: true });
  for await (const line of createInterface({ input: process.stdin })) {
    const cmd = JSON.parse(line) as Record<string, unknown>;
    try {
      say(await run(cmd));
    } catch (err) {
      say({ ok: false, error: (err as Error).stack ?? String(err) });
    }
    if (cmd.op === 'close') process.exit(0);
  }
}
