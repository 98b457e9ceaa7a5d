// The `codex shell` check: one shell command in a Codex child started the way the hub starts one
// — the launcher's own argv and environment (Codex's sandbox as configured, the helper links),
// inside Overseer's jail when the hub would use it, CODEX_HOME beside the hub's (so under the
// temporary directory exactly when the hub's is) — against overseer's bundled fake model, which
// asks for the command: no key, no network, no cost, and the same command every time. What is
// checked is whether the command starts, not the model. Nothing of it stays behind.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot, stateRoot, type Config } from '../config.js';
import { ConfinedLauncher, confineStatus, probeBwrap } from '../confine/launcher.js';
import { childEnvFrom } from '../launch/childEnv.js';
import { commandOutcome } from '../launch/codex/commands.js';
import { CodexLauncher, writeCodexHome } from '../launch/codex/launcher.js';
import { helperDir, nativeCodexBinary } from '../launch/codex/sandboxHelpers.js';
import { LineSplitter } from '../launch/lineSplitter.js';
import { NodeLauncher } from '../launch/process.js';
import type { ExitInfo, LaunchSpec, ProcessLauncher } from '../launch/types.js';
import { which } from '../launch/which.js';
import { fakeModelCatalog, startFakeOpenAI } from '../fakemodel/fakeOpenAI.js';
import { codexShellCheck, PROBE_COMMAND, PROBE_FILE, PROBE_TEXT } from './codexShell.js';
import type { Check, CodexShellFacts, CodexShellInputs, DoctorDeps } from './types.js';

export const CODEX_SHELL_TIMEOUT_MS = 60_000;
const FAKE_MODEL = 'fake-model';
const KEY_VAR = 'OVERSEER_DOCTOR_FAKE_KEY';

const inside = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);
const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** The hub's argv minus its MCP server (no hub is needed to run one command). */
function withoutMcp(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '-c' && args[i + 1]?.startsWith('mcp_servers.')) i++;
    else out.push(args[i]!);
  }
  return out;
}

