// Which agent CLIs this host can run, and their versions: what a job needs is matched against it
// (a worker without a CLI a job needs never claims it). Found as the launchers find them
// (src/launch/common.ts: CLAUDE_BIN / CODEX_BIN or config, else PATH, else overseer-mcp's own
// node_modules/.bin); a CLI whose `--version` fails or hangs is not listed.
import { execFile } from 'node:child_process';
import { resolveAgentBin } from '../launch/common.js';

const VERSION_TIMEOUT_MS = 15_000;

export interface CliSources {
  claudeBin?: string | undefined;
  codexBin?: string | undefined;
  packageRoot: string | undefined;
  path: string | undefined;
}

/** CLI name → the first line of its `--version`, for each that answers. */
export async function findClis(s: CliSources): Promise<Record<string, string>> {
  const bins = { claude: resolveAgentBin('claude', s.claudeBin, s.packageRoot, s.path), codex: resolveAgentBin('codex', s.codexBin, s.packageRoot, s.path) };
  const out: Record<string, string> = {};
  await Promise.all(Object.entries(bins).map(async ([name, bin]) => {
    const v = bin ? await versionOf(bin) : undefined;
    if (v) out[name] = v;
  }));
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

function versionOf(bin: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(bin, ['--version'], { timeout: VERSION_TIMEOUT_MS, encoding: 'utf8' }, (err, stdout) => {
      const line = stdout.split('\n').map((l) => l.trim()).find((l) => l !== '');
      resolve(err || !line ? undefined : line.slice(0, 200));
    });
  });
}
