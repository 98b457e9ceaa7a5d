// Check-off reconciliation: the hub's own record of which milestone an implement phase
// completed (src/store/sql/workflows.ts), and the plan note kept as a rendering of it. The hub is
// the only one that checks milestones off or re-opens them; an edit of the plan note by anyone
// else is reverted (an agent's, or anyone's once the workflow succeeded) or adopted as the new
// plan with the record kept for unchanged milestones (the lead's), and either way what differed
// is reported for the worklog.
import type { NoteService } from '../services/notes.js';
import type { WorkflowRows } from './rows.js';
import {
  carryOver, matchMilestone, matchProblem, noteDiscrepancies, parseMilestones, progressOf, renderPlan, reopenIn, topOpen,
  type MilestoneRecord,
} from '../domain/milestones.js';
import { wfKeys } from './state.js';

export interface Ledger {
  /** the plan text as fixed by the hub */
  plan: string;
  record: MilestoneRecord[];
}

export class MilestoneLedger {
  constructor(private readonly notes: NoteService, private readonly store: WorkflowRows) {}

  /** The plan and its record; undefined before a plan was fixed. A workflow from before the hub
   * kept a record adopts its plan note once, its checked boxes taken as done. */
  async get(id: string): Promise<Ledger | undefined> {
    const w = await this.store.get(id);
    if (!w) return undefined;
    if (w.plan_text !== null) return { plan: w.plan_text, record: await this.store.milestones(id) };
    const note = await this.notes.get(wfKeys(id).plan);
    if (!note) return undefined;
    const record = parseMilestones(note.value).map((m) => ({ text: m.text, done: m.done, cycle: null, job: null }));
    await this.store.setPlan(id, note.value, record);
    return { plan: note.value, record };
  }

  /** The plan as the hub keeps it (what prompts, get_workflow and the plan note show). */
  async rendered(id: string): Promise<string | undefined> {
    const l = await this.get(id);
    return l && renderPlan(l.plan, l.record);
  }

  async progress(id: string): Promise<{ done: number; total: number }> {
    return progressOf((await this.get(id))?.record ?? []);
  }

  async top(id: string): Promise<MilestoneRecord | undefined> {
    return topOpen((await this.get(id))?.record ?? []);
  }

  /** Fix the plan (an assess result, or the lead's edit of the note): its milestone list is the
   * plan's from now on; check-offs of milestones whose name is unchanged are kept (for the
   * lead's edit, only where the lead left the box checked). */
  async fix(id: string, plan: string, byLead = false): Promise<Ledger> {
    const record = carryOver(plan, (await this.get(id))?.record ?? [], byLead);
    await this.store.setPlan(id, plan, record);
    await this.writeNote(id, renderPlan(plan, record));
    return { plan, record };
  }

  /** Check off exactly the milestone an implement phase named as completed, or say why not. The
   * check-off is compare-and-set: only an open milestone of that text is set done, so of two
   * check-offs at once one applies and the other is told it was already checked off. */
  async checkOff(id: string, named: string, job: string, cycle: number): Promise<{ checked: string } | { problem: string }> {
    for (let attempt = 0; ; attempt++) {
      const l = await this.get(id);
      if (!l) return { problem: 'the workflow has no plan' };
      const r = matchMilestone(l.record, named);
      if ('problem' in r) return { problem: matchProblem(r, named, l.record) };
      const m: MilestoneRecord = { text: l.record[r.index]!.text, done: true, cycle, job };
      if (!(await this.store.checkOff(id, r.index, m.text, { cycle, job }))) {
        // Checked off (or the plan replaced) since it was read: read again, which says why.
        if (attempt < 2) continue;
        return { problem: `"${m.text}" changed while it was being checked off; nothing was checked off` };
      }
      l.record[r.index] = m;
      await this.writeNote(id, renderPlan(l.plan, l.record));
      return { checked: m.text };
    }
  }

  /** Open again the done milestones a reviewer named. */
  async reopen(id: string, names: readonly string[]): Promise<string[]> {
    const l = await this.get(id);
    if (!l) return [];
    const r = reopenIn(l.record, names);
    if (!r.reopened.length) return [];
    const opened: string[] = [];
    for (const [i, m] of r.record.entries()) {
      if (m !== l.record[i] && (await this.store.reopen(id, i, m.text))) opened.push(m.text);
    }
    if (!opened.length) return [];
    await this.writeNote(id, renderPlan(l.plan, (await this.get(id))?.record ?? r.record));
    return r.reopened.filter((t) => opened.includes(t));
  }

  /** Bring the plan note back in line with the record; what was found, one sentence each. */
  async reconcileNote(id: string): Promise<string[]> {
    const l = await this.get(id);
    if (!l) return [];
    const want = renderPlan(l.plan, l.record);
    const note = await this.notes.get(wfKeys(id).plan);
    if (note?.value === want) return [];
    if (!note) {
      await this.writeNote(id, want);
      return ['the plan note was deleted: restored from the hub\'s record'];
    }
    if (note.author === `workflow:${id}`) {
      await this.writeNote(id, want); // an older rendering of the hub's own
      return [];
    }
    // The lead may change the plan of a workflow that can still run; a succeeded one's is history.
    if (note.author === 'lead' && parseMilestones(note.value).length && (await this.store.get(id))?.status !== 'succeeded') {
      const fixed = await this.fix(id, note.value, true);
      const boxes = noteDiscrepancies(note.value, fixed.record);
      return [`the lead's edit of the plan note (version ${note.version}) is the plan now: ${fixed.record.length} milestones, ${progressOf(fixed.record).done} done (check-offs kept where the name is unchanged and the box still checked)${boxes.length ? `; not counted: ${boxes.join('; ')}` : ''}`];
    }
    await this.writeNote(id, want);
    const diffs = noteDiscrepancies(note.value, l.record);
    return [`${note.author} edited the plan note (version ${note.version}) outside the hub; restored it: ${diffs.length ? diffs.join('; ') : 'text around the milestones was changed'}`];
  }

  private async writeNote(id: string, value: string): Promise<void> {
    await this.notes.put(wfKeys(id).plan, value, `workflow:${id}`);
  }
}
