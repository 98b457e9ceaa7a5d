// The command sink: a program of the person's (argv, no shell) gets the payload as JSON on stdin
// and its main fields as OVERSEER_* environment variables; 10 s, then it is killed. It runs in the
// project's directory with the hub's environment, like a git hook: only the person's own
// configuration (config.json, OVERSEER_NOTIFY; agents cannot change either) can name it.
import type { NotifyPayload } from '../payload.js';
import { runProgram } from './exec.js';
import type { Sink, SinkDeps } from './types.js';

const TIMEOUT_MS = 10_000;

/** The payload's fields as environment variables (absent fields are unset, not inherited). */
export function payloadEnv(p: NotifyPayload): Record<string, string | undefined> {
  return {
    OVERSEER_EVENT: p.event,
    OVERSEER_JOB_ID: p.job_id ?? undefined,
    OVERSEER_TITLE: p.title,
    OVERSEER_REASON: p.reason,
    OVERSEER_COMMAND: p.command,
    OVERSEER_AT: p.at,
    OVERSEER_PROJECT: p.project,
    OVERSEER_PROJECT_DIR: p.project_dir,
    OVERSEER_HUB_URL: p.hub_url,
    OVERSEER_WORKFLOW_ID: p.workflow_id,
    OVERSEER_REQUEST_ID: p.request_id,
    OVERSEER_WARNING: p.warning,
    OVERSEER_SUPPRESSED: p.suppressed === undefined ? undefined : String(p.suppressed),
  };
}

export function commandSink(name: string, argv: readonly string[], deps: SinkDeps): Sink {
  const [bin, ...args] = argv as [string, ...string[]];
  return {
    name, type: 'command',
    send(p) {
      const env: NodeJS.ProcessEnv = { ...deps.env };
      for (const [k, v] of Object.entries(payloadEnv(p))) {
        if (v === undefined) delete env[k];
        else env[k] = v;
      }
      return runProgram(bin, args, { env, cwd: deps.cwd, timeoutMs: TIMEOUT_MS, input: `${JSON.stringify(p)}\n` });
    },
  };
}
