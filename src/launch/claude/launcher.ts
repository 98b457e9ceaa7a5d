// The Claude Code launcher: the invocation of docs/cli-facts.md C1 in stream-json
// input mode (stdin stays open so message_agent can reach a running child), and the mapping
// of its event stream onto the supervisor's AgentSignals.
import { existsSync } from 'node:fs';
import type { AgentLauncher, AgentSignal, LaunchSpec, SpawnCmd, StreamParser, TokenUsage } from '../types.js';
import { parseClaudeLine } from './events.js';
import { agentEnv, resolveAgentBin } from '../common.js';
import { claudeCostOf } from './prices.js';
import { CallUsage, callUsage, usageOf } from './usage.js';

/** Tools a child may use without asking: Overseer's own. Everything else that needs
 * permission goes to mcp__overseer__check_permission, i.e. the hub's policy. */
export const CHILD_ALLOWED_TOOLS = ['mcp__overseer__*'];
export const PERMISSION_PROMPT_TOOL = 'mcp__overseer__check_permission';
/** Claude Code tools a child may not have:
 * - ListAgents and SendMessage reach every other Claude session on the machine under the same
 *   HOME — the lead's own session among them: a child's SendMessage landed in the lead's
 *   conversation (verified with 2.1.330, docs/security.md "Other Claude sessions"). Children
 *   message through Overseer (send_message, message_agent), which the hub governs.
 * - and what a child cannot use, whose definitions every request would carry: AskUserQuestion
 *   (4.6 KB, offered because of --permission-prompt-tool) has nobody to answer it (children ask
 *   with ask_lead); ScheduleWakeup (4.9 KB) paces a person's `/loop`, which a child has not;
 *   ReportFindings (2.4 KB) renders review findings in a host UI a child has not (its results go
 *   to `finish`). docs/cli-facts.md C5; docs/performance.md. */
export const CHILD_DISALLOWED_TOOLS = ['ListAgents', 'SendMessage', 'AskUserQuestion', 'ScheduleWakeup', 'ReportFindings'];

