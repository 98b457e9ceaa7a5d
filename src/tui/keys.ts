// Keys of the list screen → what to do. Pure: the row is the one shown selected; an action
// carries that row's ids (never an index), so it acts on exactly what the person saw.
import type { Key } from 'ink';
import { targetOf, type Selection, type ViewRow } from './rows.js';

/** The key flags the mapping reads (a subset of ink's Key). */
export type Keys = Pick<Key, 'upArrow' | 'downArrow' | 'pageUp' | 'pageDown' | 'home' | 'end' | 'return' | 'escape' | 'ctrl'>;

export interface JobRef { job_id: string; title: string }
export interface RequestRef { request_id: string; job_id: string | null; title: string; kind: string }
export interface RunRef { run_id: string; title: string }

export type Action =
  | { kind: 'quit' }
  | { kind: 'move'; delta: number }
  | { kind: 'page'; dir: 1 | -1 }
  | { kind: 'help' }
  | { kind: 'filter' }
  | { kind: 'clear_filter' }
  | { kind: 'toggle_locks' }
  /** The crew brief, whole, full-screen (the header shows its first line). */
  | { kind: 'brief' }
  | { kind: 'approve' | 'reject' | 'answer'; req: RequestRef }
  | { kind: 'message' | 'pause' | 'stop' | 'resume' | 'cancel' | 'follow' | 'diff'; job: JobRef }
  /** READY TO SHIP: merge the branch through the hub's merge queue (after y/n), or take it out of the lane keeping the branch. */
  | { kind: 'ship' | 'dismiss' | 'send_back'; job: JobRef; branch: string }
  /** Take over the agent on this terminal (what `overseer attach` does): the watch leaves its screen and comes back after. */
  | { kind: 'attach'; job: JobRef }
  /** A script run: show or hide its calls and log; cancel it; pause or unpause it; cancel one call. */
  | { kind: 'expand'; run: RunRef }
  | { kind: 'run_cancel'; run: RunRef }
  | { kind: 'run_pause'; run: RunRef; paused: boolean }
  | { kind: 'call_cancel'; run: RunRef; seq: number; what: string }
  /** The key means something, but not on this row: say why. */
  | { kind: 'refuse'; message: string }
  | { kind: 'none' };

/** Keys that change something in the crew (refused right after the selection moved by itself). */
export const ACTING = new Set<Action['kind']>(['approve', 'reject', 'answer', 'message', 'pause', 'stop', 'resume', 'cancel', 'run_cancel', 'run_pause', 'call_cancel', 'ship', 'dismiss', 'send_back', 'attach']);

/** How long after the selection moved by itself acting keys are refused. */
export const SETTLE_MS = 400;

/** The help screen: every key and what it does. */
export const KEY_HELP: readonly [string, string][] = [
  ['↑ ↓  j k', 'move the cursor (PgUp PgDn, Home End / g G)'],
  ['a', 'approve the selected request'],
  ['r', 'reject the selected request'],
  ['enter', 'answer a question; on a job: follow its log'],
  ['m', 'message the selected agent'],
  ['p', 'pause the agent in place (freeze)'],
  ['P', 'pause --stop: end its process, keep the session'],
  ['u', 'resume a frozen, stopped or ended agent'],
  ['c', 'cancel the agent and its sub-agents (asks y/n)'],
  ['f', 'follow its log full-screen (q or Esc back)'],
  ['d', 'its diff against the commit it started from'],
  ['enter', 'on a script run: show or hide its calls and log'],
  ['p  u', 'on a script run: pause it (no new call starts) / unpause it'],
  ['c', 'on a script run: cancel it; on one of its calls: cancel that call (asks y/n)'],
  ['s', 'in READY TO SHIP: ship the branch — merge it through the merge queue, its checks run (asks y/n)'],
  ['x', 'in READY TO SHIP: dismiss it — out of the lane, its branch kept (asks y/n)'],
  ['t', 'in READY TO SHIP: take over its agent here (overseer attach): its session in the interactive CLI; watch comes back when you exit it'],
  ['b', 'in READY TO SHIP, after a failed merge: send it back to its agent with the failure (asks y/n)'],
  ['↑ ↓', 'on a request: its plan (rationale, resources, risks, rollback) and options show under it'],
  ['l', 'show or hide locks (holders and waiters)'],
  ['i', 'the crew brief, whole (the header shows its first line)'],
  ['/', 'filter: words, label:x, status:y (Esc clears)'],
  ['?', 'this help'],
  ['q', 'quit'],
];

const JOB_VERBS: Record<string, 'message' | 'pause' | 'stop' | 'resume' | 'cancel' | 'follow' | 'diff'> = {
  m: 'message', p: 'pause', P: 'stop', u: 'resume', c: 'cancel', f: 'follow', d: 'diff',
};

