// Permission routing: children run with --permission-prompt-tool mcp__overseer__check_permission.
// The deterministic policy in <state>/policy.json (first match wins; defaults in
// src/domain/policy.ts) answers; `ask` becomes a request for the lead, like request_approval.
// The policy file is re-read when it changes; an invalid file denies everything, saying why.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Caller, HubContext } from './context.js';
import type { RequestService } from '../approvals/service.js';
import { DEFAULT_POLICY, PolicySchema, decide, type Policy } from '../domain/policy.js';
import { ForbiddenError } from '../errors.js';

export type PermissionAnswer = { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string };

export class PermissionService {
  private cached?: { stamp: string; policy: Policy | { error: string } };

  constructor(private readonly ctx: HubContext, private readonly requests: RequestService) {}

  get file(): string {
    return join(this.ctx.config.home, 'policy.json');
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

  async check(caller: Caller, toolName: string, input: Record<string, unknown>, signal?: AbortSignal, progress?: (ms: number) => void): Promise<PermissionAnswer> {
    if (caller.role !== 'agent') throw new ForbiddenError('check_permission is called by Claude Code inside agents, not by the lead.');
    const policy = this.policy();
    if ('error' in policy) return { behavior: 'deny', message: `Overseer's policy file ${this.file} is invalid (${policy.error}); every permission prompt is denied until it is fixed.` };
    const job = this.ctx.store.get(caller.jobId);
    const workDir = job?.work_dir ?? job?.cwd ?? this.ctx.projectDir;
    const d = decide(policy, { toolName, input, workDir });
    this.ctx.store.addEvent(caller.jobId, this.ctx.clock.now(), 'permission', { tool: toolName, action: d.action, rule: d.ruleIndex });
    if (d.action === 'allow') return { behavior: 'allow', updatedInput: input };
    if (d.action === 'deny') return { behavior: 'deny', message: `Denied by Overseer policy: ${d.reason}` };
    const r = await this.requests.open(caller, {
      kind: 'permission', summary: `${toolName}: ${summarizeInput(input)}${d.reason ? ` (${d.reason})` : ''}`,
      toolName, toolInput: input, timeoutS: this.ctx.config.maxWaitS,
    }, signal, progress);
    if (r.status === 'answered' && r.decision === 'approved') return { behavior: 'allow', updatedInput: input };
    return { behavior: 'deny', message: r.status === 'answered' ? `The lead rejected this${r.comment ? `: ${r.comment}` : '.'}` : `No decision (${r.status})${r.comment ? `: ${r.comment}` : ''}.` };
  }
}

function summarizeInput(input: Record<string, unknown>): string {
  const s = typeof input.command === 'string' ? input.command : typeof input.file_path === 'string' ? input.file_path : JSON.stringify(input);
  return s.length > 300 ? `${s.slice(0, 297)}...` : s;
}
