// A workflow's milestones as pure functions. The plan text (the `- [ ]` lines of the assess
// phase's plan) is fixed by the hub; which milestone is done is the hub's own record, one entry
// per milestone, set only when an implement phase reported that milestone completed. The plan
// note is a rendering of the two; a note that says otherwise is reconciled back. No I/O.

export interface Milestone {
  text: string;
  done: boolean;
  line: number;
}

/** The hub's record of one milestone: done only when an implement phase reported it completed. */
export interface MilestoneRecord {
  text: string;
  done: boolean;
  /** cycle and job of the implement phase that completed it (null: open, or adopted from a note
   * written before the hub kept a record) */
  cycle: number | null;
  job: string | null;
}

const MILESTONE = /^(\s*[-*]\s+\[)( |x|X)(\]\s+)(\S.*?)\s*$/;
const BOX = /^(\s*[-*]\s+\[)( |x|X)(?=\]\s+\S)/;

/** Every `- [ ] text` / `* [x] text` line of a plan, in order. */
export function parseMilestones(plan: string): Milestone[] {
  const out: Milestone[] = [];
  plan.split('\n').forEach((l, line) => {
    const m = MILESTONE.exec(l);
    if (m) out.push({ text: m[4]!, done: m[2] !== ' ', line });
  });
  return out;
}

/**
 * What two milestone names must share to be the same milestone. Tolerated: a copied list
 * prefix (`- [ ] `, `* [x] `, `[X] `, a bare `- `), any run of whitespace, trailing punctuation
 * (`. , ; : ! ? …`) and letter case. Everything else — words, inner punctuation, backticks,
 * numbers — must be the same, so a reworded milestone is a different milestone.
 */
export function milestoneKey(name: string): string {
  return name
    .normalize('NFC')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(?:[-*+](?: |(?=\[)|$))?(?:\[[ xX]?\] ?)?/, '')
    .replace(/[\s.,;:!?…]+$/u, '')
    .toLowerCase();
}

/** A fresh record of a plan: every milestone open (boxes an assessor checked do not count). */
export function recordOf(plan: string): MilestoneRecord[] {
  return parseMilestones(plan).map((m) => ({ text: m.text, done: false, cycle: null, job: null }));
}

/** The record of a new plan text, keeping the check-offs of milestones whose name (by
 * milestoneKey) is unchanged; new or reworded milestones are open. With `uncheckReopens`, a
 * milestone whose box the new text leaves unchecked is open too (the lead re-opening it). */
export function carryOver(plan: string, old: readonly MilestoneRecord[], uncheckReopens = false): MilestoneRecord[] {
  const pool = old.filter((m) => m.done);
  return parseMilestones(plan).map((m) => {
    const open: MilestoneRecord = { text: m.text, done: false, cycle: null, job: null };
    const i = pool.findIndex((o) => milestoneKey(o.text) === milestoneKey(m.text));
    if (i < 0) return open;
    const [o] = pool.splice(i, 1);
    return uncheckReopens && !m.done ? open : { ...o!, text: m.text };
  });
}

/** The plan note as the hub keeps it: the fixed plan text, each milestone line's box set from
 * the record (the rest of each line, and every other line, as the plan has it). */
export function renderPlan(plan: string, record: readonly MilestoneRecord[]): string {
  let i = 0;
  return plan.split('\n').map((l) => {
    if (!MILESTONE.test(l)) return l;
    const done = record[i++]?.done === true;
    return l.replace(BOX, (_, head: string) => `${head}${done ? 'x' : ' '}`);
  }).join('\n');
}

export type NoMatch = { problem: 'unnamed' | 'unknown' } | { problem: 'already_done'; index: number };
export type MatchResult = { index: number } | NoMatch;

/** The milestone an implement phase named: the first open one with the same key; else why none. */
export function matchMilestone(record: readonly MilestoneRecord[], named: string): MatchResult {
  const key = milestoneKey(named);
  if (!key) return { problem: 'unnamed' };
  const hits = record.flatMap((m, index) => (milestoneKey(m.text) === key ? [{ m, index }] : []));
  const open = hits.find((h) => !h.m.done);
  if (open) return { index: open.index };
  return hits.length ? { problem: 'already_done', index: hits[0]!.index } : { problem: 'unknown' };
}

/** Why an implement phase's milestone was not checked off, for its worklog. */
export function matchProblem(r: NoMatch, named: string, record: readonly MilestoneRecord[]): string {
  if (r.problem === 'unnamed') return 'the implement phase named no milestone';
  if (r.problem === 'already_done') {
    const m = record[r.index]!;
    return `"${m.text}" was already checked off${m.cycle !== null ? ` by the implement phase of cycle ${m.cycle}` : ''}`;
  }
  return `no milestone of the plan matches ${JSON.stringify(named)} (the plan's open milestones: ${record.filter((m) => !m.done).map((m) => JSON.stringify(m.text)).join(', ') || 'none'})`;
}

/** Open again the done milestones a reviewer named (same matching as check-offs). */
export function reopenIn(record: readonly MilestoneRecord[], names: readonly string[]): { record: MilestoneRecord[]; reopened: string[] } {
  const want = new Set(names.map(milestoneKey).filter(Boolean));
  const reopened: string[] = [];
  const next = record.map((m) => {
    if (!m.done || !want.has(milestoneKey(m.text))) return m;
    reopened.push(m.text);
    return { text: m.text, done: false, cycle: null, job: null };
  });
  return { record: next, reopened };
}

export function topOpen(record: readonly MilestoneRecord[]): MilestoneRecord | undefined {
  return record.find((m) => !m.done);
}

export function progressOf(record: readonly MilestoneRecord[]): { done: number; total: number } {
  return { done: record.filter((m) => m.done).length, total: record.length };
}

/** How the milestones of a plan note differ from the hub's record, one sentence each (for the
 * worklog); none when only other text differs. Compared by milestone name, not position. */
export function noteDiscrepancies(note: string, record: readonly MilestoneRecord[]): string[] {
  const pool = parseMilestones(note);
  const out: string[] = [];
  for (const r of record) {
    const i = pool.findIndex((n) => milestoneKey(n.text) === milestoneKey(r.text));
    if (i < 0) {
      out.push(`"${r.text}" was removed or reworded`);
      continue;
    }
    const [n] = pool.splice(i, 1);
    if (n!.done && !r.done) out.push(`"${r.text}" was checked, but no implement phase reported it completed`);
    if (!n!.done && r.done) out.push(`"${r.text}" was unchecked, but ${r.cycle !== null ? `the implement phase of cycle ${r.cycle}` : 'an implement phase'} completed it`);
  }
  for (const n of pool) out.push(`"${n.text}" was added`);
  return out;
}