/** The action of a key press on the list screen, given the selected row (if any). */
export function keyAction(input: string, key: Keys, row: ViewRow | undefined): Action {
  if (input === 'q' || (key.ctrl && input === 'c')) return { kind: 'quit' };
  if (key.upArrow || input === 'k') return { kind: 'move', delta: -1 };
  if (key.downArrow || input === 'j') return { kind: 'move', delta: 1 };
  if (key.pageUp) return { kind: 'page', dir: -1 };
  if (key.pageDown) return { kind: 'page', dir: 1 };
  if (key.home || input === 'g') return { kind: 'move', delta: -Infinity };
  if (key.end || input === 'G') return { kind: 'move', delta: Infinity };
  if (input === '?') return { kind: 'help' };
  if (input === '/') return { kind: 'filter' };
  if (key.escape) return { kind: 'clear_filter' };
  if (input === 'l') return { kind: 'toggle_locks' };
  if (input === 'i') return { kind: 'brief' };

  if (row?.kind === 'run' || row?.kind === 'call') {
    const a = runKey(input, key, row);
    if (a) return a;
  }
  if (input === 's' || input === 'x' || input === 't' || input === 'b') return shipKey(input, row);
  const t = row ? targetOf(row) : undefined;
  const isAnswerKey = input === 'a' || input === 'r' || key.return;
  if (!isAnswerKey && !(input in JOB_VERBS)) return { kind: 'none' };
  if (!t) return { kind: 'refuse', message: 'nothing selected: move the cursor onto a row first (↑ ↓)' };

  if (input === 'a' || input === 'r' || (key.return && t.request_kind === 'question')) {
    if (!t.request_id || !t.request_kind) return { kind: 'refuse', message: `${input === 'a' ? 'a approves' : 'r rejects'} a request: select one in NEEDS YOU` };
    const req: RequestRef = { request_id: t.request_id, job_id: t.job_id, title: t.title, kind: t.request_kind };
    if (t.request_kind === 'question') {
      if (input === 'a' || input === 'r') return { kind: 'refuse', message: `${t.request_id} is a question: press enter to answer it` };
      return { kind: 'answer', req };
    }
    return { kind: input === 'a' ? 'approve' : 'reject', req };
  }
  const verb = key.return ? 'follow' : JOB_VERBS[input]!;
  if (!t.job_id) return { kind: 'refuse', message: `"${t.title}" has no agent to ${verb === 'stop' ? 'pause' : verb}` };
  return { kind: verb, job: { job_id: t.job_id, title: t.title } };
}

/** Keys on a script run, or on one of its calls (undefined: the key means what it means on a job). */
function runKey(input: string, key: Keys, row: Extract<ViewRow, { kind: 'run' | 'call' }>): Action | undefined {
  const run: RunRef = { run_id: row.run.run_id, title: row.run.title };
  const ended = row.run.status !== 'running';
  if (row.kind === 'run') {
    if (key.return) return { kind: 'expand', run };
    if (input === 'c' || input === 'p' || input === 'u') {
      if (ended) return { kind: 'refuse', message: `run ${run.run_id} has ended (${row.run.status}): nothing to ${input === 'c' ? 'cancel' : input === 'p' ? 'pause' : 'unpause'}` };
      if (input === 'c') return { kind: 'run_cancel', run };
      return { kind: 'run_pause', run, paused: input === 'p' };
    }
    if (input in JOB_VERBS) return { kind: 'refuse', message: `a script run is not an agent: enter shows its calls; select one to act on its agent` };
    return undefined;
  }
  if (input !== 'c') return undefined;
  const c = row.call;
  const what = `call #${c.seq} (${c.label ?? c.job_title ?? c.kind})`;
  if (ended) return { kind: 'refuse', message: `run ${run.run_id} has ended (${row.run.status}): nothing to cancel` };
  if (c.status !== 'running') return { kind: 'refuse', message: `${what} has ended (${c.status}): nothing to cancel` };
  return { kind: 'call_cancel', run, seq: c.seq, what };
}

/** s, x, t and b: verbs of a READY TO SHIP row. */
function shipKey(input: 's' | 'x' | 't' | 'b', row: ViewRow | undefined): Action {
  const verb = input === 's' ? 'ships' : input === 'x' ? 'dismisses' : input === 't' ? 'attaches to' : 'sends back';
  if (row?.kind !== 'ship') return { kind: 'refuse', message: `${input} ${verb} a finished branch: select one in READY TO SHIP` };
  const s = row.item;
  const job: JobRef = { job_id: s.job_id, title: s.title };
  if (input === 't') return { kind: 'attach', job };
  if (input === 'x') return { kind: 'dismiss', job, branch: s.branch };
  if (input === 'b') {
    if (!s.send_back?.sendable) return { kind: 'refuse', message: `not sent back: "${s.title}" (${s.job_id}) has no failed merge to send back${s.send_back ? ` (its send-back is ${s.send_back.status})` : ''}; ship it first (s): a merge whose checks fail or that conflicts can go back to its agent` };
    return { kind: 'send_back', job, branch: s.branch };
  }
  if (s.checks === 'failed') return { kind: 'refuse', message: `not shipped: the checks of "${s.title}" (${s.job_id}) failed${s.check_detail ? ` (${s.check_detail})` : ''}; a branch whose checks did not pass is never merged` };
  return { kind: 'ship', job, branch: s.branch };
}

/** Refuses an acting key pressed right after the selection moved by itself (its row vanished),
 * so a key meant for the vanished row never lands on its neighbour. */
export function guard(a: Action, sel: Selection, now: number): Action {
  if (!ACTING.has(a.kind) || sel.movedAt === null || now - sel.movedAt >= SETTLE_MS) return a;
  return { kind: 'refuse', message: 'the row you had selected just went away and the cursor moved: look at the selection and press the key again' };
}
