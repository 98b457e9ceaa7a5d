// Which calls of a re-executed script are answered from its journal (issue 28 point 4). A run's
// script runs again from the top after a crash, a stop or a resume; every `agent()`, `approve()`
// and `workflow()` call it makes is looked up here before anything starts.
//
// A call is known by what it asks — its kind and canonical arguments — and by how many times the
// run asked exactly that before (the n-th identical call matches the n-th journaled one). So the
// order in which answers arrive, which differs between a live run and a replay, does not matter.
//
// Two modes:
// - `recover` (the same script, continued by a new hub): a finished call is answered with what it
//   returned or threw (the script already went on from there), a running call is attached to its
//   job (the job itself was resumed by the reconcile), anything else runs live.
// - `resume` (resume_run, maybe after an edit): as Claude Code's Workflow does, finished calls are
//   answered until the first call that is new, edited, failed or never finished; that call and
//   every call after it run live, and the run says where it diverged. A journaled workflow()
//   call is not answered as a whole: its nested script runs again (maybe edited) and its own
//   calls are matched. A call whose agent still
//   runs is attached to it, and one that a provider limit refused runs again, both without
//   ending reuse.
//
// Calls made inside a nested `workflow()` carry a scope (the path of workflow calls above them,
// ScriptRuns decides its form): the same prompt at the top and inside a workflow are two calls.

/** The script API's calls, and a bundled script's own privileged ones ("wf.phase": src/scripts/bundled.ts). */
export type ScriptCallKind = 'agent' | 'approve' | 'workflow' | `${string}.${string}`;

export interface JournaledCall {
  /** Issue order within the run (1-based). */
  seq: number;
  kind: ScriptCallKind;
  /** canonicalJson of the arguments. */
  args: string;
  /** '' at the top of the script; inside workflow() calls, their path. */
  scope?: string;
  status: 'running' | 'done' | 'failed';
  /** The provider limiter refused it: not the call's fault. */
  limited?: boolean;
  /** The job that runs or ran it (agent calls). */
  jobId?: string | null;
  /** The person's request that carries it (approve calls). */
  requestId?: string | null;
  /** JSON of what the call returned (done) or of the error it threw (failed). */
  outcome?: string | null;
}

export type ReplayAnswer =
  | { from: 'journal'; entry: JournaledCall }
  /** Still going: an agent's job or an approval's request to wait for again, or a workflow() call whose nested script runs again under the same scope. */
  | { from: 'job'; entry: JournaledCall }
  | { from: 'live'; diverged?: Divergence };

export interface Divergence {
  /** The journaled call that failed (reason `failed`); null for a call the journal does not have. */
  seq: number | null;
  kind: ScriptCallKind;
  /** The call's canonical arguments, to show the person which call it was. */
  args: string;
  reason: 'new_or_edited' | 'failed';
}

/** JSON with object keys sorted, so that `{a, b}` and `{b, a}` are the same call. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJson(x))).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(',')}}`;
}

export class ScriptReplay {
  private readonly byCall = new Map<string, JournaledCall[]>();
  private readonly asked = new Map<string, number>();
  private divergence: Divergence | null = null;

  constructor(journal: readonly JournaledCall[], private readonly mode: 'recover' | 'resume') {
    for (const e of [...journal].sort((a, b) => a.seq - b.seq)) {
      const k = `${e.kind}\u0000${e.scope ?? ''}\u0000${e.args}`;
      const list = this.byCall.get(k);
      if (list) list.push(e);
      else this.byCall.set(k, [e]);
    }
  }

  /** Where a resume stopped reusing the journal (null: it has not, yet). */
  get diverged(): Divergence | null {
    return this.divergence;
  }

  /** The answer for the next call of `kind` with canonical `args` (in `scope`: '' at the top). */
  next(kind: ScriptCallKind, args: string, scope = ''): ReplayAnswer {
    const k = `${kind}\u0000${scope}\u0000${args}`;
    const n = this.asked.get(k) ?? 0;
    this.asked.set(k, n + 1);
    const entry = this.byCall.get(k)?.[n];
    if (this.mode === 'recover') {
      if (!entry) return { from: 'live' };
      if (entry.status === 'running') return attachable(entry) ? { from: 'job', entry } : { from: 'live' };
      return { from: 'journal', entry };
    }
    if (this.divergence) return { from: 'live' };
    // A workflow() call is a container: it runs again, and its own calls decide what is reused.
    if (entry?.kind === 'workflow') return { from: 'job', entry };
    if (entry?.status === 'done') return { from: 'journal', entry };
    if (entry?.status === 'running' && attachable(entry)) return { from: 'job', entry };
    if (entry && (entry.status === 'running' || entry.limited)) return { from: 'live' };
    this.divergence = { seq: entry?.seq ?? null, kind, args, reason: !entry ? 'new_or_edited' : 'failed' };
    return { from: 'live', diverged: this.divergence };
  }
}

/** A running call the script can wait for again: its agent's job, its approval's request, or a workflow() call (its nested calls are in the journal). */
function attachable(e: JournaledCall): boolean {
  return Boolean(e.jobId) || Boolean(e.requestId) || e.kind === 'workflow';
}
