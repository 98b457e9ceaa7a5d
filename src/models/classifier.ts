// The classifier behind `model: "auto"`: one `claude -p` call with no tools on a small model,
// asked for `{tier: small|medium|large, reason}` through --json-schema (Claude Code offers the
// schema as a `StructuredOutput` tool and reports its input as `structured_output` in the JSON
// result; see src/kb/triageAgent.ts). --max-turns 2 leaves room for Claude's one nudge after a
// text-only answer. Never throws: every failure (no binary, timeout, an error result, output
// that is missing or not a tier) comes back as `ok: false` with why, and what the run cost.
import { loadExeca } from '../lazy.js';
import { oneShotUsage } from '../money/oneShot.js';
import type { RunUsage } from '../money/usageStore.js';
import { TIERS, type Tier } from './tiers.js';

export const CLASSIFIER_SCHEMA = {
  type: 'object',
  properties: {
    tier: { type: 'string', enum: [...TIERS] },
    reason: { type: 'string' },
  },
  required: ['tier', 'reason'],
  additionalProperties: false,
} as const;

/** Characters of the task the classifier reads (the start says what the work is). */
export const CLASSIFIER_TASK_CHARS = 8000;

export type ClassifierAnswer = { ok: true; tier: Tier; reason: string } | { ok: false; why: string };

const isTier = (v: unknown): v is Tier => typeof v === 'string' && (TIERS as readonly string[]).includes(v);
const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function asAnswer(v: unknown, where: string): ClassifierAnswer {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { ok: false, why: `${where} is not an object` };
  const o = v as Record<string, unknown>;
  if (!isTier(o.tier)) return { ok: false, why: `${where} has no valid tier (tier ${JSON.stringify(o.tier ?? null)}; expected small, medium or large)` };
  const reason = typeof o.reason === 'string' ? o.reason.trim() : '';
  return { ok: true, tier: o.tier, reason: clip(reason || '(no reason given)', 500) };
}

/** The classifier's answer in claude's `--output-format json` result: `structured_output`, else JSON inside `result`. */
export function parseClassifierOutput(stdout: string): ClassifierAnswer {
  const text = stdout.trim();
  if (!text) return { ok: false, why: 'the classifier printed no result' };
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { ok: false, why: `the classifier's output is not JSON: ${JSON.stringify(clip(text, 120))}` };
  }
  if (!j || typeof j !== 'object' || Array.isArray(j)) return { ok: false, why: 'the classifier\'s output is not a JSON object' };
  if (j.is_error === true) {
    const what = typeof j.result === 'string' && j.result ? j.result : typeof j.subtype === 'string' ? j.subtype : 'error';
    return { ok: false, why: `the classifier run ended in an error: ${clip(String(what), 300)}` };
  }
  if (j.structured_output !== undefined && j.structured_output !== null) return asAnswer(j.structured_output, 'its structured output');
  if (typeof j.result !== 'string') return { ok: false, why: 'the classifier gave no structured output' };
  const body = j.result.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  const start = body.indexOf('{');
  const end = body.lastIndexOf('}');
  if (start < 0 || end <= start) return { ok: false, why: `the classifier gave no structured output (it answered ${JSON.stringify(clip(body, 120))})` };
  try {
    return asAnswer(JSON.parse(body.slice(start, end + 1)), 'the JSON in its answer');
  } catch {
    return { ok: false, why: `the classifier gave no structured output (it answered ${JSON.stringify(clip(body, 120))})` };
  }
}

/** The claude arguments of one classification. */
export function classifierArgs(model: string, maxTurns = 2): string[] {
  return [
    '-p', '--output-format', 'json', '--max-turns', String(maxTurns), '--tools', '', '--no-session-persistence',
    '--model', model, '--json-schema', JSON.stringify(CLASSIFIER_SCHEMA),
  ];
}

export interface ClassifyRun {
  answer: ClassifierAnswer;
  /** What the run cost; undefined when no run happened (no binary). */
  usage?: RunUsage;
}

/** Run the classifier (the prompt on stdin). Never throws. */
export async function runClassifier(o: {
  bin: string | undefined;
  prompt: string;
  model: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Aborted when the job is cancelled while it is classified: the run is stopped at once. */
  signal?: AbortSignal;
}): Promise<ClassifyRun> {
  if (!o.bin) return { answer: { ok: false, why: 'no claude binary to classify with (CLAUDE_BIN, or claude on PATH)' } };
  const { execa } = await loadExeca();
  let r: { stdout: string; stderr: string; exitCode?: number; timedOut: boolean; isCanceled: boolean };
  try {
    r = await execa(o.bin, classifierArgs(o.model), {
      input: o.prompt, cwd: o.cwd, env: o.env, extendEnv: o.env === undefined, reject: false, timeout: o.timeoutMs,
      ...(o.signal ? { cancelSignal: o.signal } : {}),
    });
  } catch (err) {
    return { answer: { ok: false, why: `the classifier could not run: ${(err as Error).message}` } };
  }
  const usage = oneShotUsage(r.stdout, o.model);
  if (r.isCanceled) return { answer: { ok: false, why: 'the classification was stopped: the job was cancelled' }, usage };
  if (r.timedOut) return { answer: { ok: false, why: `the classifier timed out after ${Math.round(o.timeoutMs / 1000)} s (classifierTimeoutS)` }, usage };
  const answer = parseClassifierOutput(r.stdout);
  if (!answer.ok && !r.stdout.trim()) {
    const err = r.stderr.trim().split('\n').at(-1) ?? '';
    return { answer: { ok: false, why: `the classifier exited with code ${r.exitCode ?? '?'} and no result${err ? `: ${clip(err, 200)}` : ''}` }, usage };
  }
  return { answer, usage };
}
