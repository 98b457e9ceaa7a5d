// Zod input schemas of the lock tools (design.md "Coordination").
import { z } from 'zod';

export const MAX_LOCK_FILES = 1000;

const File = z.string().min(1, 'a file path is empty').max(4096, 'a file path is longer than 4096 characters');

export const LockFilesInput = z.object({
  files: z.array(File).min(1, 'files is empty: name at least one file to lock').max(MAX_LOCK_FILES, `files takes at most ${MAX_LOCK_FILES} paths in one call: lock a directory's files in batches, or coordinate through a note`),
  reason: z.string().max(500).optional(),
  timeout_s: z.number().min(0, 'timeout_s must be 0 (fail at once when held) or more').max(24 * 3600).default(300),
  ttl_s: z.number().int().min(5, 'ttl_s must be at least 5').max(24 * 3600, 'ttl_s must be at most 86400').default(600),
}).strict();
export type LockFilesInput = z.infer<typeof LockFilesInput>;

export const ReleaseFilesInput = z.object({
  files: z.array(File).max(MAX_LOCK_FILES).optional().describe('none = release all of mine'),
}).strict();
export type ReleaseFilesInput = z.infer<typeof ReleaseFilesInput>;

export const ListLocksInput = z.object({ path_prefix: z.string().max(4096).optional() }).strict();
export type ListLocksInput = z.infer<typeof ListLocksInput>;
