// A child process that is one real hub (startTestHub, ./hub.ts) on a given PostgreSQL database,
// its children scripted in process (./fakeLauncher.ts), so that a test can kill it with -9 (its
// children die with it) while other hubs on the same database go on: test/integration/hubs-adopt.test.ts.
// One JSON command per stdin line, answered by one line {n, ...} ({n, error} when it failed):
//   {op: 'start', dir, project, url, beatMs, timeoutMs}  → {hubId}
//   {op: 'call', tool, args}                             → {result} (the lead's tool call)
//   {op: 'open', gate}                                   → {}: children whose prompt says "@gate:<gate>" answer now
//   {op: 'launched'}                                     → {jobs: [the job id of each child this hub started, in order]}
//   {op: 'stop'}                                         → {}, then exits
// A child: "@gate:<name>" waits for that gate, then succeeds; a workflow phase answers as a
// one-milestone crew (plan "add alpha.txt", approving review, an implementer that adds alpha.txt);
// anything else (a resumed job's message) succeeds at once.
import { commandLoop } from './childLoop.js';
import { startTestHub, type TestHub } from './hub.js';
import { ScriptedLauncher, type ScriptedTurn } from './fakeLauncher.js';

const PLAN1 = '# Plan\n- [ ] add alpha.txt\n';
const phaseOf = (prompt: string): string => /# Workflow \S+ — (assess|review|implement)/.exec(prompt)?.[1] ?? '?';

const gates = new Map<string, { open: () => void; opened: Promise<void> }>();
function gate(name: string): { open: () => void; opened: Promise<void> } {
  let g = gates.get(name);
  if (!g) {
    let open!: () => void;
    const opened = new Promise<void>((r) => { open = r; });
    g = { open, opened };
    gates.set(name, g);
  }
  return g;
}

const fake = new ScriptedLauncher(async (prompt): Promise<ScriptedTurn> => {
  const name = /@gate:(\w+)/.exec(prompt)?.[1];
  if (name) {
    await gate(name).opened;
    return { resultText: `done after ${name}` };
  }
  const phase = phaseOf(prompt);
  if (phase === 'assess') return { structured: { plan: PLAN1, contract: 'alpha.txt exists' } };
  if (phase === 'review') return { structured: { verdict: 'approve', notes: 'fine' } };
  if (phase === 'implement') return { writeFiles: { 'alpha.txt': 'alpha\n' }, gitCommit: 'add alpha.txt', structured: { milestone: 'add alpha.txt', completed: true, summary: 'added alpha.txt' } };
  return { resultText: 'done' };
});

let h: TestHub | undefined;

async function run(cmd: Record<string, unknown>): Promise<Record<string, unknown>> {
  switch (cmd.op) {
    case 'start':
      h = await startTestHub({
        dir: cmd.dir as string, project: cmd.project as string, processes: fake,
        config: { databaseUrl: cmd.url as string, hubBeatMs: Number(cmd.beatMs), hubTimeoutMs: Number(cmd.timeoutMs) },
      });
      return { hubId: h.hub.hubId };
    case 'call':
      return { result: await h!.call(cmd.tool as string, cmd.args as Record<string, unknown>) };
    case 'open':
      gate(cmd.gate as string).open();
      return {};
    case 'launched':
      return { jobs: fake.spawned.map((c) => c.env.OVERSEER_AGENT_ID ?? '?') };
    case 'stop':
      await h?.stop({ keep: true });
      return {};
    default:
      throw new Error(`unknown op ${String(cmd.op)}`);
  }
}

await commandLoop(run, 'stop');
