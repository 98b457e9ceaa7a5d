// `overseer doctor [--json]`: what works and what is missing, in plain words — node, git, the
// state directory and database, a running hub, the claude and codex CLIs with their endpoints
// and credentials, gh. Exit code 1 when something Claude children need is broken; Codex and gh
// problems are warnings. Checks live in src/doctor/ and take injectable exec/fetch/env.
import { doctorDeps, doctorOk, renderText, runChecks } from '../doctor/run.js';
import { runWorkerChecks } from '../doctor/worker.js';
import { findClis } from '../worker/clis.js';
import type { Check, DoctorDeps } from '../doctor/types.js';

export interface DoctorOptions {
  json?: boolean;
  /** The checks of a worker host (`overseer worker`): database and schema, clones, agent CLIs, confinement. */
  worker?: boolean;
}

/** Where output goes, what environment/cwd to examine, and (for tests) the exec/fetch to use. */
export interface DoctorIo extends Partial<DoctorDeps> {
  out?: (text: string) => void;
  /** Receives 1 when a check failed (default: sets process.exitCode). */
  setExitCode?: (code: number) => void;
}

export interface DoctorReport {
  ok: boolean;
  checks: Check[];
}

/** Run every check against `io` (default: this process's environment, cwd and machine). */
export async function doctorReport(io: Partial<DoctorDeps> = {}, o: { worker?: boolean } = {}): Promise<DoctorReport> {
  const deps = doctorDeps(io);
  const checks = o.worker ? await runWorkerChecks(deps, findClis) : await runChecks(deps);
  return { ok: doctorOk(checks), checks };
}

/** The `overseer doctor` command: print the report (text or --json), exit code 1 when not ok. */
export async function runDoctor(opts: DoctorOptions = {}, io: DoctorIo = {}): Promise<void> {
  const { out = (t: string) => void process.stdout.write(t), setExitCode = (c: number) => { process.exitCode = c; }, ...over } = io;
  const report = await doctorReport(over, { worker: opts.worker });
  out(opts.json ? `${JSON.stringify(report, null, 2)}\n` : renderText(report.checks, { worker: opts.worker }));
  if (!report.ok) setExitCode(1);
}
