// What a project name may be: letters, digits and `-_./`, 1..100 characters ("web", "acme/api",
// "q3-migration"). One rule for the tools' zod schemas, JobService.create (batch runs and debates
// pass a project straight to it) and the CLI.
import { z } from 'zod';

export const PROJECT_NAME = /^[A-Za-z0-9._/-]{1,100}$/;

/** Why `name` is not a project name, or undefined when it is one. */
export function projectNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.length > 100) return `it is ${name.length} characters long (at most 100)`;
  const bad = [...name].find((c) => !/[A-Za-z0-9._/-]/.test(c));
  return bad === undefined ? undefined : `${JSON.stringify(bad)} is not allowed`;
}

export const projectNameMessage = (name: string, problem: string): string =>
  `project ${JSON.stringify(name.slice(0, 120))} is not a valid project name (${problem}): use letters, digits, "-", "_", "." and "/", at most 100 characters, e.g. "web" or "acme/api".`;

/** The zod schema of a project name (a fresh one per use: shared zod instances publish as $ref). */
export const projectName = () => z.string().superRefine((v, c) => {
  const p = projectNameProblem(v);
  if (p) c.addIssue({ code: z.ZodIssueCode.custom, message: projectNameMessage(v, p) });
});

/** The statuses a broadcast (message_agent to: "*") may select: agents still to run or running. */
export const BROADCAST_STATUSES = ['running', 'needs_input', 'frozen', 'queued', 'waiting'] as const;
export type BroadcastStatus = (typeof BROADCAST_STATUSES)[number];
