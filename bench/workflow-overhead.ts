// Workflow overhead per phase beyond the phase agent itself [goal ≤ 100 ms]: a workflow of
// 3 milestones (7 phases) runs against scripted phase "agents" that answer at once (the
// ScriptedLauncher from test/helpers: no model, no claude), so what is measured is the
// engine's own work between phases — structured result → notes, commit, plan check-off,
// worktree verification, prompt building, job creation and dispatch. Per phase:
// (workflow wall time − time spent inside the phase children) / phases. Baseline in the same
// run: a single plain job through the same hub and launcher (spawn → ended).
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startTestHub } from '../test/helpers/hub.js';
import { initRepo } from '../test/helpers/git.js';
import { ScriptedLauncher } from '../test/helpers/fakeLauncher.js';
import { out, f1 } from './common.js';

export interface WorkflowOverheadResult {
  runs: number;
  phases: number;
  perPhaseMs: number[];
  p50: number;
  plainJobMs: number;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchWorkflowOverhead(runs = 7): Promise<WorkflowOverheadResult> {
  let childMs = 0;
  const launcher = new ScriptedLauncher(async (prompt, cmd) => {
    const t0 = performance.now();
    const phase = /# Workflow \S+ — (assess|review|implement)/.exec(prompt)?.[1];
    let turn;
    if (phase === 'assess') turn = { structured: { plan: '- [ ] one\n- [ ] two\n- [ ] three\n', contract: 'c' } };
    else if (phase === 'review') turn = { structured: { verdict: 'approve', notes: 'ok' } };
    else if (phase === 'implement') {
      const m = /## Your milestone\n- \[ \] (.+)/.exec(prompt)?.[1] ?? '';
      turn = { writeFiles: { [`${m}.txt`]: m }, structured: { milestone: m, completed: true, summary: m } };
    } else turn = { resultText: 'ok' };
    void cmd;
    childMs += performance.now() - t0;
    return turn;
  });
  const h = await startTestHub({ processes: launcher });
  try {
    const perPhase: number[] = [];
    let phases = 0;
    for (let i = 0; i < runs; i++) {
      const repo = await initRepo(join(h.dir, `repo-${i}`), { 'README.md': '# r\n' });
      childMs = 0;
      const t0 = performance.now();
      const s = await h.call('start_workflow', { task: 'three files', cwd: repo });
      const w = await new Promise<Awaited<ReturnType<typeof h.hub.workflows.get>>>((resolve) => {
        const check = async (): Promise<void> => {
          await h.hub.workflows.idle(s.workflow_id);
          const v = await h.hub.workflows.get(s.workflow_id);
          if (v.status !== 'running') { off(); resolve(v); }
        };
        const off = h.hub.ctx.bus.on('job', () => void check());
      });
      const wall = performance.now() - t0;
      if (w.status !== 'succeeded') throw new Error(`workflow ended ${w.status}: ${JSON.stringify(w.blocked_reason)}`);
      phases = w.jobs.length;
      perPhase.push((wall - childMs) / phases);
    }
    // Baseline: one plain job through the same hub and launcher.
    const plain: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const j = await h.call('spawn_agent', { prompt: 'plain job' });
      await h.call('wait_for_agents', { job_ids: [j.job_id], timeout_s: 60 });
      plain.push(performance.now() - t0);
    }
    const res = { runs, phases, perPhaseMs: perPhase, p50: median(perPhase), plainJobMs: median(plain) };
    out(`  workflow overhead per phase: p50 ${f1(res.p50)} ms over ${runs} runs of ${phases} phases; plain job spawn→ended ${f1(res.plainJobMs)} ms\n`);
    return res;
  } finally {
    await h.stop();
  }
}
