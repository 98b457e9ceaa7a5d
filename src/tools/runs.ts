// Run tools (docs/dispatch.md): batch dispatch from a file, lead only.
import type { RunService } from '../runs/runService.js';
import type { ScriptRuns } from '../scripts/runs.js';
import { CancelRunInput, PauseRunInput, RunScriptInput } from '../contract/scripts.js';
import { InvalidInputError } from '../errors.js';
import type { Bus } from '../services/bus.js';
import { waitUntil } from '../services/wait.js';
import { defineTool, type ToolDef } from './registry.js';
import { DispatchInput, GetRunInput, ListRunsInput, ResumeRunInput } from '../contract/runs.js';

export function runTools(r: RunService, scripts: ScriptRuns, bus: Bus, progressEveryMs: number): ToolDef[] {
  return [
    defineTool({
      name: 'run_script', roles: ['lead'], title: 'Run a script',
      description: 'Run an orchestration script in the hub (docs/scripts.md): plain JavaScript with Claude Code\'s Workflow API — await agent(prompt, opts) returns the agent\'s final text (with opts.schema, a JSON Schema, a validated object), parallel(thunks) runs them at once (a failed one gives null), pipeline(items, ...stages) runs each item through the stages, phase(title), log(msg), args, budget; opts also take provider ("claude"|"codex"), model (or "auto"), worktree, cwd, checks, timeout_s, max_turns, budget_usd, label; approve(summary, plan) asks the person and returns true or false; workflow(name, args) runs a saved script nested in the run. Every agent is a full Overseer job (locks, confinement, policy, budgets); with budget_usd a call the run cannot cover throws code budget_exceeded. The script is checked first: a syntax error, a function the sandbox lacks (no fetch, require, timers, console) or a bad agent() option is refused with its line and nothing starts. The run is journaled: it outlives this session and a hub restart, and no finished call runs twice. Returns run_id at once; follow with get_run (wait_s waits).',
      input: RunScriptInput, annotations: { openWorldHint: true },
      handler: (i) => scripts.start(i),
    }),
    defineTool({
      name: 'cancel_run', roles: ['lead'], title: 'Cancel a run',
      description: 'Cancel a run (a script run or a dispatch run): nothing new starts and its running agents are cancelled; what finished is kept. With call (script runs): cancel only that call\'s agent (its seq in get_run\'s calls); the script sees the call throw AgentCancelled with code "cancelled", which it may catch, and the run goes on.',
      input: CancelRunInput, annotations: { destructiveHint: true },
      handler: async (i) => {
        const reason = i.reason ?? 'cancelled by the lead';
        const script = await scripts.view(i.run_id);
        if (i.call !== undefined) {
          if (!script) throw new InvalidInputError(`call is for script runs only, and ${JSON.stringify(i.run_id)} is not one: leave call out to cancel a dispatch run.`);
          return scripts.cancelCall(script.run_id as string, i.call, reason);
        }
        if (script) {
          await scripts.cancel(script.run_id as string, reason);
          return (await scripts.view(script.run_id as string))!;
        }
        return r.cancel(i.run_id, reason);
      },
    }),
    defineTool({
      name: 'pause_run', roles: ['lead'], title: 'Pause a script run',
      description: 'Pause a script run (paused: true, the default): no new agent(), approve() or workflow() call of it starts — they wait — while its running agents go on; paused: false lets them start again. The pause holds across hub restarts. Returns the run as get_run shows it, with paused.',
      input: PauseRunInput,
      handler: (i) => scripts.pause(i.run_id, i.paused ?? true),
    }),
    defineTool({
      name: 'dispatch', roles: ['lead'], title: 'Dispatch a file of tasks',
      description: 'Start a run of a dispatch file (TOML [[task]] entries or a YAML tasks: list, docs/dispatch.md): every problem of the file is reported with its line before anything starts; then each task gets a job once its depends_on tasks succeeded, within the run\'s concurrency, budget_usd and timeout_s. Returns run_id and the tasks with their job ids; follow with get_run or wait_for_agents.',
      input: DispatchInput, annotations: { openWorldHint: true },
      handler: (i) => r.dispatch(i),
    }),
    defineTool({
      name: 'get_run', roles: ['lead'], title: 'Get a run',
      description: 'A run. A script run (run_script): status (running, succeeded, failed, cancelled), paused, result or error with the script\'s line, cost, every call with its job and status, and the log. A dispatch run: status (running, succeeded, failed, stopped, timed_out, cancelled), note (why it stopped), counts, cost and every task with its status and job id. With wait_s, waits until the run ends or the time passes.',
      input: GetRunInput, annotations: { readOnlyHint: true },
      // Only a call with wait_s waits (and is answered as a stream over HTTP).
      blocks: (a) => typeof a.wait_s === 'number' && a.wait_s > 0,
      handler: async (i, _c, x) => {
        const view = async (): Promise<Record<string, unknown>> => (await scripts.view(i.run_id)) ?? await r.view(i.run_id);
        const first = await view();
        if (!i.wait_s || first.status !== 'running') return first;
        await waitUntil({
          bus, events: ['run'], check: async () => ((await view()).status !== 'running' ? true : undefined), timeoutMs: i.wait_s * 1000, signal: x.signal,
          onProgress: (ms) => x.progress(ms / 1000, i.wait_s, `run ${String(first.run_id)} still running after ${Math.round(ms / 1000)}s`), progressEveryMs,
        });
        return view();
      },
    }),
    defineTool({
      name: 'list_runs', roles: ['lead'], title: 'List runs',
      description: 'Runs (script runs and dispatch runs), newest first, with status and counts per task status.',
      input: ListRunsInput, annotations: { readOnlyHint: true },
      handler: (i) => r.list(i.limit),
    }),
    defineTool({
      name: 'resume_run', roles: ['lead'], title: 'Resume a run',
      description: 'Re-run what did not succeed in an ended run. A script run (failed or cancelled) runs its script again from the top — a saved script re-read from .overseer/scripts/<name>.js as it is now, so an edit after a failure counts — and the journal answers the longest unchanged prefix of its calls; the first call that is new, edited or failed last time, and every call after it, run live; the log\'s replay line says where it diverged. A dispatch run: a failed job continues its session with a message saying why it failed; tasks that never started get new jobs; succeeded tasks are kept.',
      input: ResumeRunInput,
      handler: async (i) => ((await scripts.view(i.run_id)) ? scripts.resume(i.run_id) : r.resume(i.run_id)),
    }),
  ];
}
