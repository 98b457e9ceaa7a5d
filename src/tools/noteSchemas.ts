// Zod input schemas of the note tools (design.md "Coordination"). Keys are printable,
// `/`-namespaced, at most 256 characters; values at most 1 MB by default.
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
  key: NoteKey,
  value: z.string(),
  expected_version: z.number().int().min(0, 'expected_version must be 0 (the note must not exist yet) or a version you read').optional(),
}).strict();
export type WriteNoteInput = z.infer<typeof WriteNoteInput>;

export const ReadNoteInput = z.object({
  key: NoteKey,
  offset: z.number().int().min(0, 'offset must be 0 or the next_offset a read returned').optional()
    .describe('start of the piece to read (a long value comes in pieces: pass the next_offset of the previous read)'),
  version: z.number().int().min(1).optional()
    .describe('the version of the first piece: refused if the note changed since, so pieces of two versions are never mixed'),
}).strict();
export type ReadNoteInput = z.infer<typeof ReadNoteInput>;

export const ListNotesInput = z.object({
  prefix: Prefix.optional(),
  limit: z.number().int().min(1).max(500, 'limit must be at most 500: page with cursor').default(200),
  cursor: z.string().max(MAX_NOTE_KEY + 10).optional(),
}).strict();
export type ListNotesInput = z.infer<typeof ListNotesInput>;

export const WatchNotesInput = z.object({
  keys: z.array(NoteKey).max(100, 'keys takes at most 100 keys: use prefix').optional(),
  prefix: Prefix.optional(),
  until_value: z.string().optional().describe('return once a watched note has exactly this value'),
  after_version: z.number().int().min(0).optional().describe('return notes whose version is greater (default: changes after this call)'),
  timeout_s: z.number().min(0).max(24 * 3600).default(300),
}).strict().refine((w) => (w.keys && w.keys.length > 0) || w.prefix !== undefined, { message: 'watch what? give keys or a prefix', path: ['keys'] });
export type WatchNotesInput = z.infer<typeof WatchNotesInput>;

export const DeleteNoteInput = z.object({ key: NoteKey, expected_version: z.number().int().min(1).optional() }).strict();
export type DeleteNoteInput = z.infer<typeof DeleteNoteInput>;
