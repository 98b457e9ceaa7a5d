// Check-off reconciliation: the hub's own record of which milestone an implement phase
// completed (src/store/workflows.ts), and the plan note kept as a rendering of it. The hub is
// the only one that checks milestones off or re-opens them; an edit of the plan note by anyone
// else is reverted (an agent's, or anyone's once the workflow succeeded) or adopted as the new
// plan with the record kept for unchanged milestones (the lead's), and either way what differed
// is reported for the worklog.
import type { HubContext } from '../services/context.js';
import type { NoteService } from '../services/notes.js';
import type { WorkflowStore } from '../store/workflows.js';
import { tx } from '../store/db.js';
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
  constructor(private readonly ctx: HubContext, private readonly notes: NoteService, private readonly store: WorkflowStore) {}

  /** The plan and its record; undefined before a plan was fixed. A workflow from before the hub
   * kept a record adopts its plan note once, its checked boxes taken as done. */
  get(id: string): Ledger | undefined {
    const w = this.store.get(id);
    if (!w) return undefined;
    if (w.plan_text !== null) return { plan: w.plan_text, record: this.store.milestones(id) };
    const note = this.notes.store.get(wfKeys(id).plan);
    if (!note) return undefined;
    const record = parseMilestones(note.value).map((m) => ({ text: m.text, done: m.done, cycle: null, job: null }));
    tx(this.ctx.db, () => this.store.setPlan(id, note.value, record, this.ctx.clock.now()));
    return { plan: note.value, record };
  }

  /** The plan as the hub keeps it (what prompts, get_workflow and the plan note show). */
  rendered(id: string): string | undefined {
    const l = this.get(id);
    return l && renderPlan(l.plan, l.record);
  }

  progress(id: string): { done: number; total: number } {
    return progressOf(this.get(id)?.record ?? []);
  }

  top(id: string): MilestoneRecord | undefined {
    return topOpen(this.get(id)?.record ?? []);
  }

  /** Fix the plan (an assess result, or the lead's edit of the note): its milestone list is the
   * plan's from now on; check-offs of milestones whose name is unchanged are kept (for the
   * lead's edit, only where the lead left the box checked). */
  fix(id: string, plan: string, byLead = false): Ledger {
    const record = carryOver(plan, this.get(id)?.record ?? [], byLead);
    tx(this.ctx.db, () => {
      this.store.setPlan(id, plan, record, this.ctx.clock.now());
      this.writeNote(id, renderPlan(plan, record));
    });
    return { plan, record };
  }

  /** Check off exactly the milestone an implement phase named as completed, or say why not. */
  checkOff(id: string, named: string, job: string, cycle: number): { checked: string } | { problem: string } {
    const l = this.get(id);
    if (!l) return { problem: 'the workflow has no plan' };
    const r = matchMilestone(l.record, named);
    if ('problem' in r) return { problem: matchProblem(r, named, l.record) };
    const m: MilestoneRecord = { text: l.record[r.index]!.text, done: true, cycle, job };
    l.record[r.index] = m;
    tx(this.ctx.db, () => {
      this.store.setDone(id, r.index, m, this.ctx.clock.now());
      this.writeNote(id, renderPlan(l.plan, l.record));
    });
    return { checked: m.text };
  }

  /** Open again the done milestones a reviewer named. */
  reopen(id: string, names: readonly string[]): string[] {
    const l = this.get(id);
    if (!l) return [];
    const r = reopenIn(l.record, names);
    if (!r.reopened.length) return [];
    tx(this.ctx.db, () => {
      r.record.forEach((m, i) => { if (m !== l.record[i]) this.store.setDone(id, i, m, this.ctx.clock.now()); });
      this.writeNote(id, renderPlan(l.plan, r.record));
    });
    return r.reopened;
  }

  /** Bring the plan note back in line with the record; what was found, one sentence each. */
  reconcileNote(id: string): string[] {
    const l = this.get(id);
    if (!l) return [];
    const want = renderPlan(l.plan, l.record);
    const note = this.notes.store.get(wfKeys(id).plan);
    if (note?.value === want) return [];
    if (!note) {
      this.writeNote(id, want);
      return ['the plan note was deleted: restored from the hub\'s record'];
    }
    if (note.author === `workflow:${id}`) {
      this.writeNote(id, want); // an older rendering of the hub's own
      return [];
    }
    // The lead may change the plan of a workflow that can still run; a succeeded one's is history.
    if (note.author === 'lead' && parseMilestones(note.value).length && this.store.get(id)?.status !== 'succeeded') {
      const fixed = this.fix(id, note.value, true);
      const boxes = noteDiscrepancies(note.value, fixed.record);
      return [`the lead's edit of the plan note (version ${note.version}) is the plan now: ${fixed.record.length} milestones, ${progressOf(fixed.record).done} done (check-offs kept where the name is unchanged and the box still checked)${boxes.length ? `; not counted: ${boxes.join('; ')}` : ''}`];
    }
    this.writeNote(id, want);
    const diffs = noteDiscrepancies(note.value, l.record);
    return [`${note.author} edited the plan note (version ${note.version}) outside the hub; restored it: ${diffs.length ? diffs.join('; ') : 'text around the milestones was changed'}`];
  }

  private writeNote(id: string, value: string): void {
    this.notes.writeAs(wfKeys(id).plan, value, `workflow:${id}`);
  }
}
