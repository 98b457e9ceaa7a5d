// Pieces both agent launchers (claude, codex) share: where their binary is found and the
// Overseer variables every child carries.
import { join } from 'node:path';
import type { LaunchSpec } from './types.js';
import { firstExisting, which } from './which.js';

/** The copy of an agent CLI installed with overseer-mcp (<packageRoot>/node_modules/.bin/<name>). */
export const bundledAgentBin = (name: string, packageRoot: string): string => join(packageRoot, 'node_modules', '.bin', name);

/** The binary a launcher runs: the explicit one (*_BIN / config), else `name` on PATH, else the bundled one if it exists. */
export function resolveAgentBin(name: string, explicit: string | undefined, packageRoot: string | undefined, pathEnv: string | undefined): string | undefined {
  if (explicit) return explicit;
  return which(name, pathEnv) ?? (packageRoot ? firstExisting([bundledAgentBin(name, packageRoot)]) : undefined);
}

/** A child's environment: the job's, then who the agent is and how it reaches the hub, then the launcher's own `extra`. */
export function agentEnv(spec: LaunchSpec, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...spec.env,
    OVERSEER_AGENT_ID: spec.jobId,
    OVERSEER_URL: spec.mcpUrl,
    OVERSEER_TOKEN: spec.token,
    ...extra,
  };
}
