// Notes: a small versioned key-value store shared by the lead and every agent. Writes are
// compare-and-set when `expected_version` is given; watchers are woken by the write event
// (subscribe first, then check), never by polling.
import type { Caller, HubContext } from './context.js';
import { deleteNote, getNote, listNotes, selectNotes, setNote, type NoteRow } from '../store/sql/notes.js';
import type { Q } from '../store/sql/tx.js';
import { waitUntil } from './wait.js';
import { ConflictError, ForbiddenError, InvalidInputError } from '../errors.js';
import { isoTime } from '../clock.js';
import type { ListNotesInput, NoteView, ReadNoteInput, WatchNotesInput, WriteNoteInput, DeleteNoteInput } from '../contract/notes.js';
import { chunkEnd, jsonLength } from '../domain/jsonChunk.js';
import { getJob } from '../store/sql/jobs.js';

export type { NoteView };

/** JSON-encoded characters of note values one tool result carries (the result cap is 20,000). */
export const NOTE_PIECE_CHARS = 15_000;

/** A note's view with the piece of its value from `offset` that fits `budget` encoded characters. */
function view(r: NoteRow, offset = 0, budget = NOTE_PIECE_CHARS): NoteView {
  const end = chunkEnd(r.value, offset, budget);
  return {
    key: r.key, value: r.value.slice(offset, end), version: r.version, author: r.author, updated_at: isoTime(r.updated_at),
    total_chars: r.value.length, offset, next_offset: end < r.value.length ? end : null,
  };
}
export const authorOf = (c: Caller): string => (c.role === 'agent' ? c.jobId : 'lead');

export class NoteService {
  constructor(private readonly ctx: HubContext) {}

  async write(i: WriteNoteInput, caller: Caller): Promise<{ key: string; version: number }> {
    await this.guardWorkflowKey(i.key, caller, 'write');
    const bytes = Buffer.byteLength(i.value, 'utf8');
    if (bytes > this.ctx.config.noteMaxBytes) {
      throw new InvalidInputError(`value is ${bytes} bytes, over the ${this.ctx.config.noteMaxBytes}-byte limit (OVERSEER_NOTE_MAX_BYTES): store large material in a file in the work tree and put its path in the note`);
    }
    const version = await setNote(this.ctx.sql.db, { key: i.key, value: i.value, author: authorOf(caller), now: this.ctx.clock.now(), expected_version: i.expected_version });
    this.ctx.bus.emit('note', { key: i.key, version });
    return { key: i.key, version };
  }

  /**
   * `workflow/<id>/…` (plan, contract, worklogs) belongs to the hub, which inlines it into every
   * phase prompt and keeps its own record of check-offs: only the lead and that workflow's own
   * phases may write there; any other agent is refused.
   */
  private async guardWorkflowKey(key: string, caller: Caller, what: 'write' | 'delete'): Promise<void> {
    const m = /^workflow\/([^/]+)\//.exec(key);
    if (!m || caller.role !== 'agent') return;
    if ((await getJob(this.ctx.sql.db, caller.jobId))?.workflow_id === m[1]) return;
    throw new ForbiddenError(`cannot ${what} ${JSON.stringify(key)}: notes under workflow/${m[1]}/ belong to that workflow (the hub and its own phases). Read them with read_note; to share your own findings, use another key (e.g. "notes/${caller.jobId}/…").`);
  }

  /** Write as the hub itself (workflow and debate artifacts), without compare-and-set. */
  async put(key: string, value: string, author: string): Promise<number> {
    const version = await setNote(this.ctx.sql.db, { key, value, author, now: this.ctx.clock.now() });
    this.ctx.bus.emit('note', { key, version });
    return version;
  }

  /** One note's row as stored (the hub's own reads: workflow plans, contracts, debate finals). */
  async get(key: string, q: Q = this.ctx.sql.db): Promise<NoteRow | undefined> {
    return getNote(q, key);
  }

  /** Notes by exact keys and/or a key prefix, as stored (the hub's own reads). */
  async select(keys: readonly string[], prefix: string | undefined, q: Q = this.ctx.sql.db): Promise<NoteRow[]> {
    return selectNotes(q, keys, prefix);
  }

