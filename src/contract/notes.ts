// Zod input schemas of the note tools (docs/tools.md "Notes", docs/coordination.md). Keys are printable,
// `/`-namespaced, at most 256 characters; values at most 1 MB by default. read_note returns a NoteView.
import { z } from 'zod';

export const MAX_NOTE_KEY = 256;

export const NoteKey = z.string()
  .min(1, 'key is empty: use a name like "plan/api" ("/" separates namespaces)')
  .max(MAX_NOTE_KEY, `key is longer than ${MAX_NOTE_KEY} characters: shorten it`)
  // eslint-disable-next-line no-control-regex
  .refine((k) => !/[\u0000-\u001f\u007f-\u009f]/.test(k), 'key has a control character (newline, tab, NUL…): use printable characters only')
  .refine((k) => !k.startsWith('/') && !k.endsWith('/') && !k.includes('//'), 'key must not start or end with "/" nor contain "//": use "a/b/c"')
  .refine((k) => k.trim() === k, 'key must not start or end with spaces');

const Prefix = z.string().max(MAX_NOTE_KEY)
  // eslint-disable-next-line no-control-regex
  .refine((k) => !/[\u0000-\u001f\u007f-\u009f]/.test(k), 'prefix has a control character: use printable characters only');

export const WriteNoteInput = z.object({
  key: NoteKey.describe('Name of the note, "/" separating namespaces, e.g. "plan/api"; at most 256 printable characters.'),
  value: z.string().describe('The text to store (replaces the whole value); at most 1 MB by default (OVERSEER_NOTE_MAX_BYTES).'),
  expected_version: z.number().int().min(0, 'expected_version must be 0 (the note must not exist yet) or a version you read').optional()
    .describe('Compare-and-set: write only if the note is at this version (0 = it must not exist yet); a mismatch fails with the current version (default: write unconditionally).'),
}).strict();
export type WriteNoteInput = z.infer<typeof WriteNoteInput>;

export const ReadNoteInput = z.object({
  key: NoteKey.describe('Name of the note to read, e.g. "plan/api".'),
  offset: z.number().int().min(0, 'offset must be 0 or the next_offset a read returned').optional()
    .describe('Character offset of the piece to read: a long value comes in pieces, pass the next_offset of the previous read (default 0).'),
  version: z.number().int().min(1).optional()
    .describe('The version the first piece returned: refused if the note changed since, so pieces of two versions are never mixed (default: any version).'),
}).strict();
export type ReadNoteInput = z.infer<typeof ReadNoteInput>;

export const ListNotesInput = z.object({
  prefix: Prefix.optional().describe('Only keys that start with this, e.g. "plan/" (default: every key).'),
  limit: z.number().int().min(1).max(500, 'limit must be at most 500: page with cursor').default(200)
    .describe('Most keys in one page, 1..500 (default 200); more are reached with cursor.'),
  cursor: z.string().max(MAX_NOTE_KEY + 10).optional().describe('The next_cursor of the previous page, to get the next one (default: the first page).'),
}).strict();
export type ListNotesInput = z.infer<typeof ListNotesInput>;

export const WatchNotesInput = z.object({
  keys: z.array(NoteKey).max(100, 'keys takes at most 100 keys: use prefix').optional()
    .describe('Exact note keys to watch, at most 100; give keys or prefix (or both).'),
  prefix: Prefix.optional().describe('Watch every note whose key starts with this, e.g. "build/"; give keys or prefix (or both).'),
  until_value: z.string().optional().describe('Return only once a watched note holds exactly this value, e.g. "done" (at once if one already does; default: on any change).'),
  after_version: z.number().int().min(0).optional().describe('Return the watched notes whose version is greater than this, even if written before the call (default: only changes after this call).'),
  timeout_s: z.number().min(0).max(24 * 3600).default(300)
    .describe('Longest to wait, in seconds (0..86400, default 300); then the result says timed_out.'),
}).strict().refine((w) => (w.keys && w.keys.length > 0) || w.prefix !== undefined, { message: 'watch what? give keys or a prefix', path: ['keys'] });
export type WatchNotesInput = z.infer<typeof WatchNotesInput>;

export const DeleteNoteInput = z.object({
  key: NoteKey.describe('Name of the note to delete, e.g. "plan/api".'),
  expected_version: z.number().int().min(1).optional()
    .describe('Delete only if the note is still at this version (default: delete whatever version it is at).'),
}).strict();
export type DeleteNoteInput = z.infer<typeof DeleteNoteInput>;

export interface NoteView {
  key: string;
  /** The value, or the piece of it from `offset` when the whole does not fit one result. */
  value: string;
  version: number;
  author: string;
  updated_at: string;
  /** Length of the whole value (UTF-16 units, as `offset` counts). */
  total_chars: number;
  offset: number;
  /** Where the next piece starts (read_note with this offset and `version`), or null when `value` reaches the end. */
  next_offset: number | null;
}
