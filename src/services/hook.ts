// The hub side of the PreToolUse lock hook (hooks/overseer-hook.mjs forwards Claude Code's
// hook input here). Finds the files a tool call would write — Edit/Write/NotebookEdit paths,
// recognisable Bash write targets, apply_patch headers — and asks the lock service.
import { isAbsolute } from 'node:path';
import type { Caller } from './context.js';
import type { LockService } from './locks.js';
import { bashWriteTargets } from '../domain/bashTargets.js';
import { applyPatchTargets } from '../domain/applyPatch.js';
import { realTarget, resolveLockPath } from './realPaths.js';
import { protectedReason } from '../domain/protectedPaths.js';
import { protectedContextOf, secretRefusal } from './stateGuard.js';
import type { HubContext } from './context.js';
import type { PermissionService } from './permissions.js';
import type { HookLedger } from '../confine/hookLedger.js';
import type { LockGuard } from '../confine/lockGuard.js';
import { roleOfJob, roleRefusal } from '../roles/index.js';

export interface HookInput {
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  cwd?: string;
  tool_use_id?: string;
}

export interface HookVerdict {
  /** `allow` only from the hub's policy for a Claude child (src/hub.ts); the lock check says none or deny. */
  decision: 'none' | 'deny' | 'allow';
  reason?: string;
  /** Files the hook locked for the caller on the spot (auto mode). */
  locked?: string[];
}

/** Paths (as written, relative ones against cwd) a tool call would write. */
export function writeTargets(h: HookInput): string[] {
  return writeTargetsOf(h).paths;
}

/** The paths a tool call would write, and whether it also writes somewhere we cannot name. */
export function writeTargetsOf(h: HookInput): { paths: string[]; unknown: boolean } {
  if (h.tool_name === 'Bash' || h.tool_name === 'shell') {
    const input = h.tool_input ?? {};
    const cmd = typeof input.command === 'string' ? input.command : Array.isArray(input.command) ? (input.command as unknown[]).map(String).join(' ') : undefined;
    if (!cmd) return { paths: [], unknown: false };
    const t = bashWriteTargets(cmd);
    // apply_patch run through the shell (Codex does this with a heredoc).
    return { paths: cmd.includes('*** Begin Patch') ? [...applyPatchTargets(cmd), ...t.paths] : t.paths, unknown: t.unknown };
  }
  return { paths: fileTargets(h), unknown: false };
}

function fileTargets(h: HookInput): string[] {
  const input = h.tool_input ?? {};
  const str = (k: string): string | undefined => (typeof input[k] === 'string' ? (input[k] as string) : undefined);
  switch (h.tool_name) {
    case 'Edit':
    case 'Write':
    case 'MultiEdit': {
      const p = str('file_path');
      return p ? [p] : [];
    }
    case 'NotebookEdit': {
      const p = str('notebook_path');
      return p ? [p] : [];
    }
    case 'apply_patch': {
      const patch = str('input') ?? str('patch') ?? str('command');
      return patch ? applyPatchTargets(patch) : [];
    }
    default:
      return [];
  }
}

/** Reading tools: Claude Code allows them itself; the hook only guards the hub's state. */
const READ_TOOLS = /^(Read|Grep|Glob|LS)$/;

export class HookService {
  constructor(
    private readonly locks: LockService, private readonly ctx: HubContext, private readonly permissions: PermissionService,
    /** Hear of each tool call the hook decided on: the hook_bypassed backstop (src/confine/hookLedger.ts) and the lock guard. */
    private readonly heard: { hookLedger: Pick<HookLedger, 'note'>; lockGuard: Pick<LockGuard, 'toolsStarted'> },
  ) {}

  /**
   * The lock check, and for a Claude child's hook (`format: 'claude'`) also the permission
   * question when the policy settles it (allow or deny): only an `ask` still goes through
   * check_permission, so a settled call makes one trip to the hub (docs/performance.md). Reads
   * are Claude Code's own to allow (no prompt, no event per read).
   */
  async answer(caller: Caller, h: HookInput, format?: 'claude'): Promise<HookVerdict> {
    const { verdict: checked, paths } = await this.lockCheck(caller, h);
    let verdict = checked;
    if (verdict.decision === 'none' && format === 'claude' && caller.role === 'agent' && h.tool_name && !READ_TOOLS.test(h.tool_name)) {
      const j = await this.permissions.judge(caller, h.tool_name, h.tool_input ?? {}, { recordAsk: false, via: 'hook' });
      if (j.action === 'deny') return { ...verdict, decision: 'deny', reason: j.message };
      if (j.action === 'allow') verdict = { ...verdict, decision: 'allow', reason: j.reason };
    }
    // A file just handed to the caller may still be read-only in its sandbox for a moment: the
    // call goes ahead once it is writable (only then; the usual call answers without waiting).
    const pending = verdict.decision === 'deny' ? [] : this.locks.stillReadOnly(caller, paths);
    return pending.length ? this.afterWritable(caller, verdict, pending) : verdict;
  }

