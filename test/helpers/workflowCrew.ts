// The workflow engine's test crew (test/integration/workflow-engine*.test.ts): scripted phase
// "children" for assess, review and implement, the plans they write, and a hub with a fresh repository.
import { join } from 'node:path';
import { startTestHub, type TestHub } from './hub.js';
import { job } from './state.js';
import { initRepo } from './git.js';
import { ScriptedLauncher, type ScriptedTurn, type TurnScript } from './fakeLauncher.js';
import type { Config } from '../../src/config.js';
import type { SpawnCmd } from '../../src/launch/types.js';
export const phaseOf = (prompt: string): string => /# Workflow \S+ — (assess|review|implement)/.exec(prompt)?.[1] ?? '?';
export const cycleOf = (prompt: string): number => Number(/# Workflow \S+ — \w+, cycle (\d+)/.exec(prompt)?.[1] ?? 0);
export const milestoneOf = (prompt: string): string => /## Your milestone\n- \[ \] (.+)/.exec(prompt)?.[1] ?? '';
export const jobIdOf = (cmd: SpawnCmd): string => cmd.env.OVERSEER_AGENT_ID ?? '';

export const PLAN3 = '# Plan\n- [ ] add alpha.txt\n- [ ] add beta.txt\n- [ ] add gamma.txt\n';
export const PLAN2 = '# Plan\n- [ ] add alpha.txt\n- [ ] add beta.txt\n';
export const PLAN1 = '# Plan\n- [ ] add alpha.txt\n';

export interface CrewOpts {
  plan?: string;
  contract?: string;
  assess?: (prompt: string, n: number) => ScriptedTurn | undefined;
  review?: (prompt: string, cycle: number) => ScriptedTurn | undefined;
  implement?: (prompt: string, cmd: SpawnCmd, milestone: string) => ScriptedTurn | Promise<ScriptedTurn> | undefined;
}

/** A well-behaved crew: the plan; approving reviews; implementers that add the file their
 * milestone names ("add X") and commit it. Each role can be overridden (undefined = default). */
export function crew(o: CrewOpts = {}): TurnScript {
  let assessN = 0;
  return (prompt, cmd) => {
    const phase = phaseOf(prompt);
    if (phase === 'assess') {
      assessN++;
      return o.assess?.(prompt, assessN) ?? { structured: { plan: o.plan ?? PLAN2, contract: o.contract ?? 'the files exist' } };
    }
    if (phase === 'review') return o.review?.(prompt, cycleOf(prompt)) ?? { structured: { verdict: 'approve', notes: `fine (cycle ${cycleOf(prompt)})` } };
    if (phase === 'implement') {
      const milestone = milestoneOf(prompt);
      return o.implement?.(prompt, cmd, milestone) ?? goodImplement(milestone);
    }
    throw new Error(`unexpected prompt: ${prompt.slice(0, 200)}`);
  };
}

export function goodImplement(milestone: string): ScriptedTurn {
  const file = /add (\S+)/.exec(milestone)?.[1] ?? 'x.txt';
  return { writeFiles: { [file]: `${file}\n` }, gitCommit: `add ${file}`, structured: { milestone, completed: true, summary: `added ${file}` } };
}

/** A hub with the scripted crew and a fresh repository; the hub joins `hubs` (stopped by the test file's after). */
export async function setupIn(hubs: TestHub[], script: TurnScript, config: Partial<Config> = {}): Promise<{ h: TestHub; repo: string; fake: ScriptedLauncher }> {
  const fake = new ScriptedLauncher(script);
  const h = await startTestHub({ processes: fake, config });
  hubs.push(h);
  const repo = await initRepo(join(h.dir, 'repo'), { 'README.md': '# repo\n' });
  return { h, repo, fake };
}

export const seq = (w: any): string[] => w.jobs.map((j: any) => `${j.phase}:${j.cycle}`);
export const promptOf = async (h: TestHub, jobId: string): Promise<string> => (await job(h.hub, jobId)).prompt;
