// What a confined child sees of the filesystem, as plain data, and the bubblewrap argv that
// makes it so. Pure: the caller resolves real paths and says which exist.
//
// A child runs in its own mount and pid namespaces, in the same filesystem otherwise
// (`--dev-bind / /`: same network, same user; it sees only its own processes), with:
// - `hide`: directories replaced by an empty read-only tmpfs (the hub's state: database,
//   lead token, hub.json — for this hub and every other hub of the user);
// - `hideFiles`: files replaced by an empty read-only file (/dev/null);
// - `private`: directories replaced by an empty WRITABLE tmpfs of the child's own (Claude Code's
//   session registry and messaging sockets: the child keeps its own, and cannot reach the lead's
//   or another child's session, nor collide with them — in a pid namespace every child is pid 2);
// - `reveal`: directories inside a hidden one that the child itself needs, bound back
//   (read-write: a Codex child's private CODEX_HOME);
// - `readOnly`: the rules the child runs under (Claude Code and Codex settings, git hooks and
//   config, the project's Overseer settings, Overseer's own code), bound read-only onto
//   themselves, so no program the child runs can change them: not Write, not Bash, not
//   `node -e`.

export interface ConfinePlan {
  hide: string[];
  hideFiles: string[];
  reveal: string[];
  private?: string[];
  readOnly: string[];
  /** Files other agents hold when the child starts (read-only too; kept current by lockMounts.ts). */
  held?: string[];
  /** The child's whole work tree, read-only (a reviewer's or planner's, src/roles): bound first,
   * so every hide, reveal and bind below still applies inside it. */
  readOnlyTree?: string;
  /** Inside a read-only tree, what the CLI itself must write (the child's HOME, Claude's and
   * Codex's config directories, its TMPDIR, when they lie in the tree, as in a test hub): bound
   * back writable right after the tree, so its session file is written and a resume finds it. */
  writable?: string[];
}

/** Capabilities a child never has (they only matter when the person runs agents as root). */
export const DROPPED_CAPS = ['CAP_SYS_ADMIN', 'CAP_SYS_MODULE', 'CAP_SYS_RAWIO', 'CAP_MKNOD', 'CAP_SYS_PTRACE', 'CAP_SYS_BOOT', 'CAP_DAC_READ_SEARCH'];

/** Bubblewrap's argv (before `--` and the command) for `plan`. Order matters: hide, reveal,
 * seal the hidden tmpfs read-only, then the read-only binds (sources are read from the host). */
export function bwrapArgs(plan: ConfinePlan): string[] {
  // A pid namespace with its own /proc: /proc/<pid>/root of any process outside (the hub, the
  // lead) would show the whole filesystem as that process sees it, state included.
  // A child running as root keeps no capability to undo that (unmount, raw I/O, modules, ptrace).
  // CAP_SETUID/SETGID stay: Codex's own sandbox (a nested bwrap) needs them to map its user.
  const args = ['--dev-bind', '/', '/', '--unshare-pid', '--proc', '/proc', ...DROPPED_CAPS.flatMap((c) => ['--cap-drop', c])];
  if (plan.readOnlyTree) args.push('--ro-bind', plan.readOnlyTree, plan.readOnlyTree);
  for (const d of plan.writable ?? []) args.push('--bind', d, d);
  for (const d of plan.hide) args.push('--tmpfs', d);
  for (const d of plan.reveal) args.push('--bind', d, d);
  for (const d of plan.hide) args.push('--remount-ro', d);
  for (const d of plan.private ?? []) args.push('--tmpfs', d);
  for (const f of plan.hideFiles) args.push('--ro-bind', '/dev/null', f);
  for (const p of plan.readOnly) args.push('--ro-bind', p, p);
  for (const p of plan.held ?? []) args.push('--ro-bind', p, p);
  return args;
}

/** Drop paths inside another path of the list (a bind of a parent covers them) and repeats. */
export function outermost(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths)].sort((a, b) => a.length - b.length);
  const out: string[] = [];
  for (const p of sorted) if (!out.some((o) => p === o || p.startsWith(`${o}/`))) out.push(p);
  return out;
}
