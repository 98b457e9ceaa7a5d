// Permission routing: children run with --permission-prompt-tool mcp__overseer__check_permission.
// The deterministic policy in .overseer/policy.json (the settings directory; first match wins; defaults in
// src/domain/policy.ts) answers; `ask` becomes a request for the lead, like request_approval.
// The policy file is re-read when it changes; an invalid file denies everything, saying why.
import { settingsDirOf } from '../config.js';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Caller, HubContext } from './context.js';
import type { RequestService } from '../approvals/service.js';
import { DEFAULT_POLICY, PolicySchema, decide, type Policy } from '../domain/policy.js';
import { ForbiddenError } from '../errors.js';
import { realTarget } from './realPaths.js';
import { protectedReason } from '../domain/protectedPaths.js';
import { protectedContextOf, secretRefusal } from './stateGuard.js';
import { addEvent, getJob } from '../store/sql/jobs.js';
import { roleOfRow, roleRefusal } from '../roles/index.js';
import type { WriteFacts } from '../roles/role.js';
import { bashWriteTargets } from '../domain/bashTargets.js';

/** The policy's answer now: allow, deny (with the message the agent sees) or ask the lead. */
export type Judgement = { action: 'allow' | 'ask'; reason: string } | { action: 'deny'; message: string };

export type PermissionAnswer = { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string };

export class PermissionService {
  private cached?: { stamp: string; policy: Policy | { error: string } };

  constructor(private readonly ctx: HubContext, private readonly requests: RequestService) {}

  get file(): string {
    return join(settingsDirOf(this.ctx.config), 'policy.json');
  }

