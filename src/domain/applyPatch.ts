// Target paths of a Codex `apply_patch` patch (docs/cli-facts.md X6): the files named on its
// `*** Add File:`, `*** Update File:`, `*** Delete File:` and `*** Move to:` header lines.
// Paths are returned as written (relative to the session cwd, usually); the caller resolves them.
// Pure; never throws. Deduplicated, in order of first appearance.

const HEADER = /^\*\*\* (?:Add File|Update File|Delete File|Move to):[ \t]*(.*?)[ \t]*$/;

/** Every file a patch adds, updates, deletes or moves to, as written, deduplicated in order. */
export function applyPatchTargets(patch: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const raw of patch.split(/\r\n|\r|\n/)) {
    const m = HEADER.exec(raw.trim());
    const p = m?.[1];
    if (p && !seen.has(p)) {
      seen.add(p);
      out.push(p);
    }
  }
  return out;
}
