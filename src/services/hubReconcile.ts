// A hub found dead by this one (docs/store-plan.md §3.6; src/store/sql/hubs.ts HubRegistry): in
// the transaction that marked it, do for it what a restarted hub's reconcile does (./reconcile.ts)
// — its running, frozen and needs_input jobs become `interrupted` with their tokens cleared, the
// jobs' locks and lock waits are released, their pending requests cancelled — then what it owned
// and nobody drives any more is released (`releaseOwned`: queued and waiting jobs, runs, workflows,
// debates) and its pending commands closed; after the commit this hub adopts those runs, workflows
// and debates and drives them on (Hub.adoptOrphans). Its processes are on its machine: if it was only paused, it
// fences itself when it wakes. After the commit, the bus hears what changed, so waiters wake and
// the job's other reactions (the budget's reservation) run here.
//
// A dead hub that was a worker's (workers.hub_id; a worker is a hub in worker mode, issue 30): its
// workers row is marked lost, and its jobs that came from the worker queue go back to the queue
// for their next attempt (./workerLost.ts) instead of waiting, interrupted, for a resume.
import type { Transaction } from 'kysely';
import type { HubContext } from './context.js';
import type { Schema } from '../store/sql/schema.js';
import type { HubRow } from '../store/sql/hubs.js';
import { releaseOwned } from '../store/sql/claims.js';
import { leadOf } from '../domain/lead.js';
import { closeCommandsOf } from '../store/sql/commands.js';
import { attemptsOf, eventInsert, attemptUpdate, jobUpdate } from '../store/sql/jobs.js';
import { dropWaitsOf, release } from '../store/sql/locks.js';
import { cancelPendingOf } from '../store/sql/requests.js';
import { loseJob, loseWorker, type Requeue } from './workerLost.js';

/** A script run's approval outlives its agent (src/approvals/service.ts keeps it too). */
const DETACHED = 'overseer:detached';

interface Changed { jobs: { id: string; status: 'interrupted' | 'queued' }[]; lockHolders: string[]; requests: { jobId: string; requestId: string }[] }

/** `adoptOrphans`: after the commit, what the dead hub drove (released here) is adopted and driven on by this hub.
 * `requeue`: a lost worker's job, queued again, gets its queue job (./workerLost.ts). */
export function deadHubReconciler(ctx: HubContext, me: string, adoptOrphans: () => Promise<void>, requeue: Requeue): {
  reconcile(trx: Transaction<Schema>, dead: HubRow): Promise<void>;
  onReconciled(dead: HubRow): void;
} {
  const changed = new Map<string, Changed>();
  return {
    async reconcile(trx, dead) {
      const now = ctx.clock.now();
      const c: Changed = { jobs: [], lockHolders: [], requests: [] };
      const worker = await loseWorker(trx, ctx.sql.dialect, dead);
      const jobs = await trx.selectFrom('jobs').select(['id', 'placement']).where('hub_id', '=', dead.id)
        .where('status', 'in', ['running', 'frozen', 'needs_input']).orderBy('seq').execute();
      const error = `its hub (${dead.id} on ${dead.host}, pid ${dead.pid}) stopped beating and was found dead by hub ${me}; the agent's process there is ended when that hub wakes`;
      const lost = { now, me, dead, worker, maxAttempts: ctx.config.maxAttempts, requeue };
      for (const { id, placement } of jobs) {
        let status: 'interrupted' | 'queued' = 'interrupted';
        if (placement === 'queue') status = await loseJob(trx, id, lost);
        else {
          const last = (await attemptsOf(trx, id)).at(-1);
          if (last && last.ended_at === null) await attemptUpdate(trx, id, last.n, { status: 'interrupted', ended_at: now, failure_class: 'interrupted', error }).execute();
          // Unowned: resumed later, it runs on a hub where its directory is (docs/store-plan.md §3.4).
          await jobUpdate(trx, id, { status: 'interrupted', pid: null, token_hash: null, ended_at: now, failure_class: 'interrupted', error, hub_id: null }, now).execute();
          await eventInsert(trx, id, now, 'reconciled', { to: 'interrupted', dead_hub: dead.id, by: me }).execute();
        }
        if ((await release(trx, id)).length) c.lockHolders.push(id);
        await dropWaitsOf(trx, id);
        for (const requestId of await cancelPendingOf(trx, id, now, DETACHED)) c.requests.push({ jobId: id, requestId });
        c.jobs.push({ id, status });
      }
      // Its lead's locks and lock waits (docs/decisions.md "Steering across hubs"): that lead is gone with it.
      const lead = leadOf(dead.id, true);
      if ((await release(trx, lead)).length) c.lockHolders.push(lead);
      await dropWaitsOf(trx, lead);
      const released = await releaseOwned(trx, dead.id);
      const commands = await closeCommandsOf(trx, dead.id, 'its owner hub died', now);
      ctx.log.warn({ dead: dead.id, worker: worker?.name, jobs: c.jobs, released, commands }, worker ? 'reconciled a lost worker\'s hub' : 'reconciled a dead hub');
      changed.set(dead.id, c);
    },
    onReconciled(dead) {
      const c = changed.get(dead.id);
      changed.delete(dead.id);
      if (!c) return;
      for (const holder of c.lockHolders) ctx.bus.emit('lock', { holder });
      for (const r of c.requests) ctx.bus.emit('request', r);
      for (const { id: jobId, status } of c.jobs) {
        void ctx.bus.emitSettled('job', { jobId, status }, (err) => ctx.log.error({ err, jobId }, 'a reaction to a dead hub\'s job failed'));
      }
      void adoptOrphans();
    },
  };
}
