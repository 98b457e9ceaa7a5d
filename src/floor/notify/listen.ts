// Turns the hub's bus events into notices, reading the rows they point at. A bus listener runs
// inside whoever emitted (the job engine, a tool call): this one never throws into it and does
// only a few indexed reads before handing the notice on.
//
// What counts once: a job's end (per ended_at: a resumed job that ends again is news again), a
// request's opening, a warning row's raising, a workflow's move into blocked or succeeded. The
// bus repeats some of these (a job event follows every request that closes), so each is
// remembered; the memory is bounded (SEEN_MAX per kind, oldest forgotten first).
import { basename } from 'node:path';
import { isoTime } from '../../clock.js';
import type { HubContext } from '../../services/context.js';
import { getRequest } from '../../store/sql/requests.js';
import { openWarnings } from '../../store/sql/warnings.js';
import { getJob, jobsByStatus } from '../../store/sql/jobs.js';
import { getWorkflow, workflowsByStatus } from '../../store/sql/workflows.js';
import { jobEnded, limitOpened, requestOpened, warningRaised, workflowChanged, type NotifyPayload, type PayloadBase } from './payload.js';
import { activeLimits } from '../../store/sql/limits.js';
import { readLimit } from '../../limits/store.js';
import { floorLimit } from '../../limits/view.js';

const SEEN_MAX = 10_000;

/** A Map that forgets its oldest entries past `max`. */
class Recent<V> extends Map<string, V> {
  constructor(private readonly max: number) { super(); }
  override set(k: string, v: V): this {
    this.delete(k);
    super.set(k, v);
    if (this.size > this.max) this.delete(this.keys().next().value as string);
    return this;
  }
}

/** Subscribes to the bus; `onNotice` gets each notice. Returns the unsubscribe function. */
export function listen(ctx: HubContext, log: HubContext['log'], onNotice: (p: NotifyPayload) => void): () => void {
  const ends = new Recent<number | null>(SEEN_MAX);
  const opened = new Recent<true>(SEEN_MAX);
  const raised = new Recent<true>(SEEN_MAX);
  const wfStatus = new Recent<string>(SEEN_MAX);
  /** Limit episodes notified (account @ when it opened): a limit that holds on is not news again. */
  const limited = new Recent<true>(SEEN_MAX);
  // A limit in force before this hub started was notified then (by the hub before).
  // (Read before the first limit event is looked at: that listener awaits it.)
  const seeded = activeLimits(ctx.sql.db).then((rows) => { for (const r of rows) limited.set(`${r.account}@${r.opened_at}`, true); })
    .catch((err: unknown) => log.warn({ err }, 'notifications: the limits in force at start could not be read'));
  // A workflow that was blocked before this hub started was notified then (or by the hub before).
  // (Read before the first workflow event is looked at: that listener awaits it.)
  const seededWf = workflowsByStatus(ctx.sql.db, ['blocked']).then((rows) => { for (const w of rows) wfStatus.set(w.id, w.status); })
    .catch((err: unknown) => log.warn({ err }, 'notifications: the workflows blocked at start could not be read'));

  const base = (): PayloadBase => {
    const url = ctx.mcpUrl();
    return {
      at: isoTime(ctx.clock.now()), project: basename(ctx.projectDir), project_dir: ctx.projectDir,
      ...(url ? { hub_url: new URL(url).origin } : {}),
    };
  };
  /** Runs `f` for a bus event; whatever goes wrong (the database closing under a stopping hub) is logged, never thrown. */
  const guard = <E>(what: string, f: (e: E) => NotifyPayload | undefined | Promise<NotifyPayload | undefined>) => async (e: E): Promise<void> => {
    try {
      const p = await f(e);
      if (p) onNotice(p);
    } catch (err) {
      log.warn({ err, event: what }, 'notification skipped: could not read what happened');
    }
  };

  /** guard for a reaction that reads the asynchronous store. */
  const guardAsync = <E>(what: string, f: (e: E) => Promise<NotifyPayload | undefined>) => async (e: E): Promise<void> => {
    try {
      const p = await f(e);
      if (p) onNotice(p);
    } catch (err) {
      log.warn({ err, event: what }, 'notification skipped: could not read what happened');
    }
  };

  const offs = [
    ctx.bus.on('limit', guard('limit', async (e) => {
      await seeded;
      const r = await readLimit(ctx.sql.db, e.account);
      if (!r || r.phase === 'closed' || limited.has(`${r.account}@${r.opened_at}`)) return undefined;
      limited.set(`${r.account}@${r.opened_at}`, true);
      const now = ctx.clock.now();
      const queued = (await jobsByStatus(ctx.sql.db, 'queued')).filter((j) => j.provider === r.provider).length;
      return limitOpened(floorLimit(r, queued, now), base());
    })),
    ctx.bus.on('job', guard('job', async (e) => {
      if (e.status !== 'succeeded' && e.status !== 'failed') return undefined;
      const job = await getJob(ctx.sql.db, e.jobId);
      // Checked and remembered after the read with no await between: of two events for one end, one notifies.
      if (!job || job.status !== e.status || (ends.has(job.id) && ends.get(job.id) === job.ended_at)) return undefined;
      ends.set(job.id, job.ended_at);
      return jobEnded(job, base());
    })),
    ctx.bus.on('request', guardAsync('request', async (e) => {
      const r = await getRequest(ctx.sql.db, e.requestId);
      if (!r || r.status !== 'pending') {
        opened.delete(e.requestId);
        return undefined;
      }
      // A request only the lead may answer never involves the person.
      if (opened.has(r.id) || r.who === 'lead') return undefined;
      opened.set(r.id, true);
      const job = await getJob(ctx.sql.db, r.job_id);
      return job ? requestOpened(r, job, base()) : undefined;
    })),
    ctx.bus.on('warning', guard('warning', async (e) => {
      if (!e.raised) return undefined;
      const w = (await openWarnings(ctx.sql.db, e.jobId)).find((x) => x.kind === e.kind);
      const job = await getJob(ctx.sql.db, e.jobId);
      if (!w || !job || raised.has(String(w.id))) return undefined;
      raised.set(String(w.id), true);
      return warningRaised(w, job, base());
    })),
    ctx.bus.on('workflow', guard('workflow', async (e) => {
      await seededWf;
      const w = await getWorkflow(ctx.sql.db, e.workflowId);
      if (!w) return undefined;
      // Compared and remembered after the read with no await between: of two events for one change, one notifies.
      const before = wfStatus.get(w.id);
      wfStatus.set(w.id, w.status);
      return before === w.status ? undefined : workflowChanged(w, base());
    })),
  ];
  return () => { for (const off of offs) off(); };
}
