// The CLI's two kinds of failure and their exit codes: a usage error (bad arguments, an
// ambiguous job id, a directory init refuses) exits 2; a runtime failure exits 1. Both print
// one line, never a stack trace (OVERSEER_DEBUG=1 adds it for unexpected errors).
import { CommanderError } from 'commander';
import { InvalidInputError, OverseerError } from '../errors.js';

/** A runtime failure the person can act on (exit 1). */
export class CliError extends Error {}

/** The command line was wrong (exit 2). */
export class UsageError extends Error {}

export const EXIT_RUNTIME = 1;
export const EXIT_USAGE = 2;

/** Exit code and message for anything a command threw; `stack` only for the unexpected. */
export function describeFailure(err: unknown): { code: number; message: string; stack?: string } {
  if (err instanceof CommanderError) {
    // help and --version end with code 0 and have already printed.
    return { code: err.exitCode === 0 ? 0 : EXIT_USAGE, message: '' };
  }
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UsageError || err instanceof InvalidInputError) return { code: EXIT_USAGE, message };
  if (err instanceof CliError || err instanceof OverseerError) return { code: EXIT_RUNTIME, message };
  return { code: EXIT_RUNTIME, message, stack: err instanceof Error ? err.stack : undefined };
}
