// Mounts the watch on the terminal and resolves when the person quits. The floor comes from
// the feed (hub stream or read-only database), actions go through the hub of `home`.
// Taking over an agent (`t`) leaves the screen: the app is unmounted (ink turns raw mode off and
// stops listening), the person's part of `overseer attach` runs in the foreground on this terminal
// (the interactive CLI a child with stdio inherited, then what becomes of the job), and the app is
// mounted again with the view it had and the line saying how the takeover ended.
import { render } from 'ink';
import { App, type Kept } from './App.js';
import { startFeed } from './feed.js';
import { hubCrew, type HubConnector } from './crew.js';
import type { LogSource } from './jobLog.js';
import type { Status } from './components.js';

export interface WatchOptions {
  home: string;
  /** The PostgreSQL database of the state (config databaseUrl), for the feed; else SQLite's file in `home`. */
  databaseUrl?: string | undefined;
  /** The cap on running agents (config maxAgents), shown when the floor is read from the database. */
  cap: number;
  /** Only this project's crew (overseer watch --project). */
  project?: string;
  /** How actions reach the lead's tools on the hub. */
  hub: HubConnector;
  /** `overseer attach`'s two parts (src/cli/attach.ts): take over through the hub (a refusal throws), then the person's part on this terminal. */
  takeOver: (jobId: string) => Promise<() => Promise<string>>;
}

/** Clears the terminal and puts the cursor home. */
const CLEAR = '\x1b[2J\x1b[3J\x1b[H';

export async function runWatchApp(o: WatchOptions): Promise<void> {
  const feed = (h: Parameters<typeof startFeed>[1]) => startFeed({ home: o.home, databaseUrl: o.databaseUrl, cap: o.cap, project: o.project }, h);
  // The log and diff readers (transcript renderer, git) load when first opened.
  const openLog = async (id: string): Promise<LogSource> => (await import('./jobLog.js')).followJobLog({ home: o.home, databaseUrl: o.databaseUrl }, id);
  const openDiff = async (id: string) => (await import('./diff.js')).jobDiff({ home: o.home, databaseUrl: o.databaseUrl }, id);
  let kept: (Kept & { status: Status }) | undefined;
  for (;;) {
    let away: { kept: Kept; handOver: () => Promise<string> } | undefined;
    const app = render(
      <App feed={feed} crew={hubCrew(o.home, o.hub)} openLog={openLog} openDiff={openDiff} takeOver={o.takeOver} kept={kept}
        leave={(k, handOver) => { away = { kept: k, handOver }; app.unmount(); }} />,
      // Not ink's incrementalRendering: with a frame one line shorter than the terminal (so ink
      // never clears the whole screen) it leaves the first frame's top line behind (ink 6.8).
      { exitOnCtrlC: true, patchConsole: true, maxFps: 30 },
    );
    await app.waitUntilExit();
    app.clear();
    if (!away) return;
    const readAgain = stopReading(process.stdin);
    // ink's unmount unrefs stdin: the person's answer after the CLI exits (readline) must keep this process alive.
    process.stdin.ref();
    process.stdout.write(CLEAR);
    let status: Status;
    try {
      status = { text: await away.handOver(), tone: 'ok' };
    } catch (err) {
      status = { text: (err as Error).message, tone: 'error' };
    }
    readAgain();
    // Raw at once, not only when ink's input hook runs after its first frame: a key typed as the
    // watch reappears would otherwise wait in the terminal's line buffer for an Enter.
    if (process.stdin.isTTY) process.stdin.setRawMode(true);
    process.stdout.write(CLEAR);
    kept = { ...away.kept, status };
  }
}

/** The tty stream's handle, as node's net.Socket keeps it (not a public API: see stopReading). */
interface TtyHandle { reading?: boolean; readStop?: () => number; readStart?: () => number }

/**
 * Stop this process reading the terminal until something here reads again; returns the call that
 * makes sure it reads again. ink's unmount removes its listener and turns raw mode off but leaves
 * the tty handle reading: the next chunk typed — the person's first keys to the taken-over CLI,
 * which reads the same terminal — would land here and be lost. Node's tty stream has no public call
 * that stops its handle (pause() does not), so the handle's readStop is used; and as the stream
 * still thinks a read is pending, it would never start the handle again by itself: a resume()
 * (readline asking what becomes of the job) or the returned call (before ink mounts again) does.
 */
function stopReading(stdin: NodeJS.ReadStream): () => void {
  stdin.pause();
  const h = (stdin as unknown as { _handle?: TtyHandle })._handle;
  if (!h?.reading || typeof h.readStop !== 'function' || typeof h.readStart !== 'function') return () => undefined;
  h.reading = false;
  h.readStop();
  const restart = (): void => {
    if (h.reading) return;
    h.reading = true;
    h.readStart!();
  };
  stdin.once('resume', restart);
  return () => { stdin.off('resume', restart); restart(); };
}
