// Checks of the boundary around agents: can children run confined (bubblewrap), and is the
// hub's state outside every agent's work tree?
import { realpathSync } from 'node:fs';
import type { Config } from '../config.js';
import { projectRoot } from '../config.js';
import { probeBwrap } from '../confine/launcher.js';
import { which } from '../launch/which.js';
import type { Check, DoctorDeps } from './types.js';

export function checkConfinement(config: Config | undefined, deps: Pick<DoctorDeps, 'probeConfine' | 'which'>): Check {
  const name = 'confinement';
  const mode = config?.confine ?? 'auto';
  if (mode === 'off') {
    return { name, status: 'warn', detail: 'switched off (OVERSEER_CONFINE=off): a program an agent runs can read the lead token and write files other agents hold', fix: 'unset OVERSEER_CONFINE (or set it to auto)' };
  }
  const p = (deps.probeConfine ?? probeBwrap)();
  if (p.ok) {
    const detail = `agents run under bubblewrap (${p.bwrap}): the hub's state is hidden from them, the settings they run under are read-only`;
    if ((deps.which ?? which)('python3')) return { name, status: 'ok', detail: `${detail}, files other agents hold are read-only to them` };
    return { name, status: 'warn', detail: `${detail}; but python3 is not on PATH, so files other agents hold stay writable to programs the lock hook cannot read`, fix: 'install python3 (apt-get install python3)' };
  }
  return {
    name,
    status: mode === 'require' ? 'fail' : 'warn',
    detail: `agents cannot be confined: ${p.reason}${mode === 'require' ? ' (OVERSEER_CONFINE=require: spawn_agent refuses)' : '; they run held by the lock hook and permission rules alone'}`,
    fix: 'install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces; see docs/security.md',
  };
}

/** The state directory must not lie inside the project: agents work there. */
export function checkStatePlace(home: string, deps: Pick<DoctorDeps, 'cwd'>): Check {
  const name = 'state place';
  const root = projectRoot(deps.cwd);
  let real = home;
  try {
    real = realpathSync(home);
  } catch {
    // not created yet
  }
  if (real === root || real.startsWith(`${root}/`)) {
    return {
      name,
      status: 'warn',
      detail: `the hub's state (${home}) is inside the project, where agents work: only confinement keeps the lead token from them`,
      fix: 'unset OVERSEER_HOME (the state then lives under ~/.local/state/overseer) — a state left in .overseer/ by an older version moves there when the next hub starts',
    };
  }
  return { name, status: 'ok', detail: `${home}, outside the project` };
}
