// Desktop notifications: `notify-send` on Linux, `osascript` on macOS. The program is looked up
// on PATH once, when the notifier starts; without it the sink is off (and says so once).
import { which } from '../../../launch/which.js';
import { desktopText } from '../text.js';
import { runProgram } from './exec.js';
import type { Sink, SinkDeps } from './types.js';

const TIMEOUT_MS = 10_000;

/** AppleScript string literal: backslashes and quotes escaped, on one line. */
const appleString = (s: string): string => `"${s.replace(/\s+/g, ' ').replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The desktop sink, or why there can be none on this machine. */
export function desktopSink(name: string, deps: SinkDeps): Sink | { unavailable: string } {
  const program = deps.platform === 'darwin' ? 'osascript' : deps.platform === 'linux' ? 'notify-send' : undefined;
  if (!program) return { unavailable: `desktop notifications are not supported on ${deps.platform}` };
  const bin = which(program, deps.env.PATH ?? '');
  if (!bin) return { unavailable: `${program} is not on PATH${program === 'notify-send' ? ' (Debian/Ubuntu: apt-get install libnotify-bin)' : ''}` };
  return {
    name, type: 'desktop',
    send(p) {
      const { title, body } = desktopText(p);
      const args = program === 'osascript'
        ? ['-e', `display notification ${appleString(body)} with title ${appleString(title)}`]
        // `--`: a body that starts with "-" (a result's "- fixed …") is text, not an option.
        : ['--app-name=Overseer', ...(p.event === 'needs_input' || p.event === 'failed' ? ['--urgency=critical'] : []), '--', title, body];
      return runProgram(bin, args, { env: deps.env, cwd: deps.cwd, timeoutMs: TIMEOUT_MS });
    },
  };
}
