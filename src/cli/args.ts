// Option values checked before anything runs: `--tail abc` or `--limit -1` is a usage error
// (exit 2) naming the option, the bad value and what is accepted.
import { UsageError } from './errors.js';

/** A whole number in [min, max] from `--name value`; undefined when the option was not given. */
export function intOption(name: string, value: string | undefined, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = /^[+]?\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} ${JSON.stringify(value)} is not valid: give a whole number from ${min} to ${max}.`);
  }
  return n;
}

/** One of `allowed` from `--name value`; undefined when not given. */
export function choiceOption<T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} ${JSON.stringify(value)} is not valid: use ${allowed.join(', ')}.`);
  return value as T;
}
