// Bundled scripts: scripts the hub ships and starts itself (the implement/review workflow is
// src/scripts/bundled/implement-review.js, started by start_workflow), run by the same engine as
// a lead's run_script (./runs.ts) — one orchestrator of multi-step work, not two. A bundled script
// may make privileged calls of its own (`hub.call("wf.phase", …)`) that a lead's script cannot:
// each is journaled like an agent() call and answered by the service that owns the script. The
// source is read from the package (dist/scripts/bundled/, copied there by the build) and stored
// with the run, so a run continues after an upgrade with the script it started with.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReplayAnswer } from '../domain/scriptReplay.js';
import { ScriptCallError, type Json } from './sandbox.js';

/** One privileged call of a bundled script, as its owner answers it. */
export interface BundledCall {
  runId: string;
  kind: string;
  args: Json[];
  /** canonicalJson(args): the journal's args_json of this call. */
  key: string;
  /** What the run's journal says of this call: `job` (running, carried by a job: wait for it again) or `live`. */
  answer: Exclude<ReplayAnswer, { from: 'journal' }>;
  /** The script's current phase() title. */
  phase: string | null;
  /** Aborted when the run is cancelled or the hub stops. */
  signal: AbortSignal;
}

export interface BundledScript {
  /** The name a service starts it by (ScriptRuns.bundledRun) and the run's `name`. */
  name: string;
  source: string;
  /** Its privileged calls by kind ("wf.phase"): only a run of this script may make them. */
  calls: Record<string, (c: BundledCall) => Promise<Json>>;
}

export class BundledScripts {
  private readonly byName = new Map<string, BundledScript>();
  private readonly owner = new Map<string, string>();

  constructor(scripts: readonly BundledScript[]) {
    for (const s of scripts) {
      this.byName.set(s.name, s);
      for (const k of Object.keys(s.calls)) this.owner.set(k, s.name);
    }
  }

  /** A privileged call of some bundled script. */
  owns(kind: string): boolean {
    return this.owner.has(kind);
  }

  source(name: string): string {
    const s = this.byName.get(name);
    if (!s) throw new Error(`no bundled script ${JSON.stringify(name)}`);
    return s.source;
  }

  /** Answers a privileged call of the run of bundled script `bundled` (null: a lead's script, refused). */
  call(bundled: string | null, c: BundledCall): Promise<Json> {
    const name = this.owner.get(c.kind);
    const fn = name !== undefined && name === bundled ? this.byName.get(name)?.calls[c.kind] : undefined;
    if (!fn) return Promise.reject(new ScriptCallError('NotSupported', `${c.kind} is a call of the hub's bundled script ${name ?? '(none)'}; a script cannot make it`));
    return fn(c);
  }
}

/** No bundled scripts (tests of the script engine alone). */
export const NO_BUNDLED = new BundledScripts([]);

/** The source of a bundled script shipped next to this module (src/scripts/bundled/ or dist/scripts/bundled/). */
export function bundledSource(file: string): string {
  return readFileSync(join(dirname(fileURLToPath(import.meta.url)), 'bundled', file), 'utf8');
}
