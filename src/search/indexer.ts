// Writes the transcript index as transcripts are written, and catches up on the ones that are
// not (fully) indexed. The supervisor hands every line it writes to `line()` (synchronously, on
// its hot path): the line is parsed into rows and buffered; a flush writes the buffer in one
// layer transaction (src/search/sqlIndex.ts, SQLite or PostgreSQL) `flushMs` (100 ms) after the
// first buffered line, right after the line that fills `maxRows` (200) rows (never inside the
// supervisor's call), when an attempt ends, and at close. Each flush also records per attempt how
// many lines are indexed, in the same transaction, so a crash loses at most the buffer and
// `reindex()` resumes exactly there. Flushes run one at a time, in order (`writing`): a flush
// asked for while one is being written waits for it, so an attempt's state never goes ahead of
// rows still in flight.
//
// `reindex()` runs in the background on start: every ended attempt not marked complete (all of
// them on the first start after migration 12; after a crash, the attempts that were running) is
// read from its transcript file from the first unindexed line, newest attempt first, in
// transactions of `chunkRows` (200) rows with a yield to the event loop between them. Idempotent: a
// second run finds nothing to do.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { setImmediate as yieldNow } from 'node:timers/promises';
import { transact, type Q } from '../store/sql/tx.js';
import type { Logger } from '../log.js';
import { extractLine, ToolNames, type ExtractedRow } from './extract.js';
import type { NewRow, PendingAttempt } from './store.js';
import type { TranscriptIndex } from './sqlIndex.js';

export interface IndexerOptions {
  now: () => number;
  log: Logger;
  /** Longest a row waits in the buffer (ms). Default 100. */
  flushMs?: number;
  /** Rows that make a flush at once. Default 200. */
  maxRows?: number;
  /** Rows per transaction when reindexing. Default 200 (a few ms of the event loop each). */
  chunkRows?: number;
}

interface Live {
  jobId: string;
  attempt: number;
  /** Lines seen (the transcript's line count). */
  lines: number;
  /** Lines already recorded in transcript_index_state. */
  saved: number;
  tools: ToolNames;
  /** A flush of this attempt failed: its rows are left to reindex() on the next start. */
  broken: boolean;
}

export interface ReindexReport {
  attempts: number;
  rows: number;
  lines: number;
}

const key = (jobId: string, attempt: number): string => `${jobId}:${attempt}`;

