// The retry diagnosis (`retry: analyze`): a short `claude -p` run, one turn, no tools, that reads
// the failed attempt's transcript tail and says what to change. Its usage is returned with its
// text so the caller records what it cost against the job it served.
import { loadExeca } from '../lazy.js';
import type { HubContext } from '../services/context.js';
import type { JobRow } from '../store/jobs.js';
import { readTailLines } from '../launch/readTail.js';
import { renderTranscript } from '../launch/claude/transcript.js';
import { oneShotUsage } from '../money/oneShot.js';
import type { RunUsage } from '../money/usageStore.js';

export interface Diagnosis {
  text: string | null;
  /** Undefined when no model run happened (no claude binary, the prompt could not be built). */
  usage?: RunUsage;
}

/** Diagnose attempt `n` of `job` from its transcript at `transcript`. Never throws. */
export async function diagnose(ctx: HubContext, job: JobRow, transcript: string, failureClass?: string, error?: string): Promise<Diagnosis> {
  try {
    const lines = await readTailLines(transcript, 60);
    const prompt = ctx.prompts.render('retry-analysis', {
      prompt: job.prompt.slice(0, 8000),
      failure_class: failureClass ?? 'unknown',
      error: (error ?? '').slice(0, 2000),
      transcript: renderTranscript(lines, 60, { maxChars: 12000, maxFieldChars: 600 }),
    });
    return await runDiagnosis(ctx, job, prompt);
  } catch (err) {
    ctx.log.warn({ err, jobId: job.id }, 'retry diagnosis failed; retrying without it');
    return { text: null };
  }
}

/** Run the diagnosis agent: one turn, no tools, a 2-minute limit; returns its text and usage. */
async function runDiagnosis(ctx: HubContext, job: JobRow, prompt: string): Promise<Diagnosis> {
  const bin = ctx.launchers.claude?.resolveBin();
  if (!bin) return { text: null };
  const { execa } = await loadExeca();
  const args = ['-p', '--output-format', 'json', '--max-turns', '1', '--tools', '', '--no-session-persistence'];
  if (job.model) args.push('--model', job.model);
  const r = await execa(bin, args, { input: prompt, cwd: job.work_dir ?? job.cwd, env: ctx.childEnv, reject: false, timeout: 120_000 });
  const usage = oneShotUsage(r.stdout, job.model ?? undefined);
  try {
    const j = JSON.parse(r.stdout) as { result?: string; is_error?: boolean };
    return { text: j.is_error ? null : (j.result ?? null), usage };
  } catch {
    return { text: null, usage };
  }
}
