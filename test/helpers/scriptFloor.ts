// The set-up two end-to-end files share for a script run on the floor: a real hub whose children
// are scripted in process (a `TASK:slow` child holds until the newest gate in `held` opens, every
// other one answers at once), the CLI built, and the terminals, gates and browser the tests open
// cleaned up after the file.
import { after, before } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestHub, type TestHub } from './hub.js';
import { ScriptedLauncher } from './fakeLauncher.js';
import type { Gate } from './gate.js';
import { buildCli } from './cli.js';
import type { Terminal } from './tmux.js';

export interface ScriptFloor { h: TestHub; browser: Browser | undefined; readonly held: Gate[]; readonly terminals: Terminal[] }

export const task = (prompt: string): string => /TASK:(\S+)/.exec(prompt)?.[1] ?? '?';

/** Registers the file's before/after hooks; the hub is in `.h` once the tests run. */
export function scriptFloorSuite(): ScriptFloor {
  const f = { h: undefined as unknown as TestHub, browser: undefined as Browser | undefined, held: [] as Gate[], terminals: [] as Terminal[] };
  before(async () => {
    buildCli();
    f.h = await startTestHub({
      processes: new ScriptedLauncher(async (prompt) => {
        if (task(prompt) === 'slow') await f.held[f.held.length - 1]!.wait;
        return { resultText: `did ${task(prompt)}` };
      }),
    });
  });
  after(async () => {
    for (const t of f.terminals) t.kill();
    for (const g of f.held) g.open();
    await f.browser?.close();
    await f.h?.stop();
  });
  return f;
}