  private async afterWritable(caller: Caller, verdict: HookVerdict, paths: readonly string[]): Promise<HookVerdict> {
    const stuck = await this.locks.hookWritable(caller, paths);
    if (stuck.length === 0) return verdict;
    return { decision: 'deny', reason: `Overseer: you hold ${stuck.map((s) => s.path).join(', ')}, but the hub could not make ${stuck.length > 1 ? 'them' : 'it'} writable in your sandbox (${stuck.map((s) => s.error).join('; ')}). The lead has been told; work on other files or finish.` };
  }

  async check(caller: Caller, h: HookInput): Promise<HookVerdict> {
    return (await this.lockCheck(caller, h)).verdict;
  }

  /** The lock check, and the lockable paths (absolute, real) the call writes. */
  private async lockCheck(caller: Caller, h: HookInput): Promise<{ verdict: HookVerdict; paths: string[] }> {
    if (caller.role === 'agent' && h.tool_use_id) {
      this.heard.hookLedger.note(caller.jobId, h.tool_use_id);
      this.heard.lockGuard.toolsStarted(caller.jobId, [h.tool_use_id]); // the tool runs right after this answer
    }
    const root = await this.locks.workTree(caller);
    const base = h.cwd && isAbsolute(h.cwd) ? h.cwd : root;
    const paths: string[] = [];
    const targets = writeTargetsOf(h);
    if (caller.role === 'agent') {
      const guarded = protectedContextOf(this.ctx);
      for (const t of targets.paths) {
        const real = realTarget(t, base);
        const why = real === undefined ? `cannot tell where ${JSON.stringify(t)} leads` : protectedReason(real, guarded);
        if (why) return { paths: [], verdict: { decision: 'deny', reason: `Overseer: agents may not write there: ${why}.` } };
      }
      // Any tool, Bash and Codex's shell included: naming the hub's state is refused (stateGuard.ts).
      const secret = secretRefusal(this.ctx, h.tool_name ?? '', h.tool_input ?? {}, [base, root]);
      if (secret) return { paths: [], verdict: { decision: 'deny', reason: secret } };
      // The agent's role (src/roles): a reviewer's or planner's writes, a tool its role denies.
      const role = await roleOfJob(this.ctx.sql.db, caller.jobId);
      if (role) {
        const why = roleRefusal(role, h.tool_name ?? '', {
          paths: targets.paths.map((t) => realTarget(t, base) ?? t), unknown: targets.unknown, tree: realTarget(root, '/') ?? root, command: commandOf(h),
        });
        if (why) return { paths: [], verdict: { decision: 'deny', reason: why } };
      }
      if (h.tool_name && READ_TOOLS.test(h.tool_name)) return { paths: [], verdict: { decision: 'none' } };
    }
    for (const t of targets.paths) {
      // Walked from base: `..` applies after symlinks, as in the kernel. The tree's root itself
      // is a target too (`git checkout .`): it conflicts with every lock inside it.
      const r = resolveLockPath(t, base, root, { allowRoot: true });
      if (r.ok) paths.push(r.path); // outside the work tree: not lockable here; the permission policy decides
    }
    const unique = [...new Set(paths)];
    // hookCheck renews the caller's locks too (inside its transaction when it has one).
    return { paths: unique, verdict: await this.locks.hookCheck(caller, unique, targets.unknown ? describeUnknown(h) : undefined) };
  }
}

/** A shell call's command line, else undefined. */
function commandOf(h: HookInput): string | undefined {
  if (h.tool_name !== 'Bash' && h.tool_name !== 'shell') return undefined;
  const c = h.tool_input?.command;
  return typeof c === 'string' ? c : Array.isArray(c) ? c.map(String).join(' ') : undefined;
}

/** What an unnameable write was, for the agent and the events table. */
function describeUnknown(h: HookInput): string {
  const c = h.tool_input?.command;
  const text = typeof c === 'string' ? c : JSON.stringify(c ?? '');
  return `${h.tool_name ?? 'a tool'} \`${text.length > 200 ? `${text.slice(0, 197)}...` : text}\``;
}
