// Benchmark P5: the lock hook per edit for COMMAND hooks (the lead's, from overseer init, and
// every Codex child's): hooks/overseer-hook.sh started as hookCommandLine starts it
// (`/bin/bash overseer-hook.sh <node>` where there is bash: it posts over /dev/tcp), the same
// script under /bin/sh = dash (its curl branch), against `/bin/true` started the same way
// (spawn → process closed, stdin piped and closed, stdout drained), each started and timed from
// a lean process of its own (bench/fixtures/spawner.mjs; a hook's caller is not the hub's
// process), and against the Node hook
// (`node hooks/overseer-hook.mjs`), all interleaved in one run (order rotated every round).
// An in-process hub runs two hanging jobs (bench/fixtures/sleep-agent.sh); their agent tokens are
// captured from the launch command (TokenRecorder). Inputs: a Write PreToolUse JSON of
//   - free: a file nobody holds (a fresh one per sample), so the hub auto-locks it for A;
//   - deny: a file agent B holds, so the hook prints a deny;
// as agent A (OVERSEER_URL/OVERSEER_TOKEN: a Codex child), and as the lead (no agent env; the
// hook finds hub.json and lead.token under $XDG_STATE_HOME from CLAUDE_PROJECT_DIR, as a lead
// session does), plus the lead with no hub running (walks up to / finding none: allowed).
// 30 rounds after 3 warm-up rounds. Goal (issue 14): median ≤ 10 ms absolute on this machine.
// Run alone: node --import tsx bench/cmd-hook.ts
import { mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { projectStateDir } from '../src/config.js';
import { hookShell } from '../src/launch/claude/launcher.js';
import { REPO_ROOT, TokenRecorder, cleanEnv, f2, fixture, out, removeDir, runAlone, spawnHangingAgent, startBenchHub, startSpawner, statLine, stats, type Stats, type TimedRun } from './common.js';

const RUNS = 30;
const WARMUP = 3;
const NODE_HOOK = path.join(REPO_ROOT, 'hooks', 'overseer-hook.mjs');
const SH_HOOK = path.join(REPO_ROOT, 'hooks', 'overseer-hook.sh');
/** The commands, as hookCommandLine runs them (the caller's `sh -c` around it is left out of every one). */
const SH: [string, string[]] = [hookShell(), [SH_HOOK, process.execPath]];
/** The same script under a POSIX sh that is not bash (dash here): its curl branch. */
const CURL_HOOK: [string, string[]] = ['/bin/sh', [SH_HOOK, process.execPath]];
const NODE: [string, string[]] = [process.execPath, [NODE_HOOK]];
const TRUE: [string, string[]] = ['/bin/true', []];
/** curl's own start (dynamic loading of libcurl and its ~30 libraries): the floor of any curl hook. */
const CURL: [string, string[]] = ['curl', ['-q', '--version']];

export interface CmdHookResult {
  baseline: Stats;
  curlStart: Stats;
  /** the hook as hookCommandLine starts it (bash + /dev/tcp where there is bash) */
  shFree: Stats;
  shDeny: Stats;
  /** the script under /bin/sh when that is not bash: the curl branch */
  curlFree: Stats;
  curlDeny: Stats;
  shell: string;
  nodeFree: Stats;
  nodeDeny: Stats;
  leadDeny: Stats;
  leadNoHub: Stats;
  /** the sh hook's median minus /bin/true's: what the hook itself costs */
  overFree: number;
  overDeny: number;
}


const hookInput = (cwd: string, file: string): string =>
  JSON.stringify({
    session_id: 'bench-cmd-hook', transcript_path: '/dev/null', cwd, permission_mode: 'default', hook_event_name: 'PreToolUse',
    tool_name: 'Write', tool_input: { file_path: file, content: 'export const x = 1;\n' },
  });

const allowed = (r: TimedRun): boolean => r.code === 0 && r.stdout.trim() === '';
const denied = (r: TimedRun): boolean => r.code === 0 && r.stdout.includes('"permissionDecision":"deny"');

export async function benchCmdHook(): Promise<CmdHookResult> {
  const rec = new TokenRecorder();
  const h = await startBenchHub({ claudeBin: fixture('sleep-agent.sh'), processes: rec, config: { maxAgents: 4 } });
  // The commands start from a process of their own, as Codex or Claude Code starts its hooks.
  const spawner = startSpawner();
  const run = (cmd: [string, string[]], env: NodeJS.ProcessEnv, stdin: string, cwd: string): Promise<TimedRun> => spawner.run(cmd[0], cmd[1], { env, cwd, stdin });
  const xdg = await mkdtemp(path.join(tmpdir(), 'ovs-cmdhook-xdg-'));
  const nowhere = await realpath(await mkdtemp(path.join(tmpdir(), 'ovs-cmdhook-nohub-')));
  try {
    const url = h.hub.http!.url;
    const a = await spawnHangingAgent(h, rec, 'cmd hook A');
    const b = await spawnHangingAgent(h, rec, 'cmd hook B');
    const project = await realpath(h.project);
    const src = path.join(project, 'src');
    await mkdir(src, { recursive: true });
    const held = path.join(src, 'held-by-b.ts');
    const envA = cleanEnv({ OVERSEER_URL: url, OVERSEER_TOKEN: a.token });
    const envB = cleanEnv({ OVERSEER_URL: url, OVERSEER_TOKEN: b.token });
    // The lead's layout: the hub's hub.json and lead.token in the project's state directory.
    const state = projectStateDir(project, { XDG_STATE_HOME: xdg });
    await mkdir(state, { recursive: true });
    await writeFile(path.join(state, 'hub.json'), `${JSON.stringify({ pid: process.pid, port: h.hub.http!.port, url, started_at: new Date().toISOString() }, null, 2)}\n`);
    await writeFile(path.join(state, 'lead.token'), `${h.hub.leadToken}\n`, { mode: 0o600 });
    const envLead = cleanEnv({ XDG_STATE_HOME: xdg, CLAUDE_PROJECT_DIR: src });
    const envNoHub = cleanEnv({ XDG_STATE_HOME: xdg, CLAUDE_PROJECT_DIR: nowhere });

    // B takes the file through its own hook (auto lock), so A's hook (and the lead's) is denied on it.
    const take = await run(SH, envB, hookInput(project, held), project);
    if (!allowed(take)) throw new Error(`B's hook did not auto-lock ${held}: exit ${take.code}, ${take.stdout}${take.stderr}`);
    if ((await h.hub.locks.heldAmong([held]))[0]?.holder !== b.jobId) throw new Error(`${held} is not held by B after its hook ran`);

    const kinds = ['base', 'curl', 'shFree', 'shDeny', 'curlFree', 'curlDeny', 'nodeFree', 'nodeDeny', 'leadDeny', 'leadNoHub'] as const;
    const samples = Object.fromEntries(kinds.map((k) => [k, [] as number[]])) as Record<(typeof kinds)[number], number[]>;
    const cmdOf = { shFree: SH, shDeny: SH, curlFree: CURL_HOOK, curlDeny: CURL_HOOK, nodeFree: NODE, nodeDeny: NODE } as const;
    let n = 0;
    for (let i = -WARMUP; i < RUNS; i++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(k + i + WARMUP) % kinds.length]!;
        let r: TimedRun;
        let ok: boolean;
        if (kind === 'base' || kind === 'curl') {
          r = await run(kind === 'base' ? TRUE : CURL, envA, '', project);
          ok = r.code === 0;
        } else if (kind === 'shFree' || kind === 'curlFree' || kind === 'nodeFree') {
          const file = path.join(src, `free-${n++}.ts`);
          r = await run(cmdOf[kind], envA, hookInput(project, file), project);
          ok = allowed(r) && (await h.hub.locks.heldAmong([file]))[0]?.holder === a.jobId;
        } else if (kind === 'shDeny' || kind === 'curlDeny' || kind === 'nodeDeny') {
          r = await run(cmdOf[kind], envA, hookInput(project, held), project);
          ok = denied(r) && r.stdout.includes(b.jobId);
        } else if (kind === 'leadDeny') {
          r = await run(SH, envLead, hookInput(src, held), src);
          ok = denied(r) && r.stdout.includes(b.jobId);
        } else {
          r = await run(SH, envNoHub, hookInput(nowhere, path.join(nowhere, 'x.ts')), nowhere);
          ok = allowed(r);
        }
        if (!ok) throw new Error(`${kind}: unexpected answer: exit ${r.code}, stdout ${r.stdout}, stderr ${r.stderr}`);
        if (i >= 0) samples[kind].push(r.ms);
      }
    }
    const s = Object.fromEntries(kinds.map((k) => [k, stats(samples[k])])) as Record<(typeof kinds)[number], Stats>;
    const r: CmdHookResult = {
      baseline: s.base, curlStart: s.curl, shFree: s.shFree, shDeny: s.shDeny, curlFree: s.curlFree, curlDeny: s.curlDeny, shell: SH[0], nodeFree: s.nodeFree, nodeDeny: s.nodeDeny, leadDeny: s.leadDeny, leadNoHub: s.leadNoHub,
      overFree: s.shFree.p50 - s.base.p50, overDeny: s.shDeny.p50 - s.base.p50,
    };
    out(
      statLine(`baseline /bin/true (${RUNS} runs, interleaved)`, r.baseline) +
        statLine('curl -q --version (curl\'s own start)', r.curlStart) +
        statLine(`hook (${SH[0]}), agent env, free file (auto-lock)`, r.shFree) +
        statLine(`hook (${SH[0]}), agent env, held file (deny)`, r.shDeny) +
        statLine('hook under /bin/sh (curl), free file', r.curlFree) +
        statLine('hook under /bin/sh (curl), held file (deny)', r.curlDeny) +
        statLine('node hook, agent env, free file', r.nodeFree) +
        statLine('node hook, agent env, held file (deny)', r.nodeDeny) +
        statLine(`hook (${SH[0]}), lead (hub found from CLAUDE_PROJECT_DIR), held file (deny)`, r.leadDeny) +
        statLine(`hook (${SH[0]}), lead, no hub running (walk to /)`, r.leadNoHub) +
        `hook over /bin/true (median): free +${f2(r.overFree)} ms, deny +${f2(r.overDeny)} ms; node hook/hook (median): free ${f2(r.nodeFree.p50 / r.shFree.p50)}×, deny ${f2(r.nodeDeny.p50 / r.shDeny.p50)}×\n`,
    );
    return r;
  } finally {
    await spawner.close();
    await h.stop();
    await removeDir(xdg);
    await removeDir(nowhere);
  }
}

runAlone(import.meta.url, benchCmdHook);