/** Run the probe; never throws. */
export async function runCodexShell(i: CodexShellInputs, deps: Pick<DoctorDeps, 'env' | 'cwd' | 'packageRoot' | 'probeConfine'>): Promise<CodexShellFacts> {
  const timeoutMs = i.timeoutMs ?? CODEX_SHELL_TIMEOUT_MS;
  const sandbox = i.config?.codexSandbox ?? 'workspace-write';
  const homeExisted = existsSync(i.home);
  const dir = join(i.home, 'doctor-codex');
  const codexHome = join(dir, 'codex-home');
  const work = mkdtempSync(join(deps.env.TMPDIR || tmpdir(), 'overseer-doctor-'));
  let output: string | undefined;
  const fake = await startFakeOpenAI({
    scripts: { default: (ctx) => {
      if (ctx.step === 0) return { calls: [{ shell: PROBE_COMMAND }] };
      output ??= ctx.lastOutputs[0]?.text;
      return { text: 'done' };
    } },
  });
  const resolved = i.bin.includes('/') ? i.bin : which(i.bin, deps.env.PATH) ?? i.bin;
  const base = {
    bin: i.bin, sandbox, codexHome, timeoutMs,
    codexHomeInTemp: [deps.env.TMPDIR || '/tmp', '/tmp'].some((t) => inside(real(i.home), real(t))),
    native: nativeCodexBinary(resolved),
  };
  try {
    mkdirSync(codexHome, { recursive: true });
    const catalog = join(codexHome, 'models.json'); // inside CODEX_HOME: the jail hides the rest of the state
    writeFileSync(catalog, JSON.stringify(fakeModelCatalog([FAKE_MODEL])));
    writeCodexHome(codexHome, { model: FAKE_MODEL, modelCatalog: catalog, provider: { base_url: fake.url, env_key: KEY_VAR, request_max_retries: 0, stream_max_retries: 0 } });
    const launcher = new CodexLauncher({ bin: i.bin, codexHome, sandbox, nodeBin: process.execPath, hookScript: '', hook: false });
    const spec: LaunchSpec = {
      jobId: 'doctor', message: 'Run the command you are given.', cwd: work, sessionId: '', resume: false,
      mcpUrl: 'http://127.0.0.1:9/mcp', token: '', appendSystemPrompt: '', mcpTimeoutMs: 10_000,
      env: { ...childEnvFrom(deps.env), [KEY_VAR]: 'sk-doctor-fake' },
    };
    const cmd = launcher.build(spec, i.bin);
    cmd.args = withoutMcp(cmd.args);
    const status = confineStatus(i.config?.confine ?? 'auto', deps.probeConfine ?? probeBwrap);
    const processes: ProcessLauncher = status.active
      ? new ConfinedLauncher(new NodeLauncher(), status.bwrap!, { stateDir: i.home, stateRoot: stateRoot(deps.env), projectDir: projectRoot(deps.cwd), packageRoot: deps.packageRoot ?? work })
      : new NodeLauncher();
    const facts = { ...base, confined: status.active, helperLinks: existsSync(join(helperDir(codexHome), 'codex-linux-sandbox')) };
    const run = await runChild(processes, cmd, launcher.firstInput(spec), timeoutMs);
    const fileWritten = (() => {
      try {
        return readFileSync(join(work, PROBE_FILE), 'utf8') === `${PROBE_TEXT}\n`;
      } catch {
        return false;
      }
    })();
    if (run.exit?.spawnError) return { ...facts, outcome: 'spawn_error', fileWritten, error: run.exit.spawnError.message };
    if (output !== undefined) {
      const command = commandOutcome(output);
      return { ...facts, outcome: command.started ? 'ran' : 'not_started', command, output: output.slice(0, 2000), fileWritten };
    }
    return { ...facts, outcome: run.timedOut ? 'timeout' : 'no_command', fileWritten, error: run.failed ?? run.stderr };
  } catch (err) {
    return { ...base, confined: false, helperLinks: false, outcome: 'spawn_error', fileWritten: false, error: (err as Error).message };
  } finally {
    await fake.close();
    rmSync(work, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    if (!homeExisted) {
      try {
        rmdirSync(i.home); // only if nothing else appeared in it meanwhile
      } catch {
        // a hub started and wrote its state: leave it
      }
    }
  }
}

/** Start the child, give it the prompt, and wait for its end (killing it after `timeoutMs`). */
async function runChild(processes: ProcessLauncher, cmd: ReturnType<CodexLauncher['build']>, prompt: string, timeoutMs: number): Promise<{ exit?: ExitInfo; timedOut: boolean; failed?: string; stderr: string }> {
  const child = processes.launch(cmd);
  let failed: string | undefined;
  let stderr = '';
  const lines = new LineSplitter((line) => {
    try {
      const e = JSON.parse(line) as { type?: string; error?: { message?: string } };
      if (e.type === 'turn.failed') failed = e.error?.message ?? 'the turn failed';
    } catch {
      // not an event
    }
  });
  child.onStdout((c) => lines.push(c));
  child.onStderr((c) => { stderr = (stderr + c.toString('utf8')).slice(-4000); });
  child.write(prompt);
  child.closeStdin();
  let timedOut = false;
  const timer = setTimeout(() => { timedOut = true; child.signalGroup('SIGKILL'); }, timeoutMs);
  const exit = await child.exited;
  clearTimeout(timer);
  lines.end();
  // Codex's own error line, else the last line that is not a warning, a backtrace or the stdin note.
  const said = stderr.split('\n').map((l) => l.trim()).filter((l) => l && !/^(Reading (additional )?(input|prompt) from stdin|WARNING: |Stack backtrace:|\d+: )/.test(l));
  return { exit, timedOut, failed, stderr: said.find((l) => l.startsWith('Error: ')) ?? said.at(-1) ?? '' };
}

/** The `codex shell` check for the codex binary the launcher would use. */
export async function checkCodexShell(config: Config | undefined, bin: string, home: string, deps: Pick<DoctorDeps, 'env' | 'cwd' | 'packageRoot' | 'probeConfine' | 'runCodexShell'>): Promise<Check> {
  const facts = await (deps.runCodexShell ?? runCodexShell)({ bin, config, home }, deps);
  return codexShellCheck(facts);
}
