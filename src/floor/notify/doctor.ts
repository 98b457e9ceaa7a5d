// `overseer doctor`'s line about notifications: which sinks are configured, where each goes (a
// URL's origin only: its path is the secret), and whether the programs they need are there.
import { accessSync, constants } from 'node:fs';
import type { Config } from '../../config.js';
import { which as whichOnPath } from '../../launch/which.js';
import type { Check } from '../../doctor/types.js';
import { eventsOf, sinkName } from './filter.js';

export interface NotifyCheckDeps {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  which?: (name: string) => string | undefined;
}

const executable = (p: string): boolean => {
  try {
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The notifications check: ok when every configured sink can work here, warn when one cannot. */
export function checkNotify(config: Config | undefined, deps: NotifyCheckDeps): Check {
  const name = 'notifications';
  if (!config) return { name, status: 'warn', detail: 'not checked: the configuration is invalid (see config)' };
  const { sinks, rate } = config.notify;
  if (!sinks.length) return { name, status: 'ok', detail: 'off: no sinks configured (config key notify, docs/notifications.md)' };
  const find = deps.which ?? ((n: string) => whichOnPath(n, deps.env.PATH ?? ''));
  const parts: string[] = [];
  const problems: string[] = [];
  sinks.forEach((s, i) => {
    const label = sinkName(s, i);
    const events = `(${eventsOf(s).join(', ')})`;
    switch (s.type) {
      case 'webhook':
      case 'slack':
        parts.push(`${label}: ${s.type} to ${new URL(s.url).origin} ${events}`);
        break;
      case 'command': {
        const bin = s.argv[0]!;
        const found = bin.includes('/') ? (executable(bin) ? bin : undefined) : find(bin);
        parts.push(`${label}: command ${found ?? bin} ${events}`);
        if (!found) problems.push(`${label}: ${bin} ${bin.includes('/') ? 'is not an executable file' : 'is not on PATH'}`);
        break;
      }
      case 'desktop': {
        const program = deps.platform === 'darwin' ? 'osascript' : deps.platform === 'linux' ? 'notify-send' : undefined;
        const found = program ? find(program) : undefined;
        parts.push(`${label}: desktop${found ? ` via ${found}` : ''} ${events}`);
        if (!program) problems.push(`${label}: desktop notifications are not supported on ${deps.platform}`);
        else if (!found) problems.push(`${label}: ${program} is not on PATH, so this sink is off`);
      }
    }
  });
  const detail = `${sinks.length} sink${sinks.length === 1 ? '' : 's'}, at most ${rate.perMinute} a minute each: ${parts.join('; ')}`;
  if (!problems.length) return { name, status: 'ok', detail };
  return {
    name, status: 'warn', detail: `${detail}; but ${problems.join('; ')}`,
    fix: problems.some((p) => p.includes('notify-send')) ? 'install notify-send (apt-get install libnotify-bin), or remove the desktop sink' : 'correct the sink in the notify configuration, or remove it',
  };
}
