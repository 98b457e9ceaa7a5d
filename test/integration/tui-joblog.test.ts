// The watch's log view reads a job through the read-only layer (src/tui/jobLog.ts): on a real
// state file a hub wrote, the first poll gives the attempt's header and its transcript so far,
// later polls the new lines, a retry's attempt gets the previous one's footer and its own
// header, and once the job has ended (and two polls found nothing new) the hub's verdict comes
// and the source says it ended. An unknown job is refused with the state named. On both
// databases: SQLite's file, and a PostgreSQL database given as the watch gets it (config databaseUrl).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { insertAttempt, insertJob, updateAttempt, updateJob } from '../../src/store/sql/jobs.js';
import { followJobLog } from '../../src/tui/jobLog.js';
import { newJob } from '../helpers/budgetDb.js';
import { openDialect } from '../helpers/sqlDialect.js';

const text = (t: string): string => `${JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: t }] } })}\n`;

for (const dialect of ['sqlite', 'postgres'] as const) test(`${dialect}: header, lines as they come, a retry's footer and header, then the verdict and the end`, async (t) => {
  const { s, home, url } = await openDialect(dialect, t);
  const q = s.db;
  const at = { home, databaseUrl: url };
  const t1 = join(home, 't1.jsonl');
  const t2 = join(home, 't2.jsonl');
  writeFileSync(t1, text('first words'));
  await insertJob(q, newJob('j-log1', { status: 'running' }), 1);
  const attempt = (n: number, transcript: string) => ({ job_id: 'j-log1', n, kind: n === 1 ? 'initial' as const : 'retry' as const, status: 'running', started_at: n * 1000, ended_at: null, session_id: null, pid: null, exit_code: null, signal: null, turns: 0, cost_usd: 0, failure_class: null, error: null, diagnosis: null, transcript, stderr: null });
  await insertAttempt(q, attempt(1, t1));

  await assert.rejects(followJobLog(at, 'j-nope'), dialect === 'sqlite' ? /job j-nope is not in .*state\.db/ : /job j-nope is not in postgres:\/\//);
  const src = await followJobLog(at, 'j-log1');
  try {
    const first = await src.poll();
    // The log view says where the job runs, always: this machine for a job no worker claimed.
    assert.equal(first[0], `── j-log1 runs on ${hostname()}`);
    assert.match(first[1]!, /^── attempt 1 \(initial\) started/);
    assert.ok(first.some((l) => l.includes('first words')), first.join('\n'));
    assert.deepEqual(await src.poll(), [], 'nothing new');

    appendFileSync(t1, text('second words'));
    assert.ok((await src.poll()).some((l) => l.includes('second words')));

    await updateAttempt(q, 'j-log1', 1, { status: 'failed', ended_at: 5000, turns: 2 });
    writeFileSync(t2, text('retry words'));
    await insertAttempt(q, attempt(2, t2));
    const retry = await src.poll();
    assert.match(retry.join('\n'), /── attempt 1 ended .*failed, 2 turns[\s\S]*── attempt 2 \(retry\) started[\s\S]*retry words/);

    await updateAttempt(q, 'j-log1', 2, { status: 'succeeded', ended_at: 9000, turns: 1 });
    await updateJob(q, 'j-log1', { status: 'succeeded', turns: 3, result: 'all done' }, 9000);
    let end: string[] = [];
    for (let i = 0; i < 3 && !src.ended; i++) end = await src.poll();
    assert.equal(src.ended, true);
    assert.match(end.join('\n'), /── attempt 2 ended .*succeeded[\s\S]*overseer: job j-log1 succeeded after 2 attempts, 3 turns/);
    assert.deepEqual(await src.poll(), [], 'nothing after the end');
  } finally {
    await src.close();
  }
});
