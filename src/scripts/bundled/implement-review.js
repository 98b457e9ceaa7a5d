// The implement/review workflow (docs/workflows.md) as a script on the hub's script engine: the
// order of the phases lives here, and each step is a privileged call of the hub's
// (src/workflow/steps.ts): wf.phase spawns a phase and waits for its job, wf.next applies the
// job's result and says what comes next (the pure decisions of src/domain/workflow.ts), and
// wf.approval waits for the lead's approval of the plan. start_workflow and resume_workflow spawn
// the first phase together with the run (args.first). A blocked workflow fails its run with the
// reason; resume_workflow starts a new run from the phase it names.
export const meta = { name: 'implement-review', description: 'Assess a task into milestones, then review and implement, one milestone a cycle, until every milestone is checked off' }
const id = args.workflow_id
let step = args.first
for (;;) {
  phase('cycle ' + step.cycle + ' ' + step.phase)
  const ran = await hub.call('wf.phase', id, step)
  let next = ran.job_id ? await hub.call('wf.next', id, ran.job_id) : ran
  if (next.kind === 'approval') next = await hub.call('wf.approval', id, next.cycle)
  if (next.kind === 'spawn') {
    step = next.repair ? { phase: next.phase, cycle: next.cycle, repair: next.repair } : { phase: next.phase, cycle: next.cycle }
    continue
  }
  if (next.kind === 'block') {
    const e = new Error(next.code + ': ' + next.message)
    e.name = 'WorkflowBlocked'
    throw e
  }
  return { workflow_id: id, status: next.kind === 'done' ? 'succeeded' : next.status }
}
