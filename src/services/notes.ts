// Notes: a small versioned key-value store shared by the lead and every agent. Writes are
// compare-and-set when `expected_version` is given; watchers are woken by the write event
// (subscribe first, then check), never by polling.
import type { Caller, HubContext } from './context.js';
import { NoteStore, type NoteRow } from '../store/notes.js';
import { tx } from '../store/db.js';
import { waitUntil } from './wait.js';
import { ConflictError, InvalidInputError } from '../errors.js';
import { isoTime } from '../clock.js';
import type { ListNotesInput, WatchNotesInput, WriteNoteInput, DeleteNoteInput } from '../tools/noteSchemas.js';

export interface NoteView {
  key: string;
  value: string;
  version: number;
  author: string;
  updated_at: string;
}

const view = (r: NoteRow): NoteView => ({ key: r.key, value: r.value, version: r.version, author: r.author, updated_at: isoTime(r.updated_at) });
export const authorOf = (c: Caller): string => (c.role === 'agent' ? c.jobId : 'lead');

export class NoteService {
  readonly store: NoteStore;

  constructor(private readonly ctx: HubContext) {
    this.store = new NoteStore(ctx.db);
  }

  write(i: WriteNoteInput, caller: Caller): { key: string; version: number } {
    const bytes = Buffer.byteLength(i.value, 'utf8');
    if (bytes > this.ctx.config.noteMaxBytes) {
      throw new InvalidInputError(`value is ${bytes} bytes, over the ${this.ctx.config.noteMaxBytes}-byte limit (OVERSEER_NOTE_MAX_BYTES): store large material in a file in the work tree and put its path in the note`);
    }
    const version = tx(this.ctx.db, () => {
      const cur = this.store.get(i.key);
      if (i.expected_version !== undefined && (cur?.version ?? 0) !== i.expected_version) {
        throw new ConflictError(cur
          ? `note ${JSON.stringify(i.key)} is at version ${cur.version}, not ${i.expected_version}: read it again and retry with expected_version ${cur.version}`
          : `note ${JSON.stringify(i.key)} does not exist (expected version ${i.expected_version}): use expected_version 0 to create it`);
      }
      return this.store.put(i.key, i.value, authorOf(caller), this.ctx.clock.now());
    });
    this.ctx.bus.emit('note', { key: i.key, version });
    return { key: i.key, version };
  }

  /** Write as the hub itself (workflow artifacts), without compare-and-set. */
  writeAs(key: string, value: string, author: string): number {
    const version = tx(this.ctx.db, () => this.store.put(key, value, author, this.ctx.clock.now()));
    this.ctx.bus.emit('note', { key, version });
    return version;
  }

  read(key: string): NoteView | { key: string; found: false } {
    const r = this.store.get(key);
    return r ? view(r) : { key, found: false };
  }

  list(i: ListNotesInput): { notes: { key: string; version: number; author: string; updated_at: string }[]; next_cursor: string | null } {
    const rows = this.store.list(i.prefix ?? '', i.limit + 1, i.cursor);
    const page = rows.slice(0, i.limit);
    return {
      notes: page.map((r) => ({ key: r.key, version: r.version, author: r.author, updated_at: isoTime(r.updated_at) })),
      next_cursor: rows.length > i.limit ? page.at(-1)!.key : null,
    };
  }

  delete(i: DeleteNoteInput): { key: string; deleted: boolean } {
    const deleted = tx(this.ctx.db, () => {
      const cur = this.store.get(i.key);
      if (i.expected_version !== undefined && cur?.version !== i.expected_version) {
        throw new ConflictError(cur ? `note ${JSON.stringify(i.key)} is at version ${cur.version}, not ${i.expected_version}` : `note ${JSON.stringify(i.key)} does not exist`);
      }
      return this.store.delete(i.key);
    });
    if (deleted) this.ctx.bus.emit('note', { key: i.key, version: 0 });
    return { key: i.key, deleted };
  }

  /** Block until a watched note changes past the baseline (or reaches until_value). */
  async watch(i: WatchNotesInput, signal: AbortSignal | undefined, progress?: (ms: number) => void): Promise<{ notes: NoteView[]; timed_out: boolean }> {
    const keys = i.keys ?? [];
    const selected = (): NoteRow[] => this.store.select(keys, i.prefix);
    // Baseline taken after subscribing (waitUntil subscribes before its first check): a write
    // between the two is seen as a change, never lost.
    let baseline: Map<string, number> | undefined;
    const check = (): NoteView[] | undefined => {
      const rows = selected();
      let hits: NoteRow[];
      if (i.until_value !== undefined) hits = rows.filter((r) => r.value === i.until_value);
      else if (i.after_version !== undefined) hits = rows.filter((r) => r.version > i.after_version!);
      else {
        if (!baseline) {
          baseline = new Map(rows.map((r) => [r.key, r.version]));
          return undefined;
        }
        hits = rows.filter((r) => r.version > (baseline!.get(r.key) ?? 0));
      }
      return hits.length ? hits.map(view) : undefined;
    };
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['note'], check, signal,
      timeoutMs: Math.min(i.timeout_s, this.ctx.config.maxWaitS) * 1000,
      progressEveryMs: this.ctx.progressEveryMs, onProgress: progress,
    });
    return r.ok ? { notes: r.value, timed_out: false } : { notes: [], timed_out: r.reason === 'timeout' };
  }
}
