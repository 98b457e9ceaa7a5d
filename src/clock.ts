// Injected time and id sources, so the core can be driven deterministically in tests.
import { randomBytes, randomUUID } from 'node:crypto';

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export interface IdSource {
  /** A short, unique, human-typable job id such as `j-7f3a9c`. */
  jobId(): string;
  /** A fresh UUID (Claude session ids must be UUIDs). */
  uuid(): string;
  /** A bearer token with 256 bits of entropy. */
  token(): string;
}

export const randomIds: IdSource = {
  jobId: () => `j-${randomBytes(4).toString('hex')}`,
  uuid: () => randomUUID(),
  token: () => randomBytes(32).toString('base64url'),
};

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
