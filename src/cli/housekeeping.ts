// Housekeeping for a hub that runs for months: `overseer backup <file>` (SQLite's online backup,
// safe while the hub runs; PostgreSQL is pg_dump's job) and `overseer gc` (what ended jobs leave
// behind past an age: their logs, the search index of what they said, their transcript files and
// closed side rows; a dry run unless --apply; then the database is vacuumed). What gc may remove is
// decided in src/store/sql/gc.ts; the numbers it prints are the ones it then removes. The commands are
// declared in ./main.ts, which loads this module only when one of them runs.
import Database from 'better-sqlite3';
import { existsSync, statSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../config.js';
import { openSql, type SqlDb } from '../store/sql/open.js';
import { sqlTarget } from '../store/sql/url.js';
import { gcApply, gcPlan, type GcCounts, type GcResult } from '../store/sql/gc.js';
import { parseSince } from '../search/query.js';
import { CliError, UsageError } from './errors.js';

const mb = (bytes: number): string => (bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);
const size = (f: string): number => { try { return statSync(f).size; } catch { return 0; } };

export async function runBackup(file: string, o: { force?: boolean; json?: boolean }): Promise<void> {
  const config = loadConfig();
  const t = sqlTarget(config);
  if (t.dialect === 'postgres') {
    throw new UsageError(`the state is in PostgreSQL (${t.shown}): back it up with PostgreSQL's own tool, e.g. pg_dump --format=custom --file ${JSON.stringify(file)} "<the same URL>" (pg_restore puts it back)`);
  }
  if (!existsSync(t.file)) throw new CliError(`No Overseer state at ${config.home} (no state.db): nothing to back up. Run overseer from your project, or set OVERSEER_HOME.`);
  const dest = resolve(file);
  if (dest === resolve(t.file)) throw new UsageError(`${file} is the state database itself: name another file`);
  if (!existsSync(dirname(dest))) throw new UsageError(`the folder of ${file} does not exist (${dirname(dest)}): create it first`);
  if (existsSync(dest) && !o.force) throw new UsageError(`${file} exists: name a new file, or pass --force to replace it`);
  const started = Date.now();
  const src = new Database(t.file, { readonly: true, fileMustExist: true });
  try {
    src.pragma('busy_timeout = 5000');
    // A page-by-page copy that restarts when the hub writes meanwhile: a consistent database.
    await src.backup(dest);
  } finally {
    src.close();
  }
  const check = new Database(dest, { readonly: true, fileMustExist: true });
  let ok: string;
  let jobs: number;
  try {
    ok = String(check.pragma('quick_check', { simple: true }));
    jobs = Number((check.prepare('SELECT COUNT(*) AS n FROM jobs').get() as { n: number }).n);
  } finally {
    check.close();
  }
  if (ok !== 'ok') throw new CliError(`the copy at ${file} failed its check (${ok}): it is not a usable backup; try again, and look at the disk (space, errors)`);
  const out = { file: dest, from: t.file, bytes: size(dest), jobs, ms: Date.now() - started };
  if (o.json) process.stdout.write(`${JSON.stringify(out)}\n`);
  else process.stdout.write(`backed up ${t.file} to ${dest}: ${mb(out.bytes)}, ${jobs} jobs, checked, in ${out.ms} ms. To restore: stop the hub (overseer stop) and copy it back to ${t.file}.\n`);
}

const LABELS: Record<keyof GcCounts, string> = {
  jobs: 'jobs', events: 'log events', transcript_rows: 'search-index rows of what they said', messages: 'delivered message(s)', requests: 'closed request(s)',
  request_late_answers: 'late answer(s)', job_warnings: 'warning(s)', job_commands: 'done command(s)', budget_reservations: 'released reservation(s)', overlaps: 'cleared overlap(s)',
};

export async function runGc(o: { olderThan?: string; apply?: boolean; json?: boolean }): Promise<void> {
  const config = loadConfig();
  const now = Date.now();
  let cutoff: number;
  try {
    cutoff = parseSince(o.olderThan ?? '30d', now);
  } catch {
    throw new UsageError(`--older-than ${JSON.stringify(o.olderThan)} is not an age: give how long ago a job must have ended ("30d", "12h", "2w") or an ISO time ("2026-05-01")`);
  }
  if (cutoff > now - 60 * 60 * 1000) throw new UsageError(`--older-than ${o.olderThan}: less than an hour ago is too recent for gc (a job that just ended is still being looked at); give at least "1h"`);
  const t = sqlTarget(config);
  if (t.dialect === 'sqlite' && !existsSync(t.file)) throw new CliError(`No Overseer state at ${config.home} (no state.db): nothing to collect. Run overseer from your project, or set OVERSEER_HOME.`);
  const s = await openSql(config, { migrate: t.dialect === 'sqlite' });
  try {
    const before = await stateBytes(s, t.dialect === 'sqlite' ? t.file : null);
    const r = o.apply ? await gcApply(s.db, cutoff) : await gcPlan(s.db, cutoff);
    const files = transcriptFiles(r, config.home);
    const fileBytes = files.reduce((n, f) => n + size(f), 0);
    if (o.apply) for (const f of files) rmSync(f, { force: true });
    const after = o.apply ? await vacuum(s, t.dialect === 'sqlite' ? t.file : null) : before;
    const out = { applied: !!o.apply, cutoff: new Date(cutoff).toISOString(), counts: r.counts, transcript_files: files.length, transcript_bytes: fileBytes, state_bytes_before: before, state_bytes_after: after };
    if (o.json) { process.stdout.write(`${JSON.stringify(out)}\n`); return; }
    const lines = [`overseer gc: ${r.counts.jobs} job(s) ended before ${out.cutoff} with nothing waiting on them and no branch left to merge.`];
    const parts = (Object.keys(LABELS) as (keyof GcCounts)[]).filter((k) => k !== 'jobs' && r.counts[k] > 0).map((k) => `${r.counts[k]} ${LABELS[k]}`);
    parts.push(`${files.length} transcript file(s) (${mb(fileBytes)})`);
    lines.push(`${o.apply ? 'removed' : 'would remove'}: ${parts.join(', ')}.`);
    lines.push('kept: every job row (result, totals, costs), live jobs and unmerged branches untouched.');
    lines.push(o.apply ? `state: ${mb(before)} before, ${mb(after)} after vacuum.` : `state: ${mb(before)}. Dry run: nothing was removed. Run again with --apply to remove it.`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await s.close();
  }
}

/** The transcript files of the forgotten jobs that are on this machine, under this state's agents/ folder (and their .stderr). */
function transcriptFiles(r: GcResult, home: string): string[] {
  const agents = join(resolve(home), 'agents') + sep;
  const out: string[] = [];
  for (const t of r.transcripts) {
    const p = resolve(t);
    if (!p.startsWith(agents) || relative(agents, p).startsWith('..')) continue;
    for (const f of [p, p.replace(/\.jsonl$/, '.stderr')]) if (existsSync(f) && !out.includes(f)) out.push(f);
  }
  return out;
}

async function stateBytes(s: SqlDb, file: string | null): Promise<number> {
  if (file) return size(file) + size(`${file}-wal`);
  return Number((await sql<{ n: string }>`SELECT pg_database_size(current_database()) AS n`.execute(s.db)).rows[0]!.n);
}

/** Give the freed pages back: SQLite's VACUUM (and the WAL checkpointed), PostgreSQL's VACUUM of the tables gc deletes from. */
async function vacuum(s: SqlDb, file: string | null): Promise<number> {
  if (file) {
    await sql`VACUUM`.execute(s.db);
    await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(s.db);
  } else {
    await sql`VACUUM (ANALYZE) events, transcript_rows, messages, requests, request_late_answers, job_warnings, job_commands, budget_reservations, "overlaps"`.execute(s.db);
  }
  return stateBytes(s, file);
}
