// The loop of a racer process (test/helpers/sqlRacer.ts, lockRacer.ts, workflowRacer.ts): says it
// is ready, then runs one JSON command per stdin line and writes its JSON answer on stdout (an
// error as {ok: false, error}); `close` ends the process after its answer. `serveSqlRacer` adds the
// ops every racer on one layer connection has (open, call, close), so that each racer says only its own.
import { createInterface } from 'node:readline';
import { openSql, type SqlDb } from '../../src/store/sql/open.js';

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

/** `{op: 'call', module, fn, args}`: fn(db, ...args) of src/store/sql/<module>.ts → {ok, value}. */
export async function callStore(s: SqlDb, cmd: Record<string, unknown>): Promise<unknown> {
  const m = (await import(`../../src/store/sql/${String(cmd.module)}.js`)) as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const fn = m[String(cmd.fn)];
  if (typeof fn !== 'function') throw new Error(`src/store/sql/${String(cmd.module)}.ts has no function ${String(cmd.fn)}`);
  return { ok: true, value: (await fn(s.db, ...((cmd.args as unknown[]) ?? []))) ?? null };
}

/** The loop of a racer on one layer connection: `open` (openSql → {ok}), `call` (callStore) and
 *  `close` are served here; every other op goes to `ops[op](cmd, db)`. */
export async function serveSqlRacer(ops: Record<string, (cmd: Record<string, unknown>, s: SqlDb) => Promise<unknown>>): Promise<void> {
  let s: SqlDb | undefined;
  await serveRacer(async (cmd) => {
    if (cmd.op === 'open') {
      s = await openSql({ home: cmd.home as string, databaseUrl: cmd.url as string | undefined });
      return { ok: true };
    }
    if (cmd.op === 'close') {
      await s?.close();
      return { ok: true };
    }
    if (cmd.op === 'call') return callStore(s!, cmd);
    const op = ops[String(cmd.op)];
    if (!op) throw new Error(`unknown op ${String(cmd.op)}`);
    return op(cmd, s!);
  });
}
