// The `codex shell` check's verdict: what one shell command of a Codex child, started the way
// the hub starts one (its sandbox, the jail, its CODEX_HOME beside the hub's), came to, in plain
// words with the fix. Pure: codexShellRun.ts gathers the facts.
import type { Check, CodexSandbox, CodexShellFacts } from './types.js';

export type { CodexSandbox, CodexShellFacts };

/** The one command the probe runs (its file, then its text). */
export const PROBE_FILE = 'doctor-probe.txt';
export const PROBE_TEXT = 'overseer-doctor';
export const PROBE_COMMAND = `echo ${PROBE_TEXT} > ${PROBE_FILE} && cat ${PROBE_FILE}`;

const NAME = 'codex shell';
const SANDBOX_OFF = 'OVERSEER_CODEX_SANDBOX=danger-full-access runs commands without it (docs/security.md, "Codex\'s own sandbox inside the jail", says what that gives up)';
const oneLine = (s: string | undefined): string => (s ?? '').split('\n').map((l) => l.trim()).find((l) => l)?.slice(0, 240) ?? '';
/** What the command itself printed, without Codex's header (chunk id, wall time, exit code). */
const body = (s: string | undefined): string | undefined => {
  const at = s?.indexOf('Output:\n') ?? -1;
  return at >= 0 ? s!.slice(at + 'Output:\n'.length) : s;
};

function where(f: CodexShellFacts): string {
  const box = f.sandbox === 'danger-full-access' ? "Codex's sandbox off (codexSandbox danger-full-access)" : `Codex's sandbox ${f.sandbox}`;
  return `${box}, ${f.confined ? "inside Overseer's bubblewrap jail" : "not inside Overseer's jail"}`;
}

/** A command the sandbox could not start: which part failed, and what to do. */
function notStarted(f: CodexShellFacts): Check {
  const reason = f.command?.reason ?? oneLine(body(f.output));
  const head = `a codex child's shell command did not start (${where(f)}): "${reason}"`;
  if (/codex-linux-sandbox/.test(reason)) {
    const why = f.codexHomeInTemp
      ? `Codex runs its sandbox helper by the name codex-linux-sandbox and refuses to make that name when CODEX_HOME (${f.codexHome}) is under the temporary directory`
      : 'Codex runs its sandbox helper by the name codex-linux-sandbox, and it was not on PATH';
    const ours = f.helperLinks
      ? `; overseer's own links in ${f.codexHome}/bin did not help`
      : f.native
        ? `; overseer could not write its own links to ${f.native} in ${f.codexHome}/bin`
        : `; overseer makes those links itself only for the codex binary or @openai/codex's bin/codex.js, and ${f.bin} is neither`;
    const fix = f.helperLinks
      ? `report this as an overseer bug with this line; meanwhile keep the state out of the temporary directory (unset OVERSEER_HOME) or ${SANDBOX_OFF}`
      : f.native
        ? `make ${f.codexHome} writable for this user, or keep the state out of the temporary directory (unset OVERSEER_HOME)`
        : 'point CODEX_BIN at the codex binary itself (or at @openai/codex/bin/codex.js), or keep the state out of the temporary directory (unset OVERSEER_HOME: ~/.local/state/overseer)';
    return { name: NAME, status: 'warn', detail: `${head}: ${why}${ours}`, fix };
  }
  if (/^bwrap: /.test(reason)) {
    return {
      name: NAME, status: 'warn',
      detail: `${head}: Codex's own sandbox (bubblewrap) cannot be built here${f.confined ? " inside Overseer's jail" : ''}`,
      fix: `allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; Ubuntu 24.04 also kernel.apparmor_restrict_unprivileged_userns=0), or ${SANDBOX_OFF}`,
    };
  }
  return { name: NAME, status: 'warn', detail: head, fix: `Codex's sandbox could not start the command; ${SANDBOX_OFF}` };
}

export function codexShellCheck(f: CodexShellFacts): Check {
  const secs = `${Math.round(f.timeoutMs / 1000)} s`;
  const model = 'it talked to overseer\'s bundled fake model only: no key, no network involved';
  switch (f.outcome) {
    case 'ran':
      if (f.fileWritten) return { name: NAME, status: 'ok', detail: `a codex child ran \`${PROBE_COMMAND}\` in its work tree (${where(f)})` };
      return {
        name: NAME, status: 'warn',
        detail: `a codex child's shell command ran (exit ${f.command?.exitCode ?? '?'}) but its file did not appear in its work tree (${where(f)}): "${oneLine(body(f.output))}"`,
        fix: `Codex's sandbox did not let the command write its own work tree; ${SANDBOX_OFF}`,
      };
    case 'not_started':
      return notStarted(f);
    case 'no_command':
      return {
        name: NAME, status: 'warn',
        detail: `codex ended without running the command${f.error ? `: ${oneLine(f.error)}` : ''} (${model})`,
        fix: `see what codex says when you run it yourself, in an empty directory: ${f.bin} exec --skip-git-repo-check -s ${f.sandbox} 'run: ${PROBE_COMMAND}'`,
      };
    case 'timeout':
      return {
        name: NAME, status: 'warn',
        detail: `a codex child gave no result within ${secs}${f.error ? ` (last: ${oneLine(f.error)})` : ''} (${model})`,
        fix: 'check that codex starts at all (the codex check above) and that the machine is not overloaded, then run overseer doctor again',
      };
    case 'spawn_error':
      return { name: NAME, status: 'warn', detail: `codex could not be started: ${oneLine(f.error)}`, fix: 'reinstall codex (npm i -g @openai/codex) or point CODEX_BIN at a working codex' };
  }
}
