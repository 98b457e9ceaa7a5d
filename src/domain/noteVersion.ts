// Note compare-and-set, the rule both stores decide by (src/services/notes.ts over the synchronous
// store, src/store/sql/notes.ts over Kysely): a write with an expected version goes through only
// when the note is at that version now, 0 meaning "does not exist yet".

/** Why a write expecting `expected` is refused when the note is at `current` (undefined: absent); undefined when it may go. */
export function noteWriteConflict(key: string, current: number | undefined, expected: number | undefined): string | undefined {
  if (expected === undefined || (current ?? 0) === expected) return undefined;
  return current !== undefined
    ? `note ${JSON.stringify(key)} is at version ${current}, not ${expected}: read it again and retry with expected_version ${current}`
    : `note ${JSON.stringify(key)} does not exist (expected version ${expected}): use expected_version 0 to create it`;
}
