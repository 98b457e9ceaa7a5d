// Zod schemas of scripted runs (issue 28, docs/scripts.md): run_script's input, and the options a
// script may give agent() — Claude Code's Workflow options plus Overseer's. The script's options
// are checked with these before the call starts, so a bad option is the script's exception with
// the field and what to change, and nothing is spawned.
import { z } from 'zod';
import { SpawnInput } from './agents.js';

/** Claude Code's Workflow takes scripts up to 512 KiB; so do we. */
export const MAX_SCRIPT_CHARS = 512 * 1024;
/** A saved script's name: .overseer/scripts/<name>.js (run_script's name, workflow()'s first argument). */
export const SCRIPT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export const RunScriptInput = z.object({
  script: z.string().min(1, 'script is empty: pass the JavaScript source, or name a saved script with name').max(MAX_SCRIPT_CHARS, `script is longer than ${MAX_SCRIPT_CHARS} characters: move data into args`).optional()
    .describe('The script\'s JavaScript source (the Workflow API: agent, parallel, pipeline, phase, log, args, budget, workflow, approve). Give script or name.'),
  name: z.string().regex(SCRIPT_NAME, 'name is a saved script\'s file name without .js, e.g. "review-changes" (letters, digits, . _ -)').optional()
    .describe('Run the saved script .overseer/scripts/<name>.js instead of script. Give script or name.'),
  args: z.unknown().optional()
    .describe('Any JSON value, exposed to the script as the global args, verbatim (pass arrays and objects as JSON values, not as a JSON string).'),
  title: z.string().trim().min(1).max(200).optional()
    .describe('Name of the run in list_runs and status (default: meta.name, else the saved script\'s name, else "script").'),
  budget_usd: z.number().positive('budget_usd must be more than 0').max(10_000).optional()
    .describe('Most the whole run may spend, in US dollars; an agent() call that cannot be covered fails with budget_exceeded (default: no run budget; the house budget still holds).'),
  max_concurrent: z.number().int().min(1, 'max_concurrent must be at least 1').max(64, 'max_concurrent must be at most 64').optional()
    .describe('Most agents of this run at once (default 16; the hub\'s OVERSEER_MAX_AGENTS still caps the whole crew).'),
}).strict();
export type RunScriptInput = z.infer<typeof RunScriptInput>;

/** agent(prompt, opts): what a script may set. JSON Schema in `schema` makes the result an object. */
export const ScriptAgentOptions = SpawnInput.pick({
  provider: true, model: true, worktree: true, cwd: true, checks: true, timeout_s: true, max_turns: true, budget_usd: true, role: true, labels: true, host: true,
}).extend({
  label: z.string().min(1).max(200).optional().describe('Shown for this call in the run\'s progress (default: the first words of the prompt).'),
  phase: z.string().min(1).max(200).optional().describe('The progress group of this call (default: the last phase() before it).'),
  schema: z.record(z.string(), z.unknown()).optional().describe('A JSON Schema (an object): the agent must answer with a matching object, which agent() returns.'),
}).strict();
export type ScriptAgentOptions = z.infer<typeof ScriptAgentOptions>;

export const CancelRunInput = z.object({
  run_id: z.string().min(1, 'run_id is empty: pass an id returned by run_script, dispatch or list_runs').max(100)
    .describe('Id of the run to cancel (a script run or a dispatch run), or a unique prefix.'),
  reason: z.string().min(1).max(2000).optional().describe('Why, kept with the run (default: "cancelled by the lead").'),
  call: z.number().int().min(1, 'call is the seq of one call of a script run (get_run lists them), 1 or more').optional()
    .describe('Script runs only: cancel just this call (its seq in get_run\'s calls); its agent is cancelled and the script sees the call fail with code "cancelled", which it may catch. The run goes on.'),
}).strict();
export type CancelRunInput = z.infer<typeof CancelRunInput>;

export const PauseRunInput = z.object({
  run_id: z.string().min(1, 'run_id is empty: pass an id returned by run_script or list_runs').max(100)
    .describe('Id of the script run (or a unique prefix).'),
  paused: z.boolean().optional().describe('true (default): no new call of the run starts (running agents go on); false: calls start again.'),
}).strict();
export type PauseRunInput = z.infer<typeof PauseRunInput>;