export class TranscriptIndexer {
  private readonly live = new Map<string, Live>();
  private buffer: NewRow[] = [];
  private timer?: NodeJS.Timeout;
  private immediate?: NodeJS.Immediate;
  private closed = false;
  private reindexing?: Promise<ReindexReport>;
  private readonly flushMs: number;
  private readonly maxRows: number;
  private readonly chunkRows: number;
  /** The flush being written (flushes and catch-up chunks go one after another). */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly q: Q, private readonly index: TranscriptIndex, private readonly o: IndexerOptions) {
    this.flushMs = o.flushMs ?? 100;
    this.maxRows = o.maxRows ?? 200;
    this.chunkRows = o.chunkRows ?? 200;
  }

  /** Rows waiting for the next flush. */
  get buffered(): number { return this.buffer.length; }

  /** Whether a reindex is running now. */
  get catchingUp(): boolean { return this.reindexing !== undefined; }

  /** One line the supervisor wrote to attempt `attempt`'s transcript of `jobId`. Never throws. */
  line(jobId: string, attempt: number, line: string): void {
    if (this.closed) return;
    try {
      const k = key(jobId, attempt);
      let st = this.live.get(k);
      if (!st) {
        st = { jobId, attempt, lines: 0, saved: 0, tools: new ToolNames(), broken: false };
        this.live.set(k, st);
      }
      st.lines++;
      if (st.broken) return;
      const now = this.o.now();
      const x = extractLine(line, now);
      if (x.rows.length) {
        st.tools.resolve(x.rows);
        for (const r of x.rows) this.buffer.push(toRow(jobId, attempt, st.lines, x.at ?? now, r));
      }
      // A full buffer is written right after this line is handled, not inside the supervisor's call.
      this.schedule(this.buffer.length >= this.maxRows);
    } catch (err) {
      this.o.log.warn({ err, jobId, attempt }, 'transcript index: a line could not be indexed');
    }
  }

  /**
   * The attempt's process is gone: write what it said, and mark its transcript complete. The
   * caller does not wait (the returned promise is for tests and close); it never rejects.
   */
  attemptEnded(jobId: string, attempt: number): Promise<void> {
    const k = key(jobId, attempt);
    const st = this.live.get(k);
    void this.flush();
    this.live.delete(k);
    if (st?.broken) return this.writing;
    return this.serially(async () => {
      if (st?.broken) return;
      try {
        await this.index.setState(this.q, jobId, attempt, st?.lines ?? 0, true);
      } catch (err) {
        this.o.log.warn({ err, jobId, attempt }, 'transcript index: could not mark an attempt indexed; it is read again on the next start');
      }
    });
  }

  /** Run `fn` after every write asked for before it. */
  private serially(fn: () => Promise<void>): Promise<void> {
    this.writing = this.writing.then(fn, fn);
    return this.writing;
  }

  private schedule(now: boolean): void {
    if (this.closed) return;
    if (now) {
      if (this.immediate) return;
      this.immediate = setImmediate(() => {
        this.immediate = undefined;
        this.flush();
      });
      this.immediate.unref();
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush();
    }, this.flushMs);
    this.timer.unref();
  }

  /**
   * Write the buffer, and each live attempt's line count, in one transaction. Resolves when it
   * (and every flush before it) is written; never rejects (a failure is logged).
   */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.immediate) {
      clearImmediate(this.immediate);
      this.immediate = undefined;
    }
    const rows = this.buffer;
    const dirty = [...this.live.values()].filter((s) => !s.broken && s.lines > s.saved);
    if (rows.length === 0 && dirty.length === 0) return this.writing;
    this.buffer = [];
    // What this flush records, taken now: lines seen later belong to the next flush.
    const states = dirty.map((s) => ({ s, lines: s.lines }));
    return this.serially(() => this.write(rows, states));
  }

  private async write(rows: NewRow[], states: { s: Live; lines: number }[]): Promise<void> {
    const dirty = states.map((x) => x.s);
    try {
      await transact(this.q, async (trx) => {
        await this.index.insert(trx, rows);
        for (const { s, lines } of states) await this.index.setState(trx, s.jobId, s.attempt, lines, false);
      });
      for (const { s, lines } of states) s.saved = Math.max(s.saved, lines);
    } catch (err) {
      // Never retried here (the buffer would grow while the database refuses): the attempts are
      // left at their last recorded line and read again from their files on the next start.
      for (const r of rows) {
        const st = this.live.get(key(r.jobId, r.attempt));
        if (st) st.broken = true;
      }
      for (const s of dirty) s.broken = true;
      this.o.log.warn({ err, rows: rows.length }, 'transcript index: a flush failed; the attempts are indexed again from their files on the next start');
    }
  }

  /** Index every ended attempt not yet complete, in the background (one run at a time). */
  reindex(): Promise<ReindexReport> {
    this.reindexing ??= this.catchUp().finally(() => { this.reindexing = undefined; });
    return this.reindexing;
  }

  private async catchUp(): Promise<ReindexReport> {
    const report: ReindexReport = { attempts: 0, rows: 0, lines: 0 };
    const failed: string[] = [];
    while (!this.closed) {
      const batch = await this.index.pending(this.q, 20, [...this.live.keys(), ...failed]);
      if (batch.length === 0) break;
      for (const a of batch) {
        if (this.closed) break;
        if (this.live.has(key(a.job_id, a.n))) continue;
        try {
          const r = await this.indexFile(a);
          report.attempts++;
          report.rows += r.rows;
          report.lines += r.lines;
        } catch (err) {
          failed.push(key(a.job_id, a.n));
          this.o.log.warn({ err, jobId: a.job_id, attempt: a.n }, 'transcript index: could not index a transcript; it is tried again on the next start');
        }
      }
    }
    if (report.attempts) this.o.log.info(report, 'transcript index: caught up');
    return report;
  }

  /** Index one transcript from its first unindexed line to its end, then mark it complete. */
  private async indexFile(a: PendingAttempt): Promise<{ rows: number; lines: number }> {
    const from = a.lines;
    const tools = new ToolNames();
    let n = 0;
    let rows: NewRow[] = [];
    let total = 0;
    let lastAt = a.started_at;
    const write = async (lines: number, done: boolean): Promise<void> => {
      const batch = rows;
      rows = [];
      await transact(this.q, async (trx) => {
        await this.index.insert(trx, batch);
        await this.index.setState(trx, a.job_id, a.n, lines, done);
      });
      total += batch.length;
    };
    let stream: ReturnType<typeof createReadStream> | undefined;
    try {
      stream = createReadStream(a.transcript, { encoding: 'utf8' });
      const lines = createInterface({ input: stream, crlfDelay: Infinity });
      for await (const line of lines) {
        // Stopping: what is not written yet stays unindexed (its state was not advanced).
        if (this.closed) return { rows: total, lines: 0 };
        n++;
        const x = extractLine(line, this.o.now());
        if (x.at !== undefined) lastAt = x.at;
        // Lines indexed before still name the tools their results answer.
        if (n <= from) {
          tools.resolve(x.rows.filter((r) => r.kind === 'tool_call'));
          continue;
        }
        tools.resolve(x.rows);
        for (const r of x.rows) rows.push(toRow(a.job_id, a.n, n, x.at ?? lastAt, r));
        if (rows.length >= this.chunkRows) {
          await write(n, false);
          await yieldNow();
        }
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // No transcript (the process never started): nothing to index.
    } finally {
      stream?.destroy();
    }
    await write(Math.max(n, from), true);
    return { rows: total, lines: Math.max(0, n - from) };
  }

  /** Flush, stop the timer, and let a running reindex stop at its next chunk. */
  async close(): Promise<void> {
    const flushed = this.flush();
    this.closed = true;
    await flushed;
    await this.reindexing?.catch(() => undefined);
    await this.writing;
  }
}

function toRow(jobId: string, attempt: number, line: number, at: number, r: ExtractedRow): NewRow {
  return { jobId, attempt, line, at, kind: r.kind, ...(r.tool ? { tool: r.tool } : {}), text: r.text };
}
