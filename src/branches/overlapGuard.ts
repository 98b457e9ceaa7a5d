// The conflict guard (issue 13, docs/worktrees.md): while worktree jobs run, which files each
// branch changes relative to its base (committed, uncommitted and untracked, plus the files it
// holds locks on: the hook auto-locks a file just before an edit). Re-computed for a job on each
// of its lock changes (every guarded edit, every commit made with a tracked file edited) and when
// it starts; two live branches of the same repository touching the same file make an overlap:
// recorded once per (pair, file), told to both agents, shown in get_agent / status / watch, and
// returned once as attention to the lead.
import { realpathSync } from 'node:fs';
import { relative, isAbsolute } from 'node:path';
import type { HubContext } from '../services/context.js';
import type { JobRow } from '../store/jobs.js';
import type { OverlapRow } from '../store/overlaps.js';
import { addOverlaps, clearJobOverlaps } from '../store/sql/overlaps.js';
import { eventInsert, getJob, jobsByStatus } from '../store/sql/jobs.js';
import { batch } from '../store/sql/tx.js';
import { lockedPathsOf } from '../store/sql/branches.js';
import { gitOut, outLines } from '../git/exec.js';
import { isTerminal, type JobStatus } from '../domain/job.js';

const LIVE: readonly JobStatus[] = ['running', 'frozen', 'needs_input'];

/** For each other job, the files both change (pure). */
export function overlapsOf(jobId: string, sets: ReadonlyMap<string, { repoRoot: string; files: ReadonlySet<string> }>): { other: string; files: string[] }[] {
  const mine = sets.get(jobId);
  if (!mine) return [];
  const out: { other: string; files: string[] }[] = [];
  for (const [other, s] of sets) {
    if (other === jobId || s.repoRoot !== mine.repoRoot) continue;
    const files = [...mine.files].filter((f) => s.files.has(f)).sort();
    if (files.length) out.push({ other, files });
  }
  return out;
}

export class OverlapGuard {
  private readonly touched = new Map<string, { repoRoot: string; files: Set<string> }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private readonly detach: (() => void)[] = [];

  constructor(private readonly ctx: HubContext, private readonly tell: (to: string, text: string) => void, private readonly debounceMs = 100) {}

  async start(): Promise<void> {
    this.detach.push(this.ctx.bus.on('lock', (e) => this.schedule(e.holder)));
    this.detach.push(this.ctx.bus.on('job', (e) => {
      if (isTerminal(e.status as JobStatus) || e.status === 'interrupted' || e.status === 'queued') {
        return this.ended(e.jobId).catch((err: unknown) => this.ctx.log.warn({ err, jobId: e.jobId }, 'conflict guard: overlaps of an ended job not closed'));
      }
      if (e.status === 'running') this.schedule(e.jobId);
      return undefined;
    }));
    for (const j of await jobsByStatus(this.ctx.sql.db, ...LIVE)) this.schedule(j.id);
  }

  close(): void {
    for (const d of this.detach.splice(0)) d();
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }

  /** Resolves when no scan is pending or running (tests and the benchmark). */
  async settled(): Promise<void> {
    while (this.timers.size || this.running.size) await Promise.all([...this.running, new Promise((r) => setTimeout(r, this.debounceMs))]);
  }

  /** Scan a job soon (changes come in bursts: one scan per burst). */
  schedule(jobId: string): void {
    if (jobId === 'lead' || this.timers.has(jobId)) return;
    this.timers.set(jobId, setTimeout(() => {
      this.timers.delete(jobId);
      const p = this.scan(jobId).catch((err: unknown) => this.ctx.log.warn({ err, jobId }, 'conflict guard scan failed')).finally(() => this.running.delete(p));
      this.running.add(p);
    }, this.debounceMs));
  }

  /** A job left the live statuses: its overlaps close (the bus listener returns the write, src/services/bus.ts emitSettled). */
  private async ended(jobId: string): Promise<void> {
    this.touched.delete(jobId);
    if (await clearJobOverlaps(this.ctx.sql.db, jobId, this.ctx.clock.now()) > 0) this.ctx.bus.emit('overlap', { jobs: [jobId, jobId], files: [] });
  }

  /** The files a live worktree job changes, relative to its repository root. */
  private async changed(j: JobRow): Promise<Set<string>> {
    const dir = j.work_dir!;
    const [diff, untracked] = await Promise.all([
      gitOut(['diff', '--name-only', '--no-renames', j.base_commit!], { cwd: dir }),
      gitOut(['ls-files', '--others', '--exclude-standard'], { cwd: dir }),
    ]);
    const files = new Set([...outLines(diff), ...outLines(untracked)]);
    let root = dir;
    try { root = realpathSync(dir); } catch { /* gone */ }
    for (const path of await lockedPathsOf(this.ctx.sql.db, j.id)) {
      const rel = relative(root, path);
      if (rel && !rel.startsWith('..') && !isAbsolute(rel)) files.add(rel.split('\\').join('/'));
    }
    return files;
  }

  async scan(jobId: string): Promise<void> {
    const j = await getJob(this.ctx.sql.db, jobId);
    if (!j || j.worktree !== 1 || !j.work_dir || !j.base_commit || !j.repo_root || !LIVE.includes(j.status)) return;
    const files = await this.changed(j);
    this.touched.set(jobId, { repoRoot: j.repo_root, files });
    const now = this.ctx.clock.now();
    for (const { other, files: both } of overlapsOf(jobId, this.touched)) {
      const o = await getJob(this.ctx.sql.db, other);
      if (!o || !LIVE.includes(o.status)) { this.touched.delete(other); continue; }
      const fresh = await addOverlaps(this.ctx.sql.db, { repoRoot: j.repo_root, a: jobId, b: other, files: both, locksConflict: false, now });
      if (fresh.length) await this.announce(j, o, fresh);
    }
  }

  /** Tell both agents, and wake the lead's waits. */
  private async announce(a: JobRow, b: JobRow, rows: readonly OverlapRow[]): Promise<void> {
    const files = rows.map((r) => r.file);
    const list = files.length === 1 ? files[0]! : `${files.slice(0, -1).join(', ')} and ${files.at(-1)}`;
    const locks = 'Your locks do not conflict (each of you works in its own worktree), so nothing stops either of you.';
    for (const [me, other] of [[a, b], [b, a]] as const) {
      this.tell(me.id, this.ctx.prompts.render('overlap-message', { other: other.id, other_title: other.title, other_branch: other.branch ?? '?', files: list, locks }));
    }
    const q = this.ctx.sql.db;
    const now = this.ctx.clock.now();
    await batch(q, [eventInsert(q, a.id, now, 'overlap', { with: b.id, files }), eventInsert(q, b.id, now, 'overlap', { with: a.id, files })]);
    this.ctx.bus.emit('overlap', { jobs: [a.id, b.id], files });
  }
}