  /** The whole note (for MCP resources, which are not capped like tool results). */
  async readWhole(key: string): Promise<{ key: string; value: string; version: number; author: string; updated_at: string } | { key: string; found: false }> {
    const r = await getNote(this.ctx.sql.db, key);
    return r ? { key: r.key, value: r.value, version: r.version, author: r.author, updated_at: isoTime(r.updated_at) } : { key, found: false };
  }

  /**
   * A note, whole when it fits one result; a longer value comes in pieces (`offset`,
   * `next_offset`). Pass the `version` of the first piece with the later ones: if the note
   * changed in between, the read is refused instead of mixing two versions.
   */
  async read(i: ReadNoteInput): Promise<NoteView | { key: string; found: false }> {
    const r = await getNote(this.ctx.sql.db, i.key);
    if (!r) return { key: i.key, found: false };
    if (i.version !== undefined && r.version !== i.version) {
      throw new ConflictError(`note ${JSON.stringify(i.key)} is at version ${r.version} now, not ${i.version}: it changed while you read it in pieces; read it again from offset 0`);
    }
    const offset = i.offset ?? 0;
    if (offset > r.value.length) {
      throw new InvalidInputError(`offset ${offset} is past the end of note ${JSON.stringify(i.key)} (${r.value.length} characters): use the next_offset a read returned`);
    }
    return view(r, offset);
  }

  async list(i: ListNotesInput): Promise<{ notes: { key: string; version: number; author: string; updated_at: string }[]; next_cursor: string | null }> {
    const rows = await listNotes(this.ctx.sql.db, i.prefix ?? '', i.limit + 1, i.cursor);
    const page = rows.slice(0, i.limit);
    return {
      notes: page.map((r) => ({ key: r.key, version: r.version, author: r.author, updated_at: isoTime(r.updated_at) })),
      next_cursor: rows.length > i.limit ? page.at(-1)!.key : null,
    };
  }

  async delete(i: DeleteNoteInput, caller?: Caller): Promise<{ key: string; deleted: boolean }> {
    if (caller) await this.guardWorkflowKey(i.key, caller, 'delete');
    const deleted = await deleteNote(this.ctx.sql.db, i.key, i.expected_version);
    if (deleted) this.ctx.bus.emit('note', { key: i.key, version: 0 });
    return { key: i.key, deleted };
  }

  /** Block until a watched note changes past the baseline (or reaches until_value). */
  async watch(i: WatchNotesInput, signal: AbortSignal | undefined, progress?: (ms: number) => void): Promise<{ notes: NoteView[]; timed_out: boolean }> {
    const keys = i.keys ?? [];
    const selected = (): Promise<NoteRow[]> => selectNotes(this.ctx.sql.db, keys, i.prefix);
    // Baseline taken after subscribing (waitUntil subscribes before its first check): a write
    // between the two is seen as a change, never lost.
    let baseline: Map<string, number> | undefined;
    const check = async (): Promise<NoteView[] | undefined> => {
      const rows = await selected();
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
      return hits.length ? fitViews(hits) : undefined;
    };
    const r = await waitUntil({
      bus: this.ctx.bus, events: ['note'], check, signal,
      timeoutMs: Math.min(i.timeout_s, this.ctx.config.maxWaitS) * 1000,
      progressEveryMs: this.ctx.progressEveryMs, onProgress: progress,
    });
    return r.ok ? { notes: r.value, timed_out: false } : { notes: [], timed_out: r.reason === 'timeout' };
  }
}

/**
 * Views of the notes a watch returns, within one result: values share NOTE_PIECE_CHARS in key
 * order (a value that does not fit whole comes as its first piece, with `next_offset`), and
 * notes past what the result can list are left for the caller to read (never cut short).
 */
function fitViews(rows: readonly NoteRow[]): NoteView[] {
  let left = NOTE_PIECE_CHARS;
  let meta = 0;
  const out: NoteView[] = [];
  for (const r of rows) {
    meta += 200 + jsonLength(r.key) + jsonLength(r.author);
    if (meta > 4_000 && out.length > 0) break;
    const v = view(r, 0, left);
    left -= jsonLength(v.value);
    out.push(v);
  }
  return out;
}