/** A POSIX shell word for `s` (single-quoted, inner quotes escaped). */
export const shellWord = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The command that runs the lock hook as a command hook (the lead's, from overseer init; Codex
 * children's): `<shell> <hooks>/overseer-hook.sh <node>`. Under bash the hook posts over bash's
 * own /dev/tcp (no process start besides the shell: docs/performance-hooks.md), under another
 * POSIX sh with curl; either falls back to `<node> <hooks>/overseer-hook.mjs` (same directory)
 * when it must, so `nodeBin` is only started then. `shell`: bash where there is one.
 */
export const hookCommandLine = (nodeBin: string, shHook: string, shell = hookShell()): string => `${shell} ${shellWord(shHook)} ${shellWord(nodeBin)}`;

/** The shell the command hook runs under: /bin/bash when the machine has it, else /bin/sh. */
export const hookShell = (): string => (existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh');

/** Is `command` Overseer's lock hook (the sh hook, or the Node hook older versions installed)? */
export const isOverseerHookCommand = (command: string): boolean => /overseer-hook\.(mjs|sh)\b/.test(command);

/** The tools whose calls the lock hook checks (the lead's hook, from overseer init). */
export const HOOK_MATCHER = 'Edit|Write|MultiEdit|NotebookEdit|Bash';
/** A child's hook also sees its reads: the hub refuses reads of its own state. */
export const CHILD_HOOK_MATCHER = `${HOOK_MATCHER}|Read|Grep|Glob|LS`;

/** Claude Code's permission-rule spelling of an absolute path (`//` + the path from the root). */
const rulePath = (abs: string): string => `//${abs.replace(/^\/+/, '')}`;

/**
 * `--settings` JSON of a Claude child (read once; the child cannot change it):
 * - the lock check on every edit and read, as Claude Code's HTTP hook straight to the hub's
 *   /hook (the agent's bearer token expanded from its environment): the same check as
 *   hooks/overseer-hook.mjs without a Node process per call (~60 ms). It fails closed:
 *   `onFailure: block` denies when the hub cannot be reached, and the model sees the reason
 *   (verified: "PreToolUse:Write hook error: <reason>");
 * - `permissions.deny` rules for what no child may read (`readDenied`: the hub's state, with the
 *   lead token) or write (`writeDenied`), which Claude Code enforces itself, under any mode.
 */
export function hookSettings(mcpUrl: string, protect: { readDenied?: readonly string[]; writeDenied?: readonly string[] } = {}): string {
  const url = new URL('/hook?format=claude', mcpUrl).toString();
  const deny = [
    ...(protect.readDenied ?? []).flatMap((d) => [`Read(${rulePath(d)}/**)`, `Edit(${rulePath(d)}/**)`]),
    ...(protect.writeDenied ?? []).map((d) => `Edit(${rulePath(d)}/**)`),
  ];
  return JSON.stringify({
    hooks: {
      PreToolUse: [{
        matcher: CHILD_HOOK_MATCHER,
        hooks: [{ type: 'http', url, headers: { Authorization: 'Bearer ${OVERSEER_TOKEN}' }, allowedEnvVars: ['OVERSEER_TOKEN'], timeout: 15, onFailure: 'block' }],
      }],
    },
    ...(deny.length ? { permissions: { deny } } : {}),
  });
}

export class ClaudeLauncher implements AgentLauncher {
  readonly provider = 'claude' as const;
  readonly streamsInput = true;
  readonly stopSignal = 'SIGTERM' as const;
  readonly sweepsDescendants = false;
  readonly enforcesMaxTurns = true;
  readonly binHint = 'Install Claude Code (npm i -g @anthropic-ai/claude-code) or set CLAUDE_BIN to the path of the claude binary.';

  constructor(private readonly opts: { bin?: string; packageRoot?: string; pathEnv?: string }) {}

  resolveBin(): string | undefined {
    return resolveAgentBin('claude', this.opts.bin, this.opts.packageRoot, this.opts.pathEnv);
  }

  build(spec: LaunchSpec, bin: string): SpawnCmd {
    const mcpConfig = {
      mcpServers: {
        overseer: {
          type: 'http',
          url: spec.mcpUrl,
          // Expanded by Claude Code from the child's environment, so the token is not in argv.
          headers: { Authorization: 'Bearer ${OVERSEER_TOKEN}' },
          timeout: spec.mcpTimeoutMs,
        },
      },
    };
    const args = [
      '-p',
      '--input-format', 'stream-json',
      '--output-format', 'stream-json',
      '--verbose',
      // Replays each stdin message when Claude takes it (mid-turn or as a new turn), which is
      // how the supervisor knows every message was handled before closing stdin.
      '--replay-user-messages',
      // Each model call's final usage (message_delta) only comes as a partial-message event: it is
      // what a child cancelled mid-run keeps. These events are not written to the transcript.
      '--include-partial-messages',
      ...(spec.resume ? ['--resume', spec.sessionId] : ['--session-id', spec.sessionId]),
      '--mcp-config', JSON.stringify(mcpConfig),
      '--strict-mcp-config',
      // A planner (src/roles) runs in Claude Code's plan mode: no tool that changes anything.
      '--permission-mode', spec.role?.plan ? 'plan' : 'default',
      '--permission-prompt-tool', PERMISSION_PROMPT_TOOL,
      '--allowedTools', ...CHILD_ALLOWED_TOOLS,
      '--disallowedTools', ...CHILD_DISALLOWED_TOOLS, ...(spec.role?.disallowedTools ?? []),
      '--append-system-prompt', spec.appendSystemPrompt,
    ];
    if (spec.role?.tools) args.push('--tools', spec.role.tools.join(','));
    if (spec.settings) args.push('--settings', spec.settings);
    if (spec.model) args.push('--model', spec.model);
    if (spec.maxTurns !== undefined) args.push('--max-turns', String(spec.maxTurns));
    if (spec.budgetUsd !== undefined) args.push('--max-budget-usd', String(spec.budgetUsd));
    if (spec.jsonSchema) args.push('--json-schema', spec.jsonSchema);
    return {
      bin,
      args,
      cwd: spec.cwd,
      ...(spec.role?.readOnly ? { readOnlyTree: true } : {}),
      stdin: 'pipe',
      // MCP tools of the hub can block for a long time (waits, locks): progress keeps the
      // idle timer alive, the per-server timeout above covers the hard one.
      env: agentEnv(spec, { MCP_TOOL_TIMEOUT: String(spec.mcpTimeoutMs) }),
    };
  }

  priceCall(model: string | undefined, tokens: TokenUsage): number | null {
    return claudeCostOf(model, tokens);
  }

  userMessageLine(text: string): string {
    return `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`;
  }

  newParser(): StreamParser {
    let sawInit = false;
    const calls = new CallUsage();
    return {
      line(line: string) {
        const p = parseClaudeLine(line);
        if (!p.ok) return { kind: 'unparsed', reason: p.reason };
        const e = p.event;
        switch (e.kind) {
          case 'init': {
            if (sawInit) return { kind: 'noise' };
            sawInit = true;
            const ov = e.mcpServers.find((s) => s.name === 'overseer');
            return { kind: 'init', sessionId: e.sessionId, mcpConnected: ov?.status === 'connected', mcpStatus: ov?.status ?? 'absent' } satisfies AgentSignal;
          }
          case 'assistant': {
            const model = (e.raw as { message?: { model?: string } }).message?.model;
            return {
              kind: 'turn', messageId: e.messageId, text: e.text.join('\n') || undefined, model, usage: e.messageId ? calls.merge(e.messageId, model, callUsage(e.usage)) : undefined,
              ...(e.toolUses.length ? { toolUses: e.toolUses.map((t) => ({ id: t.id, name: t.name, detail: toolDetail(t.input) })) } : {}),
            };
          }
          case 'tool_result':
            return { kind: 'tool_results', results: e.results };
          case 'other':
            return e.type === 'stream_event' ? calls.fromStreamEvent(e.raw) : { kind: 'noise' };
          case 'user_text':
            return (e.raw as { isReplay?: boolean }).isReplay ? { kind: 'consumed', text: e.text } : { kind: 'noise' };
          case 'result':
            return {
              kind: 'result', isError: e.isError, costUsd: e.costReported ? e.costUsd : undefined, numTurns: e.numTurns, sessionId: e.sessionId, text: e.result, raw: e.raw,
              structured: (e.raw as { structured_output?: unknown }).structured_output,
              tokens: usageOf(e.raw),
            };
          default:
            return { kind: 'noise' };
        }
      },
    };
  }
}

/** A tool call's input in a few words for the floor's "last activity" (a command, a path, a pattern). */
function toolDetail(input: unknown): string | undefined {
  if (!input || typeof input !== 'object') return undefined;
  const o = input as Record<string, unknown>;
  const v = o.command ?? o.file_path ?? o.path ?? o.pattern ?? o.url ?? o.message ?? o.description;
  if (typeof v !== 'string' || !v.trim()) return undefined;
  const one = v.replace(/\s+/g, ' ').trim();
  return one.length > 80 ? `${one.slice(0, 79)}…` : one;
}
