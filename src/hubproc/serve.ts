// The hub process: `overseer serve` (foreground, prints where it listens, runs until stopped)
// and `overseer serve --background` (what `overseer mcp` starts: silent, exits after the idle
// grace period). Both take the state directory's claim first; a foreground serve that finds
// another hub says which and exits 1, a background one exits 0 without a word (the bridge
// that started it connects to the hub that won).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { Hub } from '../hub.js';
import { acquireHubLock, tryAcquireHub, type HubClaim } from '../hubfiles/hubLock.js';
import { IdleTimer } from './idle.js';
import { claimPath } from '../hubfiles/claim.js';
import { STOP_MARGIN_MS, withDeadline } from './stopDeadline.js';

export interface ServeOptions {
  config: Config;
  log: Logger;
  background: boolean;
  cwd: string;
  out: (s: string) => void;
  exit: (code: number) => void;
}

async function claimOrReport(o: ServeOptions): Promise<HubClaim | undefined> {
  if (o.background) {
    const claim = tryAcquireHub(o.config.home);
    if (!claim) o.log.info({ home: o.config.home }, 'another hub holds the claim on this state directory: not starting');
    return claim;
  }
  const lock = await acquireHubLock(o.config.home, o.log);
  if (lock.kind === 'acquired') return lock.claim;
  const i = lock.info;
  process.stderr.write(`A hub already runs for ${o.config.home}: pid ${i.pid}, port ${i.port} (${i.url}), since ${i.started_at}. Connect to it with the lead token in ${join(o.config.home, 'lead.token')}, or stop it with overseer stop.\n`);
  return undefined;
}

export async function runHubProcess(o: ServeOptions): Promise<void> {
  o.log.info({ background: o.background, home: o.config.home }, 'hub process starting');
  const claim = await claimOrReport(o);
  if (!claim) return o.exit(o.background ? 0 : 1);
  o.log.info('claimed the state directory');
  let hub: Hub;
  try {
    hub = await Hub.open({
      config: o.config, projectDir: o.cwd, log: o.log, publish: (info) => claim.publish(info),
      // Found dead by another hub (paused past the timeout): its children are killed already and their jobs
      // were settled by that hub; anything more this process wrote would undo that. Exit at once.
      onFenced: () => {
        o.log.error('this hub was found dead by another hub, which took over its jobs: its children were ended; exiting');
        void claim.release(); // synchronous in fact: hub.json removed, the claim let go
        o.exit(1);
      },
    });
  } catch (err) {
    await claim.release(); // a wrong database URL: the state directory is free again for a corrected start
    throw err;
  }
  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    o.log.info({ why }, 'stopping the hub');
    const deadline = o.config.killGraceMs + STOP_MARGIN_MS;
    try {
      await withDeadline(() => hub.stop(), deadline, () => {
        o.log.error({ why, deadline_ms: deadline }, 'the hub did not finish stopping in time: exiting without the rest of its stop');
        o.exit(1);
      });
    } finally {
      await claim.release();
      o.exit(0);
    }
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void stop(sig));
  await hub.start();
  if (!o.background) {
    o.out(`overseer hub listening on ${hub.http!.url}\nlead token: ${join(o.config.home, 'lead.token')} (send it as "Authorization: Bearer <token>")\n`);
    return;
  }
  const idleMs = o.config.idleExitS * 1000;
  const timer = new IdleTimer({ idleMs, now: () => hub.ctx.clock.now() });
  const claimFile = claimPath(o.config.home);
  setInterval(() => {
    // hub.claim is never removed by a hub: gone means the state directory was deleted under us.
    if (!existsSync(claimFile)) void stop('the state directory was removed');
    else void hub.idle().then((idle) => { if (timer.check(idle)) void stop(`idle for ${o.config.idleExitS} s: no live job, no connected lead`); }, () => undefined);
  }, idleMs > 0 ? Math.min(1000, Math.max(50, idleMs / 5)) : 1000).unref();
  // The endpoint keeps the process alive; the timer only decides when to stop.
}
