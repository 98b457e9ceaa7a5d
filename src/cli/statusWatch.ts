// `overseer status --watch [--json]` and `overseer status --floor`: the status again whenever the
// floor changes — from the running hub's floor stream, else from the database read-only (see
// src/floor/follow.ts) — until Ctrl-C. On a terminal each render replaces the last (the screen
// is cleared); piped, renders follow one another, each under its own header line, and a render
// identical to the last is skipped. `--json`: one JSON floor per line (NDJSON), every change.
import { loadConfig } from '../config.js';
import { floorNow, followFloor } from '../floor/follow.js';
import type { Floor } from '../floor/types.js';
import { CliError } from './errors.js';
import { openState, type State } from './state.js';
import { statusText, type StatusOptions } from './status.js';

const CLEAR = '\x1b[H\x1b[2J';

function since(ms: number): string {
  const s = Math.floor(ms / 1000);
  return s < 60 ? `${s}s` : s < 3600 ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** The line above each render: when, where the floor came from (and why the database, when a hub runs), the totals. */
export function watchHeader(f: Floor, note: string | null): string {
  const time = new Date(f.at).toTimeString().slice(0, 8);
  const from = f.source === 'hub'
    ? `live from the hub (pid ${f.hub.pid ?? '?'}${f.hub.uptime_ms !== null ? `, up ${since(f.hub.uptime_ms)}` : ''})`
    : `from the database (${note ?? 'no hub running'})`;
  const t = f.totals;
  return `overseer status --watch · ${time} · ${from} · ${t.running} running of ${t.cap} · ${t.queued} queued · ${t.needs_you} need you · Ctrl-C to stop`;
}

export async function printFloor(): Promise<void> {
  const { home, maxAgents, databaseUrl } = loadConfig();
  const f = await floorNow({ home, databaseUrl, cap: maxAgents });
  if (!f) throw new CliError(`No Overseer state at ${home} (no running hub, no state.db). Run overseer from your project, or set OVERSEER_HOME.`);
  process.stdout.write(`${JSON.stringify(f, null, 2)}\n`);
}

export async function watchStatus(opts: StatusOptions): Promise<void> {
  const { home, maxAgents, databaseUrl } = loadConfig();
  const ac = new AbortController();
  const stop = (): void => ac.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  // A closed pipe (`| head`) ends the watch instead of failing on the next write.
  process.stdout.once('error', stop);
  const tty = process.stdout.isTTY === true;
  let state: State | undefined;
  let note: string | null = null;
  let last = '';
  let renders = 0;
  let rendering = Promise.resolve();
  try {
    await followFloor({ home, databaseUrl, cap: maxAgents, signal: ac.signal }, {
      source: (_s, n) => { note = n; },
      floor: (f) => {
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(f)}\n`);
          return;
        }
        // The table's rows are read through the layer (a promise): frames render one at a time, in order.
        rendering = rendering.then(async () => {
          state ??= await openState();
          const body = await statusText(state, opts, f);
          if (!tty && body === last) return;
          last = body;
          const head = watchHeader(f, note);
          process.stdout.write(tty ? `${CLEAR}${head}\n\n${body}` : `${renders ? '\n' : ''}${head}\n\n${body}`);
          renders++;
        });
      },
    });
    await rendering;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    process.stdout.off('error', stop);
    await state?.close();
  }
}
