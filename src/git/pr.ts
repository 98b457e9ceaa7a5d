// Publishing a finished job's branch: push to `origin` and open a pull request with `gh`.
// Neither ever throws; every reason for not pushing or not opening a PR comes back as a note.
import { loadExeca } from '../lazy.js';
import { errText, firstLine, gitEnv, gitOut, outLines } from './exec.js';

/** A push that prints nothing for this long is killed (a stuck credential helper or network). */
const PUSH_TIMEOUT_MS = 120_000;
/** Limit for each gh call. */
const GH_TIMEOUT_MS = 60_000;

/** Outcome of pushing a branch: pushed or the plain-words reason why not. */
export interface PushOutcome {
  pushed: boolean;
  note?: string;
}

/** Push `branch` to the remote named origin (setting it as upstream). No origin, or a failed
 * push, is reported in `note`. */
export async function pushBranch(repoDir: string, branch: string): Promise<PushOutcome> {
  let remotes: string[];
  try {
    remotes = outLines(await gitOut(['remote'], { cwd: repoDir }));
  } catch (err) {
    return { pushed: false, note: `could not list remotes: ${firstLine(errText(err))}` };
  }
  if (!remotes.includes('origin')) {
    return { pushed: false, note: remotes.length === 0 ? 'no remote configured' : `no remote named origin (remotes: ${remotes.join(', ')})` };
  }
  try {
    await gitOut(['push', '--set-upstream', 'origin', `refs/heads/${branch}:refs/heads/${branch}`], { cwd: repoDir, timeout: PUSH_TIMEOUT_MS });
    return { pushed: true };
  } catch (err) {
    return { pushed: false, note: `push to origin failed: ${firstLine(errText(err))}` };
  }
}

/** Outcome of opening a PR: its URL or the plain-words reason why there is none. */
export interface PrOutcome {
  prUrl?: string;
  note?: string;
}

/** Last http(s) URL in text, if any (gh prints the PR URL; "already exists" errors name it too). */
function lastUrl(text: string): string | undefined {
  const urls = text.match(/https?:\/\/\S+/g);
  return urls?.[urls.length - 1];
}

/** Open a PR for an already pushed `branch` with `gh pr create --fill --head <branch>`, when gh is
 * installed and authenticated. An existing PR for the branch counts as success (its URL). */
export async function openPullRequest(repoDir: string, branch: string, ghBin = 'gh'): Promise<PrOutcome> {
  const base = { cwd: repoDir, env: gitEnv(), extendEnv: false, reject: false, timeout: GH_TIMEOUT_MS, stdin: 'ignore' } as const;
  const auth = await (await loadExeca()).execa(ghBin, ['auth', 'status'], base);
  if ((auth as { code?: string }).code === 'ENOENT') return { note: 'gh not installed' };
  if (auth.timedOut) return { note: 'gh auth status timed out' };
  if (auth.exitCode !== 0) return { note: 'gh not authenticated (run `gh auth login`)' };

  const pr = await (await loadExeca()).execa(ghBin, ['pr', 'create', '--fill', '--head', branch], base);
  const stdout = String(pr.stdout ?? '');
  const stderr = String(pr.stderr ?? '');
  if (pr.exitCode === 0) {
    const url = lastUrl(stdout);
    return url ? { prUrl: url } : { note: `gh pr create printed no URL: ${firstLine(stdout || stderr)}` };
  }
  if (/already exists/i.test(stderr)) {
    const url = lastUrl(stderr);
    if (url) return { prUrl: url, note: 'a pull request for this branch already existed' };
  }
  if (pr.timedOut) return { note: 'gh pr create timed out' };
  return { note: `gh pr create failed: ${firstLine(stderr || stdout || errText(pr))}` };
}
