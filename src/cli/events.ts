// `overseer events [--job <id>] [--json] [--limit N]`: what the hub recorded, newest last —
// spawns, starts, permission decisions and the rule that decided, lock denials and violations,
// reconciles, messages, retries and ends.
import { eventDetails, recentEvents } from '../events/view.js';
import { intOption } from './args.js';
import { openState, resolveJob } from './state.js';
import { table } from './status.js';

export async function runEvents(opts: { job?: string; json?: boolean; limit?: string }): Promise<void> {
  const limit = intOption('limit', opts.limit, 1, 100_000) ?? 100;
  const s = await openState();
  const layer = s.sql;
  try {
    const jobId = opts.job !== undefined ? (await resolveJob(s, opts.job)).id : undefined;
    const events = await recentEvents(layer.db, { jobId, limit });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify(events, null, 2)}\n`);
      return;
    }
    if (events.length === 0) {
      process.stdout.write(jobId ? `No events for job ${jobId}.\n` : 'No events yet.\n');
      return;
    }
    const rows = events.map((e) => [e.at.replace('T', ' ').slice(0, 19), e.job_id, e.kind, eventDetails(e.data)]);
    process.stdout.write(`${table([['TIME (UTC)', 'JOB', 'EVENT', 'DETAILS'], ...rows])}\n`);
  } finally {
    await s.close();
  }
}
