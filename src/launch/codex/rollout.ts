// Codex's live usage. `codex exec --json` reports tokens only at turn.completed (the thread's
// running total), but Codex writes one `event_msg`/`token_count` line per model response to its
// rollout file ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread_id>.jsonl) as the turn
// goes, with the thread's total after that response. This reader follows that file: each new
// token_count line is one model call, its tokens the difference from the previous total. A
// resumed thread's file already holds earlier turns: reading starts at its end. The same file
// says what became of each shell command (its call, then the text the model got back), which the
// `--json` stream leaves out for a command whose sandbox could not start (commands.ts).
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentSignal, TokenUsage, UsageChannel } from '../types.js';
import { commandOutcome, refusedByHook, SHELL_TOOLS } from './commands.js';

type Usage = { input_tokens?: number; cached_input_tokens?: number; output_tokens?: number };

/** The rollout file of a thread under <codexHome>/sessions, newest day first; undefined when none yet. */
export function findRollout(codexHome: string, threadId: string): string | undefined {
  const suffix = `-${threadId}.jsonl`;
  const walk = (dir: string, depth: number): string | undefined => {
    let names: string[];
    try {
      names = readdirSync(dir).sort().reverse();
    } catch {
      return undefined;
    }
    if (depth === 3) {
      const f = names.find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
      return f ? join(dir, f) : undefined;
    }
    for (const n of names) {
      const hit = walk(join(dir, n), depth + 1);
      if (hit) return hit;
    }
    return undefined;
  };
  return walk(join(codexHome, 'sessions'), 0);
}

const fromCodex = (u: Usage): TokenUsage => ({ input: u.input_tokens ?? 0, output: u.output_tokens ?? 0, cachedInput: u.cached_input_tokens ?? 0 });

export class RolloutReader implements UsageChannel {
  private file?: string;
  private offset = 0;
  private rest = '';
  private threadId?: string;
  private total: TokenUsage;
  private lines = 0;
  private readonly model?: string;
  /** Shell calls seen whose output has not come yet. */
  private readonly shellCalls = new Set<string>();

  constructor(private readonly codexHome: string, o: { resumeThread?: string; priorUsage?: TokenUsage; model?: string }) {
    this.total = { input: 0, output: 0, cachedInput: 0, ...o.priorUsage };
    this.model = o.model;
    if (o.resumeThread) {
      this.threadId = o.resumeThread;
      this.file = findRollout(codexHome, o.resumeThread);
      if (this.file) this.offset = statSync(this.file).size;
    }
  }

  /** The thread id, once the stream has named it (thread.started). */
  setSession(id: string): void {
    if (this.threadId !== id) {
      this.threadId = id;
      this.file = undefined;
      this.offset = 0;
    }
  }

  /** New model calls written since the last read. Never throws. */
  read(): AgentSignal[] {
    if (!this.threadId) return [];
    this.file ??= findRollout(this.codexHome, this.threadId);
    if (!this.file) return [];
    let text: string;
    try {
      const size = statSync(this.file).size;
      if (size <= this.offset) return [];
      const fd = openSync(this.file, 'r');
      try {
        const buf = Buffer.alloc(size - this.offset);
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        this.offset += n;
        text = this.rest + buf.subarray(0, n).toString('utf8');
      } finally {
        closeSync(fd);
      }
    } catch {
      return [];
    }
    const parts = text.split('\n');
    this.rest = parts.pop() ?? '';
    const out: AgentSignal[] = [];
    for (const line of parts) {
      this.lines++;
      const s = this.parse(line);
      if (s) out.push(s);
    }
    return out;
  }

  private parse(line: string): AgentSignal | undefined {
    let e: { type?: string; ordinal?: number; payload?: { type?: string; info?: { total_token_usage?: Usage } | null; name?: string; call_id?: string; output?: unknown } };
    try {
      e = JSON.parse(line) as typeof e;
    } catch {
      return undefined;
    }
    if (e.type === 'response_item') return this.command(e.payload ?? {});
    const t = e.payload?.type === 'token_count' ? e.payload.info?.total_token_usage : undefined;
    if (e.type !== 'event_msg' || !t) return undefined;
    const total = fromCodex(t);
    const usage: TokenUsage = {
      input: Math.max(0, total.input - this.total.input),
      output: Math.max(0, total.output - this.total.output),
      cachedInput: Math.max(0, (total.cachedInput ?? 0) - (this.total.cachedInput ?? 0)),
    };
    // Codex repeats a token_count without a new response (e.g. rate-limit updates): not a call.
    if (usage.input === 0 && usage.output === 0) return undefined;
    this.total = total;
    return { kind: 'usage', callId: `${this.threadId}:${e.ordinal ?? `l${this.offset}:${this.lines}`}`, model: this.model, usage, total };
  }

  /** A shell call (remembered) or the output of one (its outcome). */
  private command(p: { type?: string; name?: string; call_id?: string; output?: unknown }): AgentSignal | undefined {
    if (!p.call_id) return undefined;
    if ((p.type === 'function_call' && p.name && SHELL_TOOLS.has(p.name)) || p.type === 'local_shell_call') {
      this.shellCalls.add(p.call_id);
      return undefined;
    }
    if (p.type !== 'function_call_output' || !this.shellCalls.delete(p.call_id)) return undefined;
    const text = typeof p.output === 'string' ? p.output
      : Array.isArray(p.output) ? p.output.map((c: { text?: unknown }) => (typeof c?.text === 'string' ? c.text : '')).join('\n')
      : JSON.stringify(p.output ?? '');
    return refusedByHook(text) ? undefined : { kind: 'command', callId: p.call_id, ...commandOutcome(text) };
  }
}
