// `overseer doctor [--json]`: what works and what is missing, in plain words — node, git, the
// state directory and database, a running hub, the claude and codex CLIs with their endpoints
// and credentials, gh. Exit code 1 when something Claude children need is broken; Codex and gh
// problems are warnings. Checks live in src/doctor/ and take injectable exec/fetch/env.
import { doctorDeps, doctorOk, renderText, runChecks } from '../doctor/run.js';
import type { Check, DoctorDeps } from '../doctor/types.js';

export interface DoctorOptions {
  json?: boolean;
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

export async function runDoctor(opts: DoctorOptions = {}, io: DoctorIo = {}): Promise<DoctorReport> {
  const { out = (t: string) => void process.stdout.write(t), setExitCode = (c: number) => { process.exitCode = c; }, ...over } = io;
  const checks = await runChecks(doctorDeps(over));
  const ok = doctorOk(checks);
  out(opts.json ? `${JSON.stringify({ ok, checks }, null, 2)}\n` : renderText(checks));
  if (!ok) setExitCode(1);
  return { ok, checks };
}
