// Mounts the watch on the terminal and resolves when the person quits. The floor comes from
// the feed (hub stream or read-only database), actions go through the hub of `home`.
import { render } from 'ink';
import { App } from './App.js';
import { startFeed } from './feed.js';
import { hubCrew, type HubConnector } from './crew.js';
import type { LogSource } from './jobLog.js';

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
}

export async function runWatchApp(o: WatchOptions): Promise<void> {
  const feed = (h: Parameters<typeof startFeed>[1]) => startFeed({ home: o.home, databaseUrl: o.databaseUrl, cap: o.cap, project: o.project }, h);
  // The log and diff readers (transcript renderer, git) load when first opened.
  const openLog = async (id: string): Promise<LogSource> => (await import('./jobLog.js')).followJobLog({ home: o.home, databaseUrl: o.databaseUrl }, id);
  const openDiff = async (id: string) => (await import('./diff.js')).jobDiff({ home: o.home, databaseUrl: o.databaseUrl }, id);
  const app = render(
    <App feed={feed} crew={hubCrew(o.home, o.hub)} openLog={openLog} openDiff={openDiff} />,
    // Not ink's incrementalRendering: with a frame one line shorter than the terminal (so ink
    // never clears the whole screen) it leaves the first frame's top line behind (ink 6.8).
    { exitOnCtrlC: true, patchConsole: true, maxFps: 30 },
  );
  await app.waitUntilExit();
  app.clear();
}