  /** The policy in force: the file's, the default when there is none, or the parse error. */
  policy(): Policy | { error: string } {
    let stamp: string;
    try {
      const st = statSync(this.file);
      stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      return DEFAULT_POLICY;
    }
    if (this.cached?.stamp === stamp) return this.cached.policy;
    let policy: Policy | { error: string };
    try {
      const parsed = PolicySchema.safeParse(JSON.parse(readFileSync(this.file, 'utf8')));
      policy = parsed.success ? parsed.data : { error: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
    } catch (err) {
      policy = { error: `not valid JSON: ${(err as Error).message}` };
    }
    if ('error' in policy) this.ctx.log.error({ file: this.file, error: policy.error }, 'invalid policy file: denying every permission prompt');
    this.cached = { stamp, policy };
    return policy;
  }

  /** How the policy answers a Bash `command` of agent `jobId` (no request is opened and nothing recorded; ask is not allow). */
  async decideBash(jobId: string, command: string): Promise<{ action: 'allow' | 'ask' | 'deny'; reason: string }> {
    const policy = this.policy();
    if ('error' in policy) return { action: 'deny', reason: `the policy file ${this.file} is invalid (${policy.error})` };
    const job = await getJob(this.ctx.sql.db, jobId);
    const workDir = job?.work_dir ?? job?.cwd ?? this.ctx.projectDir;
    const secret = secretRefusal(this.ctx, 'Bash', { command }, [workDir]);
    if (secret) return { action: 'deny', reason: secret };
    return decide(policy, { toolName: 'Bash', input: { command }, workDir });
  }

  /**
   * The policy's answer for a tool call of an agent, decided now (nothing is asked; an `ask`
   * is returned as such) and recorded as a `permission` event. Paths are judged where they
   * really land. Used by check_permission and by the children's PreToolUse hook, which answers
   * allow/deny itself so a call the policy settles never makes the permission round trip.
   */
  async judge(caller: Caller, toolName: string, input: Record<string, unknown>, o: { recordAsk?: boolean; via?: 'hook' | 'check_permission' } = {}): Promise<Judgement> {
    if (caller.role !== 'agent') throw new ForbiddenError('check_permission is called by Claude Code inside agents, not by the lead.');
    const q = this.ctx.sql.db;
    const job = await getJob(q, caller.jobId);
    const workDir = realTarget(job?.work_dir ?? job?.cwd ?? this.ctx.projectDir, '/') ?? (job?.work_dir ?? job?.cwd ?? this.ctx.projectDir);
    // Before any rule: no policy can open the hub's state to an agent (stateGuard.ts).
    const secret = secretRefusal(this.ctx, toolName, input, [workDir, ...(job?.cwd ? [job.cwd] : [])]);
    if (secret) {
      await addEvent(q, caller.jobId, this.ctx.clock.now(), 'permission', {
        tool: toolName, action: 'deny', rule: null, rule_tool: null, guard: 'state', reason: secret, target: summarizeInput(input).slice(0, 200), via: o.via ?? 'check_permission',
      });
      return { action: 'deny', message: `Denied by ${secret}` };
    }
    // The agent's role (src/roles) before any rule: no policy widens it.
    const role = job ? roleOfRow(job) : undefined;
    const byRole = role ? roleRefusal(role, toolName, roleWrites(toolName, input, workDir)) : undefined;
    if (byRole) {
      await addEvent(q, caller.jobId, this.ctx.clock.now(), 'permission', {
        tool: toolName, action: 'deny', rule: null, rule_tool: null, guard: 'role', reason: byRole, target: summarizeInput(input).slice(0, 200), via: o.via ?? 'check_permission',
      });
      return { action: 'deny', message: byRole };
    }
    const policy = this.policy();
    if ('error' in policy) return { action: 'deny', message: `Overseer's policy file ${this.file} is invalid (${policy.error}); every permission prompt is denied until it is fixed.` };
    // The policy matches paths as text: give it where each write really lands (symlinks and
    // `..` after them resolved), so `<tree>/link-out/x` is judged as the outside path it is.
    const seen: Record<string, unknown> = { ...input };
    for (const f of ['file_path', 'notebook_path', 'path']) {
      const v = input[f];
      if (typeof v !== 'string') continue;
      const real = realTarget(v, workDir);
      if (real === undefined) return { action: 'deny', message: `Denied by Overseer: cannot tell where ${f} ${JSON.stringify(v.slice(0, 300))} leads (a symlink loop, or too deep); use the real path.` };
      seen[f] = real;
      if (/^(Edit|Write|MultiEdit|NotebookEdit)$/.test(toolName)) {
        const why = protectedReason(real, protectedContextOf(this.ctx));
        if (why) return { action: 'deny', message: `Denied by Overseer: agents may not write there: ${why}.` };
      }
    }
    const d = decide(policy, { toolName, input: seen, workDir });
    // The rule that decided (its index and tool pattern; null = the policy's default) and why.
    const rule = d.ruleIndex === null ? null : policy.rules[d.ruleIndex]!;
    // The hook leaves an `ask` to check_permission, which records it then: one event per call.
    if (d.action !== 'ask' || o.recordAsk !== false) await addEvent(q, caller.jobId, this.ctx.clock.now(), 'permission', {
      tool: toolName, action: d.action, rule: d.ruleIndex, rule_tool: rule?.tool ?? null, reason: d.reason, target: summarizeInput(input).slice(0, 200), via: o.via ?? 'check_permission',
    });
    if (d.action === 'deny') return { action: 'deny', message: `Denied by Overseer policy: ${d.reason}` };
    return { action: d.action, reason: d.reason };
  }

  async check(caller: Caller, toolName: string, input: Record<string, unknown>, signal?: AbortSignal, progress?: (ms: number) => void): Promise<PermissionAnswer> {
    if (caller.role !== 'agent') throw new ForbiddenError('check_permission is called by Claude Code inside agents, not by the lead.');
    const d = await this.judge(caller, toolName, input);
    if (d.action === 'allow') return { behavior: 'allow', updatedInput: input };
    if (d.action === 'deny') return { behavior: 'deny', message: d.message };
    const r = await this.requests.open(caller, {
      kind: 'permission', summary: `${toolName}: ${summarizeInput(input)}${d.reason ? ` (${d.reason})` : ''}`,
      toolName, toolInput: input, timeoutS: this.ctx.config.maxWaitS,
    }, signal, progress);
    const approved = r.status === 'answered' && r.decision === 'approved';
    await addEvent(this.ctx.sql.db, caller.jobId, this.ctx.clock.now(), 'permission_answer', { tool: toolName, request_status: r.status, decision: approved ? 'allow' : 'deny' });
    if (approved) return { behavior: 'allow', updatedInput: input };
    return { behavior: 'deny', message: r.status === 'answered' ? `The lead rejected this${r.comment ? `: ${r.comment}` : '.'}` : `No decision (${r.status})${r.comment ? `: ${r.comment}` : ''}.` };
  }
}

/** The writes of a tool call as the role check takes them (paths where they really land). */
function roleWrites(toolName: string, input: Record<string, unknown>, workDir: string): WriteFacts {
  const command = (toolName === 'Bash' || toolName === 'shell') && typeof input.command === 'string' ? input.command : undefined;
  const files = ['file_path', 'notebook_path'].map((f) => input[f]).filter((v): v is string => typeof v === 'string');
  const t = command !== undefined ? bashWriteTargets(command) : { paths: /^(Edit|Write|MultiEdit|NotebookEdit)$/.test(toolName) ? files : [], unknown: false };
  return { paths: t.paths.map((p) => realTarget(p, workDir) ?? p), unknown: t.unknown, tree: workDir, ...(command ? { command } : {}) };
}

function summarizeInput(input: Record<string, unknown>): string {
  const s = typeof input.command === 'string' ? input.command : typeof input.file_path === 'string' ? input.file_path : JSON.stringify(input);
  return s.length > 300 ? `${s.slice(0, 297)}...` : s;
}
