// The cheap triage agent: one `claude -p` call with no tools on a small model, asked for a
// structured verdict {scope: project|global|discard, reason} through --json-schema. Claude
// Code offers the schema to the model as a `StructuredOutput` tool and reports the tool's
// input as `structured_output` in the JSON result (checked with claude 2.1.330 against the
// fake API). A plain-text answer makes Claude nudge the model once ("[structured-output-
// enforce]"), which takes a second turn, hence --max-turns 2 by default. Every failure —
// no binary, timeout, error result, unparseable output — yields undefined, and the knowledge
// base then stores the learning in the project scope.
import { loadExeca } from '../lazy.js';
import type { PromptLibrary } from '../prompts/load.js';
import type { Logger } from '../log.js';
import type { CleanLearning, TriageAgent, TriageVerdict } from './service.js';
import { oneShotUsage } from '../money/oneShot.js';
import type { RunUsage } from '../money/usageStore.js';

export const TRIAGE_MODEL = 'claude-haiku-4-5';

export const TRIAGE_SCHEMA = {
  type: 'object',
  properties: {
    scope: { type: 'string', enum: ['project', 'global', 'discard'] },
    reason: { type: 'string' },
  },
  required: ['scope', 'reason'],
  additionalProperties: false,
} as const;

export interface TriageAgentOptions {
  /** The claude binary (or a resolver, e.g. `() => launcher.resolveBin()`); none → every call yields undefined. */
  bin: string | undefined | (() => string | undefined);
  prompts: PromptLibrary;
  /** Environment of the claude process (the hub's child environment). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  model?: string;
  /** Default 2: room for Claude's one structured-output nudge after a text-only answer. */
  maxTurns?: number;
  timeoutMs?: number;
  log?: Logger;
  /** What each run cost, for the job whose learning it triaged (null: the lead's). */
  onUsage?: (usage: RunUsage, jobId: string | null) => void;
}

export interface TriageAnswer {
  scope: TriageVerdict;
  reason: string;
}

function asAnswer(v: unknown): TriageAnswer | undefined {
  if (!v || typeof v !== 'object') return undefined;
  const o = v as Record<string, unknown>;
  if (o.scope !== 'project' && o.scope !== 'global' && o.scope !== 'discard') return undefined;
  return { scope: o.scope, reason: typeof o.reason === 'string' ? o.reason : '' };
}

/** The verdict in claude's `--output-format json` result: `structured_output`, else JSON inside `result`. */
export function parseTriageOutput(stdout: string): TriageAnswer | undefined {
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(stdout.trim()) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!j || typeof j !== 'object' || j.is_error === true) return undefined;
  const structured = asAnswer(j.structured_output);
  if (structured) return structured;
  if (typeof j.result !== 'string') return undefined;
  const text = j.result.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return undefined;
  try {
    return asAnswer(JSON.parse(text.slice(start, end + 1)));
  } catch {
    return undefined;
  }
}

/** The claude arguments of one triage call. */
export function triageArgs(model: string, maxTurns: number): string[] {
  return [
    '-p', '--output-format', 'json', '--max-turns', String(maxTurns), '--tools', '', '--no-session-persistence',
    '--model', model, '--json-schema', JSON.stringify(TRIAGE_SCHEMA),
  ];
}

/** A TriageAgent running the real claude CLI (prompt on stdin). */
export function createTriageAgent(o: TriageAgentOptions): TriageAgent {
  return async (l: CleanLearning, jobId?: string | null) => {
    const bin = typeof o.bin === 'function' ? o.bin() : o.bin;
    if (!bin) return undefined;
    let prompt: string;
    try {
      prompt = o.prompts.render('triage', { title: l.title, content: l.content, tags: l.tags.join(', ') || '(none)' });
    } catch (err) {
      o.log?.warn({ err }, 'kb triage: cannot render prompts/triage.md');
      return undefined;
    }
    const { execa } = await loadExeca();
    let r: { stdout: string; stderr: string; exitCode?: number; timedOut: boolean };
    const model = o.model ?? TRIAGE_MODEL;
    try {
      r = await execa(bin, triageArgs(model, o.maxTurns ?? 2), {
        input: prompt, cwd: o.cwd, env: o.env, extendEnv: o.env === undefined, reject: false, timeout: o.timeoutMs ?? 60_000,
      });
    } catch (err) {
      o.log?.warn({ err }, 'kb triage agent could not run');
      return undefined;
    }
    try {
      o.onUsage?.(oneShotUsage(r.stdout, model), jobId ?? null);
    } catch (err) {
      o.log?.warn({ err }, 'kb triage usage not recorded');
    }
    const answer = parseTriageOutput(r.stdout);
    if (!answer) {
      o.log?.warn({ exitCode: r.exitCode, timedOut: r.timedOut, stderr: r.stderr.slice(-500) }, 'kb triage agent gave no verdict');
      return undefined;
    }
    o.log?.debug({ title: l.title, ...answer }, 'kb triage verdict');
    return answer.scope;
  };
}
