// Steering another hub's job (docs/store-plan.md §3.5; docs/decisions.md "Steering across hubs").
// Only a job's owner has its child (jobs.hub_id), so cancel, stop, freeze and thaw of a job that
// runs on another hub go through the database: the caller's hub leaves a row in job_commands and
// sends `command` when it commits (`CommandPoster`); the owner's `CommandService` hears it (the
// relay hands it over), reads its pending commands and runs each through the SAME code path as a
// local call (JobService), one at a time, then marks it done (a compare-and-set: a command read
// twice — the notification and a re-read racing — is done once). It also reads them at start and
// after its listener reconnected (a notification sent while it did not listen is lost). The caller
// waits for the command to be done (src/services/jobs.ts `steerRemote`): the owner emits
// `progress {jobId}` after marking it, which crosses, so the caller's wait wakes.
import type { Kysely } from 'kysely';
import type { HubContext } from './context.js';
import type { JobCommandKind, Schema } from '../store/sql/schema.js';
import type { LayerEvents, Notifier } from '../store/sql/notify.js';
import { finishCommand, pendingCommands, postCommand, type JobCommandRow } from '../store/sql/commands.js';
import { transact } from '../store/sql/tx.js';

/** What a command's row says once it went well. */
export const COMMAND_DONE = 'done';
/** The prefix of a command's outcome when the owner refused it (the rest is the error it gave). */
export const COMMAND_REFUSED = 'refused: ';

/** The non-owner's side: leave a command for the job's owner (src/services/jobs.ts). */
export interface CommandPoster {
  /** Insert the command and send `command` when it commits; its id. */
  post(c: { jobId: string; kind: JobCommandKind; reason: string | null; by: string }): Promise<number>;
}

/** Commands go through `db` and are announced by `notifier` (PostgreSQL: pg_notify in the insert's transaction). */
export function commandPoster(db: Kysely<Schema>, notifier: Pick<Notifier<LayerEvents>, 'send'>, now: () => number): CommandPoster {
  return {
    post: (c) => transact(db, (trx) => postCommand(trx as never, notifier, { ...c, now: now() })),
  };
}

/** A hub where nothing can be steered from elsewhere (the engine's tests: one hub, no notifier). */
export const NO_POSTER: CommandPoster = {
  post: async (c) => {
    throw new Error(`job ${c.jobId} runs on another hub and this one cannot leave it a command (no notifier)`);
  },
};

/** What the owner runs a command with: the local code paths of JobService. */
export interface Steerable {
  /** Run one command on a job this hub owns, as a local call would; throws what that call throws. */
  steerLocal(kind: JobCommandKind, jobId: string, reason: string | null): Promise<void>;
}

/** Where the owner hears of commands: the relay (src/services/relay.ts) — another hub's `command`, or a resync. */
export interface CommandFeed {
  onCommand(fn: (heard: LayerEvents['command'] | 'resync') => void): () => void;
}

/** The owner's side: runs the commands other hubs left for this hub's jobs. */
export class CommandService {
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private closed = false;
  private off: (() => void) | undefined;

  constructor(private readonly ctx: HubContext, private readonly hubId: string, private readonly jobs: Steerable, private readonly feed: CommandFeed) {}

  /** Listen, and run what was left while this hub did not listen (after the start-up reconcile). */
  start(): Promise<void> {
    this.off = this.feed.onCommand(() => void this.drain());
    return this.drain();
  }

  /** Stop listening; the command being run finishes. */
  async stop(): Promise<void> {
    this.closed = true;
    this.off?.();
    this.off = undefined;
    await this.chain;
  }

  /** Read the pending commands and run them, one at a time; a call while a round runs makes one more round. */
  drain(): Promise<void> {
    if (this.queued) return this.chain;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      if (this.closed) return;
      for (const c of await pendingCommands(this.ctx.sql.db, this.hubId)) {
        if (this.closed) return;
        await this.run(c);
      }
    }).catch((err: unknown) => this.ctx.log.error({ err }, 'could not read the commands other hubs left for this hub\'s jobs'));
    return this.chain;
  }

  private async run(c: JobCommandRow): Promise<void> {
    let outcome = COMMAND_DONE;
    try {
      await this.jobs.steerLocal(c.kind, c.job_id, c.reason);
    } catch (err) {
      outcome = `${COMMAND_REFUSED}${err instanceof Error ? err.message : String(err)}`;
    }
    const marked = await finishCommand(this.ctx.sql.db, c.id, outcome, this.ctx.clock.now());
    this.ctx.log.info({ command: c.id, kind: c.kind, jobId: c.job_id, by: c.by, outcome, marked }, 'ran a command another hub left');
    // The poster waits for the row to be done: tell it (progress crosses; the job's status change did already).
    this.ctx.bus.emit('progress', { jobId: c.job_id });
  }
}
