// Zod input schemas of the lock tools (docs/tools.md "Locks", docs/coordination.md).
import { z } from 'zod';

export const MAX_LOCK_FILES = 1000;

const File = z.string().min(1, 'a file path is empty').max(4096, 'a file path is longer than 4096 characters');

export const LockFilesInput = z.object({
  files: z.array(File).min(1, 'files is empty: name at least one file to lock').max(MAX_LOCK_FILES, `files takes at most ${MAX_LOCK_FILES} paths in one call: lock a directory's files in batches, or coordinate through a note`)
    .describe(`Paths of the files to lock, 1..${MAX_LOCK_FILES}; relative paths resolve against your own work tree, and paths outside it are refused.`),
  reason: z.string().max(500).optional().describe('Why you lock them, shown to others in list_locks and in lock errors, e.g. "refactoring the parser".'),
  timeout_s: z.number().min(0, 'timeout_s must be 0 (fail at once when held) or more').max(24 * 3600).default(300)
    .describe('Longest to wait for files others hold, in seconds (0 = fail at once, default 300); on timeout nothing is locked.'),
  ttl_s: z.number().int().min(5, 'ttl_s must be at least 5').max(24 * 3600, 'ttl_s must be at most 86400').default(600)
    .describe('Seconds the locks live without any call from you, 5..86400 (default 600); every call you make renews them.'),
}).strict();
export type LockFilesInput = z.infer<typeof LockFilesInput>;

export const ReleaseFilesInput = z.object({
  files: z.array(File).max(MAX_LOCK_FILES).optional().describe('Paths of the locks to release, resolved like lock_files paths (default: release every lock you hold).'),
}).strict();
export type ReleaseFilesInput = z.infer<typeof ReleaseFilesInput>;

export const ListLocksInput = z.object({
  path_prefix: z.string().max(4096).optional()
    .describe('Only locks whose path starts with this; a relative prefix is relative to your own work tree (default: all locks).'),
}).strict();
export type ListLocksInput = z.infer<typeof ListLocksInput>;
